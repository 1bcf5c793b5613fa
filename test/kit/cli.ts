// Running the compiled `mcpgen` CLI as a separate process.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The repository's launcher of the compiled CLI. */
export const REPO_LAUNCHER = join(repoRoot, "bin/mcpgen.js");

/** Runs `mcpgen` (the compiled CLI) as a separate process; `launcher` picks another bin, e.g. the package's. */
export function runCli(args: string[], cwd = repoRoot, launcher = REPO_LAUNCHER): CliResult {
  const r = spawnSync(process.execPath, [launcher, ...args], { cwd, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs `mcpgen` without blocking this process, for a CLI that talks to a server the test serves in process (a
 * spawnSync would stop that server from answering).
 */
export function runCliAsync(args: string[], cwd = repoRoot): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, "bin/mcpgen.js"), ...args], { cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}
