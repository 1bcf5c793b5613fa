// What a published tarball must not hold, and the packages this repo publishes: shared by bench/package.js and the package tests.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder of each published package, by name. */
export const PUBLISHED = {
  mcpgen: join(dirname(fileURLToPath(import.meta.url)), "mcpgen"),
  "mcpgen-cli": join(dirname(fileURLToPath(import.meta.url)), "mcpgen-cli"),
};

// Folder names and file suffixes that mean "only this repository needs it": tests, examples, fixtures, benchmarks, scripts.
const REPO_ONLY_DIR =
  /(^|\/)(tests?|__tests__|spec|examples?|fixtures?|bench(marks?)?|scripts?|conformance|\.ci|\.tmp)(\/|$)/i;
const REPO_ONLY_FILE = /\.(test|spec|bench)\.[cm]?[jt]sx?$|(^|\/)(vitest|jest|tsconfig)[^/]*$/i;

/** Whether a path inside a tarball (relative to its package folder) looks like a test, example, fixture or repo script. */
export function isRepoOnlyFile(path) {
  const p = path.split("\\").join("/");
  return REPO_ONLY_DIR.test(p) || REPO_ONLY_FILE.test(p);
}
