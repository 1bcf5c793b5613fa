// Where things are for tests: the repository root, the vendored spec files, fresh temporary directories.
import { mkdtempSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The official spec files the tests read, vendored (see its SOURCE.md for the upstream revision). */
export const referenceDir = join(repoRoot, "test/fixtures/reference");

/** A fresh directory under .tmp/ (inside the project, so generated code resolves the project's runtime). */
export function tempDir(prefix: string): string {
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  return mkdtempSync(join(repoRoot, ".tmp", `${prefix}-`));
}
