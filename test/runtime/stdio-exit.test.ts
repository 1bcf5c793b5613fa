// What a stdio client learns from a server process that dies or misbehaves: exit code or signal, its last stderr lines, stray stdout lines.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConnectionClosedError, ProcessExitedError } from "../../runtime/rpc/errors.js";
import { Session } from "../../runtime/rpc/session/session.js";
import {
  InvalidJsonLineError,
  LineTail,
  StdioClientTransport,
  type StdioClientTransportOptions,
} from "../../runtime/transports/stdio/stdio.js";
import { until } from "../kit/timing.js";
import { session, clientSession } from "./helpers.js";

const fixture = join(fileURLToPath(new URL("./fixtures/", import.meta.url)), "failing-server.mjs");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A client Session over a child running the fixture in `mode`; its onerror reports are collected. */
async function spawnFixture(mode: string, options: Partial<StdioClientTransportOptions> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fixture, mode],
    stderr: "ignore",
    ...options,
  });
  const client = session("client");
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { transport, client, errors };
}

const steps = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `starting step ${from + i}`);
/** What the crash fixture writes to stderr, in full, and the last 20 lines of it (the default tail). */
const crashStderr = [...steps(1, 30), "fatal: DATABASE_URL is not set", "no trailing newline on the last words"];
const crashTail = crashStderr.slice(-20);

describe("a stdio server that exits before the client closes", () => {
  it.each(["pipe", "inherit", "ignore"] as const)(
    "rejects pending calls with its exit code and last stderr lines, and stderr still goes where %s says",
    async (mode) => {
      let passed = "";
      if (mode === "inherit") {
        vi.spyOn(process.stderr, "write").mockImplementation(
          (chunk: string | Uint8Array) => ((passed += String(chunk)), true),
        );
      }
      const { transport, client } = await spawnFixture("crash", { stderr: mode });
      if (mode === "pipe") transport.stderr!.on("data", (chunk: Buffer) => (passed += chunk.toString()));
      const error = await client.request("ping", undefined).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProcessExitedError);
      expect(error).toBeInstanceOf(ConnectionClosedError);
      const exited = error as ProcessExitedError;
      expect({ exitCode: exited.exitCode, signal: exited.signal, stderrTail: exited.stderrTail }).toEqual({
        exitCode: 3,
        signal: null,
        stderrTail: crashTail,
      });
      expect(exited.data).toEqual({ exitCode: 3, signal: null, stderrTail: crashTail });
      expect(exited.message).toMatch(
        /^Server process exited with code 3 before the connection was closed; last stderr lines:\n/,
      );
      expect(exited.message).toContain("  fatal: DATABASE_URL is not set\n  no trailing newline on the last words");
      expect(transport.closeError).toBe(error);
      expect(passed).toBe(mode === "ignore" ? "" : crashStderr.join("\n"));
    },
  );

  it("fails connect() with the same error when it dies at initialize", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixture, "crash"],
      stderr: "ignore",
    });
    const client = clientSession({ clientInfo: { name: "c", version: "1" } });
    const error = await client.connect(transport).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProcessExitedError);
    expect((error as ProcessExitedError).message).toContain("fatal: DATABASE_URL is not set");
  });

  it("says which signal killed it (SIGKILL)", async () => {
    const { transport, client } = await spawnFixture("hang");
    await until(() => transport.stderrTail.length > 0, 10_000);
    const call = client.request("ping", undefined).catch((e: unknown) => e);
    process.kill(transport.pid!, "SIGKILL");
    const error = (await call) as ProcessExitedError;
    expect(error).toBeInstanceOf(ProcessExitedError);
    expect({ exitCode: error.exitCode, signal: error.signal, stderrTail: error.stderrTail }).toEqual({
      exitCode: null,
      signal: "SIGKILL",
      stderrTail: ["about to hang"],
    });
    expect(error.message).toBe(
      "Server process was killed by SIGKILL before the connection was closed; last stderr lines:\n  about to hang",
    );
  });

  it("is not what a close() by the client reports", async () => {
    const { transport, client } = await spawnFixture("hang");
    const call = client.request("ping", undefined).catch((e: unknown) => e);
    await until(() => transport.stderrTail.length > 0, 10_000);
    await client.close();
    const error = await call;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).not.toBeInstanceOf(ProcessExitedError);
    expect(transport.closeError).toBeUndefined();
  });

  it("keeps a tail bounded by stderrTailLines and stderrTailBytes; with 0 lines it keeps none and hands stderr over untouched", async () => {
    const bounded = await spawnFixture("chatty", { stderrTailLines: 5, stderrTailBytes: 1000 });
    await until(() => bounded.transport.closeError !== undefined, 10_000);
    const long = (n: number) => `${n} ${"x".repeat(300)}`;
    // Four lines fit the 1,000 bytes (three of 304, one of 9), under the 5-line bound.
    expect(bounded.transport.closeError!.stderrTail).toEqual([long(198), long(199), long(200), "last line"]);
    expect(bounded.transport.closeError!.exitCode).toBe(0);

    const none = await spawnFixture("chatty", { stderrTailLines: 0, stderr: "pipe" });
    let passed = "";
    none.transport.stderr!.on("data", (chunk: Buffer) => (passed += chunk.toString()));
    await until(() => none.transport.closeError !== undefined, 10_000);
    expect(none.transport.closeError!.stderrTail).toEqual([]);
    expect(none.transport.closeError!.message).toBe(
      "Server process exited with code 0 before the connection was closed",
    );
    expect(passed.split("\n")).toHaveLength(202);
  });
});

describe("LineTail", () => {
  it.each([
    ["keeps the last lines", 3, 100, ["a\nb\nc\nd\ne\n"], ["c", "d", "e"]],
    ["drops the oldest lines past the byte bound", 10, 8, ["aaaa\nbbbb\ncc\n"], ["bbbb", "cc"]],
    ["keeps the start of a line longer than the byte bound", 10, 6, ["ok\n0123456789\n"], ["012345..."]],
    ["counts an unfinished last line against the bounds", 2, 100, ["a\nb\nc"], ["b", "c"]],
    ["joins a line split across chunks and strips CR", 10, 100, ["par", "tial\r\nnext"], ["partial", "next"]],
    ["skips blank lines", 10, 100, ["\n  \none\n\n"], ["one"]],
  ] as const)("%s", (_name, lines, bytes, chunks, expected) => {
    const tail = new LineTail(lines, bytes);
    for (const chunk of chunks) tail.push(Buffer.from(chunk));
    expect(tail.lines()).toEqual(expected);
  });

  it("holds no more than its bound however much it is fed", () => {
    const tail = new LineTail(20, 4096);
    const line = Buffer.from(`${"y".repeat(1000)}\n`);
    for (let i = 0; i < 10_000; i++) tail.push(line);
    tail.push(Buffer.alloc(1_000_000, 0x7a));
    const kept = tail.lines();
    expect(kept.reduce((n, l) => n + Buffer.byteLength(l), 0)).toBeLessThanOrEqual(4096 + 3);
  });
});

describe("a stdio server writing non-JSON lines to stdout", () => {
  it("reports each to the client's onerror with the start of the line, and the connection goes on", async () => {
    const { client, errors } = await spawnFixture("noisy");
    expect(await client.request("ping", undefined)).toEqual({});
    await until(() => errors.length >= 2, 10_000);
    expect(errors.map((e) => e.constructor)).toEqual([InvalidJsonLineError, InvalidJsonLineError]);
    const [banner, long] = errors as InvalidJsonLineError[];
    expect(banner.excerpt).toBe("Server listening on stdio (debug=on)");
    expect(banner.message).toContain('"Server listening on stdio (debug=on)"');
    expect(long.excerpt).toBe("#".repeat(120));
    expect(long.message.length).toBeLessThan(400);
    expect(await client.request("ping", undefined)).toEqual({});
  });
});
