// Assembles the two published packages from the build in dist/: each package folder gets only the files it ships.
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What each package gets from the build, as [from (repo), to (package folder)]. The CLI's launcher is kept in
 * packages/mcpgen-cli/bin itself: npm links a workspace's bin at install time, before any build.
 */
export const LAYOUT = {
  mcpgen: [
    ["dist/runtime", "dist/runtime"],
    ["dist/generated", "dist/generated"],
  ],
  "mcpgen-cli": [
    ["dist/generator", "dist/generator"],
    ["schema", "schema"],
    ["templates", "templates"],
  ],
};

for (const [name, entries] of Object.entries(LAYOUT)) {
  const dir = join(root, "packages", name);
  for (const [from, to] of entries) {
    const source = join(root, from);
    if (!existsSync(source)) throw new Error(`${from} is missing: run tsc -p tsconfig.build.json first`);
    // Replaced whole, so a file deleted from the sources does not linger in the package.
    rmSync(join(dir, to), { recursive: true, force: true });
    cpSync(source, join(dir, to), { recursive: true });
  }
}
