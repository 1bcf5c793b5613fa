// Running the compiled `mcpgen` CLI as a separate process.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

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
