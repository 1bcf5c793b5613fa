// Shared test helpers: paths, running the CLI as a real process, temporary directories inside the project.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The official spec files the tests read, vendored (see its SOURCE.md for the upstream revision). */
export const referenceDir = join(repoRoot, "test/fixtures/reference");

/** A fresh directory under .tmp/ (inside the project, so generated code resolves the project's runtime). */
export function tempDir(prefix: string): string {
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  return mkdtempSync(join(repoRoot, ".tmp", `${prefix}-`));
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mcpgen` (the compiled CLI) as a separate process. */
export function runCli(args: string[], cwd = repoRoot): CliResult {
  const r = spawnSync(process.execPath, [join(repoRoot, "bin/mcpgen.js"), ...args], { cwd, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
