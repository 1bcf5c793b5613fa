// What the tool-catalogue tests share: the everything server's command line, consumer projects, and the compiler.
import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PUBLISHED } from "../../packages/published.mjs";
import type { CliResult } from "../kit/cli.js";
import { main } from "../../generator/cli.js";
import { repoRoot, tempDir } from "../kit/paths.js";

/** @modelcontextprotocol/server-everything over stdio, as a --server command line. */
export const everythingBin = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);
export const EVERYTHING = `${JSON.stringify(process.execPath)} ${JSON.stringify(everythingBin)} stdio`;

/**
 * The strictest settings an app may compile the bindings with, on top of `strict`. The runtime package's own
 * declarations are skipped (skipLibCheck): they are checked by the package tests, not here.
 */
const COMPILER_OPTIONS = {
  target: "es2022",
  module: "nodenext",
  moduleResolution: "nodenext",
  strict: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  noImplicitReturns: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
  types: ["node"],
  outDir: "dist",
  rootDir: ".",
};

/** A project of an app's: `mcpgen` installed (the assembled runtime package), ESM, a strict tsconfig. */
export function consumerProject(prefix: string): string {
  const dir = tempDir(prefix);
  mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
  symlinkSync(PUBLISHED.mcpgen, join(dir, "node_modules/mcpgen"), "dir");
  symlinkSync(join(repoRoot, "node_modules/@types/node"), join(dir, "node_modules/@types/node"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  return dir;
}

/** Writes a tsconfig naming `files` and runs tsc on it (no emit with `noEmit`; `more` adds compiler options). */
export function tsc(
  dir: string,
  name: string,
  files: string[],
  noEmit = false,
  more: Record<string, unknown> = {},
): Promise<CliResult> {
  writeFileSync(
    join(dir, `tsconfig.${name}.json`),
    JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, noEmit, ...more }, files }, null, 2),
  );
  return run(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${name}.json`], dir);
}

/** Runs a program to its end without blocking this process. */
export function run(command: string, args: string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Runs the CLI in this process with `dir` as the working directory (faster than a child process, and its exit code
 * as the CLI reports it); the process's own exit code is left as it was.
 */
export async function cliIn(dir: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const code = await main(["node", "mcpgen", ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    process.chdir(cwd);
    process.exitCode = 0;
  }
}
