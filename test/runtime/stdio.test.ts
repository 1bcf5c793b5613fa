// Stdio framing in-process: the line decoder, and the server transport over PassThrough streams with a session.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../runtime/rpc/jsonrpc.js";
import { LATEST_PROTOCOL_VERSION, ServerSession } from "../../runtime/mcp/lifecycle.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { SEQ_META_KEY } from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import {
  clientToServer as generatedInbound,
  isMessage,
  serverToClient as generatedOutbound,
} from "../../generated/dispatch.js";
import {
  FrameTooLargeError,
  InvalidUtf8Error,
  LineDecoder,
  StdioServerTransport,
  defaultChildEnvironment,
} from "../../runtime/transports/stdio/stdio.js";
import { clientToServer } from "./helpers.js";
import { collectLines } from "../kit/streams.js";
import { settle, sleep } from "../kit/timing.js";

function decoder(max?: number) {
  const values: unknown[] = [];
  const bad: Error[] = [];
  const d = new LineDecoder({ onLine: (v) => values.push(v), onBadLine: (e) => bad.push(e) }, max);
  return { d, values, bad };
}
const b = (s: string) => Buffer.from(s, "utf8");

describe("LineDecoder", () => {
  it("joins partial lines across chunks, even split inside a multi-byte character", () => {
    const { d, values, bad } = decoder();
    const whole = b('{"jsonrpc":"2.0","method":"é€😀"}\n');
    for (let i = 0; i < whole.length; i++) d.push(whole.subarray(i, i + 1));
    expect(values).toEqual([{ jsonrpc: "2.0", method: "é€😀" }]);
    expect(bad).toEqual([]);
    expect(d.pending).toBe(0);
  });

  it("splits several messages in one chunk and keeps the unfinished tail", () => {
    const { d, values } = decoder();
    d.push(b('{"a":1}\n{"b":2}\n{"c":'));
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
    expect(d.pending).toBe(5);
    d.push(b("3}\n"));
    expect(values).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("accepts CRLF line ends and skips blank lines", () => {
    const { d, values, bad } = decoder();
    d.push(b('{"a":1}\r\n\r\n\n{"b":"x\\r"}\r'));
    d.push(b("\n"));
    expect(values).toEqual([{ a: 1 }, { b: "x\r" }]);
    expect(bad).toEqual([]);
  });

  it("discards an over-long line without buffering it, reports it once, and recovers at the next newline", () => {
    const { d, values, bad } = decoder(64);
    d.push(b('{"ok":1}\n' + "x".repeat(40)));
    d.push(b("y".repeat(40)));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toBeInstanceOf(FrameTooLargeError);
    expect(d.pending).toBe(0);
    for (let i = 0; i < 100; i++) d.push(b("z".repeat(1000)));
    expect(d.pending).toBe(0);
    expect(bad).toHaveLength(1);
    d.push(b('zzz\n{"ok":2}\n'));
    expect(values).toEqual([{ ok: 1 }, { ok: 2 }]);
    // A complete over-long line inside one chunk, and one completed by a later chunk.
    d.push(b("q".repeat(100) + '\n{"ok":3}\n' + "r".repeat(50)));
    d.push(b("r".repeat(20) + '\n{"ok":4}\n'));
    expect(bad).toHaveLength(3);
    expect(values).toEqual([{ ok: 1 }, { ok: 2 }, { ok: 3 }, { ok: 4 }]);
  });

  it("reports invalid UTF-8 and invalid JSON as malformed, but lets a real U+FFFD through", () => {
    const { d, values, bad } = decoder();
    d.push(Buffer.concat([b('{"s":"'), Buffer.from([0xff, 0xfe]), b('"}\n')]));
    d.push(b("not json\n"));
    d.push(b('{"s":"\ufffd"}\n'));
    expect(bad[0]).toBeInstanceOf(InvalidUtf8Error);
    expect(bad[1]).toBeInstanceOf(SyntaxError);
    expect(values).toEqual([{ s: "\ufffd" }]);
  });
});

describe("StdioServerTransport with a session (PassThrough streams)", () => {
  async function serve() {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines = collectLines(stdout);
    const transport = new StdioServerTransport({ stdin, stdout, maxLineBytes: 256 });
    const session = new ServerSession({ inbound: clientToServer, serverInfo: { name: "s", version: "1" } });
    let closed = false;
    session.onclose = () => (closed = true);
    await session.connect(transport);
    return { stdin, lines, closed: () => closed };
  }

  it("answers -32700 for bad JSON, bad UTF-8 and an over-long line, and keeps serving", async () => {
    const { stdin, lines } = await serve();
    stdin.write('{"jsonrpc":"2.0","id":0,"method":"ping"}\r\n{"jsonrpc":"2.0",');
    stdin.write('"id":"a","method":"ping"}\n{oops}\n');
    stdin.write(Buffer.concat([b('{"jsonrpc":"2.0","id":9,"method":"'), Buffer.from([0xc3, 0x28]), b('"}\n')]));
    stdin.write("[" + "1,".repeat(200) + "1]\n");
    stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await sleep(20);
    // Error replies are immediate while results wait for their (async) handler, so order is not fixed.
    expect(lines).toHaveLength(6);
    expect(lines).toEqual(
      expect.arrayContaining([
        { jsonrpc: "2.0", id: 0, result: {} },
        { jsonrpc: "2.0", id: "a", result: {} },
        { jsonrpc: "2.0", error: { code: ErrorCode.ParseError, message: "Parse error", data: expect.any(String) } },
        {
          jsonrpc: "2.0",
          error: { code: ErrorCode.ParseError, message: "Parse error", data: "Message is not valid UTF-8" },
        },
        {
          jsonrpc: "2.0",
          error: { code: ErrorCode.ParseError, message: "Parse error", data: expect.stringMatching(/256-byte/) },
        },
        { jsonrpc: "2.0", id: 2, result: {} },
      ]),
    );
  });

  it("fires onclose when stdin ends", async () => {
    const { stdin, closed } = await serve();
    stdin.end();
    await settle();
    expect(closed()).toBe(true);
  });
});

describe("StdioServerTransport delivery confirmation", () => {
  it("confirms a message once its line is written to the pipe, and never one whose write failed", async () => {
    const stdout = new PassThrough();
    const transport = new StdioServerTransport({ stdin: new PassThrough(), stdout });
    expect(transport.confirmsDelivery).toBe(true);
    await transport.start();
    const confirmed: string[] = [];
    await transport.send({ jsonrpc: "2.0", id: 1, result: {} }, { ondelivered: () => confirmed.push("first") });
    await settle();
    expect(confirmed).toEqual(["first"]);
    expect(String(stdout.read())).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    stdout.on("error", () => undefined);
    stdout.destroy();
    await expect(
      transport.send({ jsonrpc: "2.0", id: 2, result: {} }, { ondelivered: () => confirmed.push("second") }),
    ).rejects.toThrow(/closed/);
    await settle();
    expect(confirmed).toEqual(["first"]);
    await transport.close();
  });

  it("frees a resumable request as soon as its final response is written, instead of keeping it for retainDeliveredMs", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines = collectLines(stdout);
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 60_000 });
    const session = new ServerSession({
      inbound: generatedInbound,
      outbound: generatedOutbound,
      isMessage,
      serverInfo: { name: "s", version: "1" },
      capabilities: { tools: {} },
    });
    manager.install(session);
    session.onRequest("tools/call", async () => ({ content: [{ type: "text", text: "ok" }] }));
    await session.connect(new StdioServerTransport({ stdin, stdout }));
    const send = (m: object) => stdin.write(JSON.stringify(m) + "\n");
    send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: { resumableRequests: {} },
        clientInfo: { name: "c", version: "1" },
      },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } });
    for (let i = 0; i < 50 && lines.length < 3; i++) await settle();
    // All three lines were written at once, so initialize's answer may come after the call's first line.
    const ofCall = lines.filter((l) => l.id !== 0);
    expect(ofCall.map((l) => l.method ?? l.id)).toEqual(["notifications/requests/resumePolicy", 1]);
    expect(((ofCall[1].result as Record<string, unknown>)._meta as Record<string, unknown>)[SEQ_META_KEY]).toEqual({
      requestId: 1,
      seq: 1,
    });
    await settle();
    expect(manager.stats.made).toBe(1);
    expect(manager.size).toBe(0);
    expect(manager.store.count()).toBe(0);
    stdin.end();
    manager.close();
  });
});

describe("StdioServerTransport backpressure", () => {
  it("makes sends wait while the pipe is full, and fails them instead of hanging when the stream is destroyed before it drains", async () => {
    const stdout = new PassThrough({ highWaterMark: 16 });
    stdout.on("error", () => undefined);
    const transport = new StdioServerTransport({ stdin: new PassThrough(), stdout });
    await transport.start();
    const big = {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "x".repeat(64) },
    } as const;
    let settled: string | undefined;
    const first = transport.send(big);
    first.then(
      () => (settled = "resolved"),
      () => (settled = "rejected"),
    );
    await settle();
    expect(settled).toBeUndefined(); // nobody reads: the write waits for a drain
    stdout.destroy();
    await settle();
    expect(settled).toBe("rejected");
    await expect(transport.send(big)).rejects.toThrow(/closed/);
    await transport.close();
  });
});

describe("child environment", () => {
  it("keeps only safe variables and drops exported shell functions", () => {
    const saved = { ...process.env };
    try {
      process.env.SECRET_TOKEN = "s3cret";
      process.env.SHELL = "() { evil; }";
      process.env.PATH = saved.PATH ?? "/usr/bin";
      const env = defaultChildEnvironment();
      expect(env.SECRET_TOKEN).toBeUndefined();
      expect(env.SHELL).toBeUndefined();
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
