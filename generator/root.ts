// Where the project lies on disk, both when run from generator/ sources and from dist/generator/.
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The project root: schema/, templates/ and the runtime are found from it. */
export const projectRoot = resolve(here, basename(dirname(here)) === "dist" ? "../.." : "..");
