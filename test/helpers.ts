// Shared test helpers: paths, running the CLI as a real process, temporary directories inside the project, following a child's output.
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

/**
 * Collects a stream's text; the function returned waits for the next match of a pattern after the previous
 * match (20 s hang guard, failing with everything read so far).
 */
export function follow(stream: NodeJS.ReadableStream): (pattern: RegExp) => Promise<string> {
  let text = "";
  let from = 0;
  const waiters: (() => void)[] = [];
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    waiters.splice(0).forEach((w) => w());
  });
  return (pattern) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in:\n${text}`)), 20_000);
      const check = (): void => {
        const rest = text.slice(from);
        const m = pattern.exec(rest);
        if (m) {
          from += m.index + m[0].length;
          clearTimeout(timer);
          resolve(m[0]);
        } else waiters.push(check);
      };
      check();
    });
}
