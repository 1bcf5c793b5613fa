// Real child processes: stdio client framing, clean env, close escalation, end-to-end over stdio, and no leaked handles.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../runtime/rpc/jsonrpc.js";
import { FrameTooLargeError, InvalidUtf8Error, StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { clientSession } from "./helpers.js";
import { sleep, until } from "../kit/timing.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const rawWriter = join(fixtures, "raw-writer.mjs");
const stdioServer = join(fixtures, "stdio-server.mjs");
const buildDir = join(root, ".tmp", `runtime-test-build-${process.pid}`);

// The fixtures run under plain node, so they need the runtime compiled; build just runtime/ into a private dir.
beforeAll(async () => {
  mkdirSync(buildDir, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [
        join(root, "node_modules", "typescript", "bin", "tsc"),
        "--outDir",
        buildDir,
        "--rootDir",
        root,
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--strict",
        "--skipLibCheck",
        "--types",
        "node",
        "--verbatimModuleSyntax",
        join(root, "runtime", "index.ts"),
      ],
      { cwd: root },
      (error, stdout, stderr) => (error ? reject(new Error(`tsc failed: ${stdout}${stderr}`)) : resolve()),
    );
  });
}, 60_000);

afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

function collect(transport: StdioClientTransport) {
  const messages: unknown[] = [];
  const malformed: Error[] = [];
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  transport.onmessage = (m) => messages.push(m);
  transport.onmalformed = (e) => malformed.push(e);
  return { messages, malformed, closed };
}

describe("StdioClientTransport against a real child", () => {
  it("reassembles partial lines and multi-message chunks, handles CRLF, oversize lines and bad UTF-8, and fires onclose on exit", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [rawWriter, "framing"],
      maxLineBytes: 1024,
    });
    const { messages, malformed, closed } = collect(transport);
    await transport.start();
    await closed;
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "a", params: { n: 1 } },
      { jsonrpc: "2.0", method: "b" },
      { jsonrpc: "2.0", method: "c" },
      { jsonrpc: "2.0", method: "d" },
      { jsonrpc: "2.0", method: "e", params: { s: "é\ufffd" } },
    ]);
    expect(malformed).toHaveLength(3);
    expect(malformed[0]).toBeInstanceOf(FrameTooLargeError);
    expect(malformed[1]).toBeInstanceOf(InvalidUtf8Error);
    expect(malformed[2]).toBeInstanceOf(SyntaxError);
    await expect(transport.send({ jsonrpc: "2.0", method: "late" })).rejects.toThrow(/closed/);
  });

  it("starts the child with a clean environment plus what the caller passes", async () => {
    process.env.MCPGEN_TEST_SECRET = "do-not-leak";
    try {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [rawWriter, "env"],
        env: { EXTRA_VAR: "yes" },
      });
      const { messages, closed } = collect(transport);
      await transport.start();
      await until(() => messages.length > 0, 25_000);
      const env = (messages[0] as { params: { env: Record<string, string> } }).params.env;
      expect(env.EXTRA_VAR).toBe("yes");
      expect(env.MCPGEN_TEST_SECRET).toBeUndefined();
      expect(env.PATH).toBe(process.env.PATH);
      const allowed = new Set(["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "EXTRA_VAR"]);
      // Node or the OS may add a few of its own (e.g. on some systems LC_CTYPE); none of ours beyond the list.
      expect(Object.keys(env).filter((k) => !allowed.has(k) && k in process.env)).toEqual([]);
      await transport.close();
      await closed;
    } finally {
      delete process.env.MCPGEN_TEST_SECRET;
    }
  });

  it("close() kills a child that ignores end of stdin and SIGTERM", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [rawWriter, "stubborn"],
      closeTimeoutMs: 100,
    });
    const { messages, closed } = collect(transport);
    await transport.start();
    await until(() => messages.length > 0, 25_000);
    const pid = transport.pid!;
    await transport.close();
    await closed;
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("rejects start() when the command does not exist", async () => {
    const transport = new StdioClientTransport({ command: join(fixtures, "no-such-binary") });
    await expect(transport.start()).rejects.toThrow(/ENOENT/);
  });
});

describe("end to end over stdio", () => {
  it("initializes, calls a tool with progress, pings, and closes a real server process", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [stdioServer, buildDir],
      env: { FIXTURE_FLAG: "passed-through" },
      stderr: "pipe",
    });
    let stderr = "";
    const client = clientSession({ clientInfo: { name: "t", version: "1" } });
    let closed = false;
    client.onclose = () => (closed = true);
    await client.connect(transport);
    transport.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    expect(client.serverInfo).toEqual({ name: "fixture", version: "1.0.0" });
    expect(client.protocolVersion).toBe("2025-11-25");
    const progress: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "world" },
      { onProgress: (p) => progress.push(p.progress) },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "hello world" }], env: "passed-through" });
    expect(progress).toEqual([1, 2, 3]);
    expect(await client.request("ping", undefined)).toEqual({});
    const invalid = await client.request("tools/call", { name: 42 } as never).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: ErrorCode.InvalidParams });
    await client.close();
    expect(closed).toBe(true);
    expect(stderr).toContain("served world");
  });

  it("polls for quick replies when this process has two or more cores, and not when busyPollMicros is 0", async () => {
    const rounds = async (busyPollMicros: number | undefined) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [stdioServer, buildDir],
        busyPollMicros,
      });
      const client = clientSession({ clientInfo: { name: "t", version: "1" } });
      await client.connect(transport);
      // 600: even if a cold start or a loaded machine backs polling off, it is retried every 32 sends after warm-up.
      for (let i = 0; i < 600; i++) expect(await client.request("ping", undefined)).toEqual({});
      await client.close();
      return transport.busyPoll;
    };
    const polled = await rounds(undefined);
    if (availableParallelism() >= 2) {
      expect(polled.enabled).toBe(false); // stopped by close
      expect(polled.hits).toBeGreaterThan(0);
    } else {
      expect(polled.hits + polled.misses).toBe(0);
    }
    const off = await rounds(0);
    expect([off.hits, off.misses]).toEqual([0, 0]);
  });

  it("the server process answers raw framing problems with -32700/-32600 and keeps serving", async () => {
    const child = spawn(process.execPath, [stdioServer, buildDir], { stdio: ["pipe", "pipe", "inherit"] });
    const replies: Record<string, unknown>[] = [];
    let buffered = "";
    child.stdout.on("data", (c: Buffer) => {
      buffered += c.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        replies.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    });
    child.stdin.write('{"jsonrpc":"2.0","id":0,"method":"ping"}\r\n{"jsonrpc":"2.0","id":1,');
    await sleep(20);
    child.stdin.write('"method":"ping"}\n');
    child.stdin.write(Buffer.from([0xff, 0x0a]));
    child.stdin.write("{]\n");
    child.stdin.write('{"jsonrpc":"2.0","id":"x"}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":"last","method":"ping"}\n');
    let gone = false;
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => ((gone = true), resolve(code))));
    await until(() => replies.length >= 6 || gone, 25_000);
    child.stdin.end();
    // The server exits on its own once stdin ends.
    expect(await exited).toBe(0);
    expect(replies).toEqual(
      expect.arrayContaining([
        { jsonrpc: "2.0", id: 0, result: {} },
        { jsonrpc: "2.0", id: 1, result: {} },
        {
          jsonrpc: "2.0",
          error: { code: ErrorCode.ParseError, message: "Parse error", data: "Message is not valid UTF-8" },
        },
        { jsonrpc: "2.0", error: { code: ErrorCode.ParseError, message: "Parse error", data: expect.any(String) } },
        { jsonrpc: "2.0", id: "x", error: { code: ErrorCode.InvalidRequest, message: "Invalid Request" } },
        { jsonrpc: "2.0", id: "last", result: {} },
      ]),
    );
    expect(replies).toHaveLength(6);
  });
});

describe("no leaked handles", () => {
  it("a process that uses the runtime and closes exits by itself", async () => {
    const started = Date.now();
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = execFile(
          process.execPath,
          [join(fixtures, "leak-check.mjs"), buildDir, stdioServer],
          { timeout: 8000, killSignal: "SIGKILL" },
          (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
        );
      },
    );
    expect(stderr).toBe("");
    expect(stdout).toBe("done\n");
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(7000);
  });
});
