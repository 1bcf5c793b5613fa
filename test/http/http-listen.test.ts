// The project's http.Server: slow clients are cut off by its header/body timeouts, long SSE responses are not.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_HTTP_SERVER_TIMEOUTS,
  createHttpServer,
  listenHttp,
} from "../../runtime/transports/http/server/listen.js";
import { initialize, post, readSse, sessionHeaders, startServer, type RunningServer } from "./helpers.js";
import { sleep, until } from "../kit/timing.js";

let server: RunningServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.stop();
  server = undefined;
});

// Short enough for a test, far below Node's own defaults (60 s headers, 300 s request, checked every 30 s).
const SHORT = { headersTimeoutMs: 200, requestTimeoutMs: 400, timeoutCheckIntervalMs: 25 };
// Well under Node's defaults: a server left with them keeps the slow client and the test fails here.
const HANG_GUARD_MS = 15_000;

/** A raw connection; resolves with everything the server wrote once it closes the connection. */
function rawClient(port: number, behave: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    let received = "";
    const guard = setTimeout(
      () => reject(new Error(`the server kept the slow client for ${HANG_GUARD_MS} ms`)),
      HANG_GUARD_MS,
    );
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(guard);
      resolve(received);
    });
    socket.on("connect", () => behave(socket));
  });
}

/** Writes `text` one byte every `everyMs` until the socket closes (the rest of a never-ending trickle). */
function trickle(socket: Socket, text: string, everyMs = 20): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    socket.write(text[i++ % text.length]);
  }, everyMs);
  socket.on("close", () => clearInterval(timer));
}

const POST_HEAD =
  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n";

describe("slow clients are cut off with 408", () => {
  const SLOW: { name: string; behave: (socket: Socket) => void }[] = [
    { name: "a connection that never sends anything", behave: () => undefined },
    { name: "headers trickled byte by byte", behave: (s) => trickle(s, `${POST_HEAD}X-Pad: ${"a".repeat(10_000)}`) },
    {
      name: "a body that is never finished",
      behave: (s) => s.write(`${POST_HEAD}Content-Length: 1000\r\n\r\n{"jsonrpc":"2.0",`),
    },
    {
      name: "a body trickled byte by byte",
      behave: (s) => {
        s.write(`${POST_HEAD}Content-Length: 100000\r\n\r\n`);
        trickle(s, " ");
      },
    },
  ];

  it.each(SLOW)("$name", async ({ behave }) => {
    server = await startServer({}, SHORT);
    const received = await rawClient(server.port, behave);
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    // Nothing reached the MCP layer, and the server goes on serving others.
    expect(server.responder.received).toHaveLength(0);
    await initialize(server.url);
  });

  it("closes an idle keep-alive connection after keepAliveTimeoutMs", async () => {
    server = await startServer({}, { ...SHORT, keepAliveTimeoutMs: 1000 });
    const received = await rawClient(server.port, (s) => s.write("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    // One complete answer (the DELETE without a session is refused) announcing the timeout, then the server hung up.
    expect(received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(received).toMatch(/\r\nKeep-Alive: timeout=1\r\n/);
  });
});

describe("long responses are not cut off", () => {
  it("a request's SSE reply and the GET stream outlive requestTimeoutMs", async () => {
    server = await startServer({}, SHORT);
    const sid = await initialize(server.url);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid) } });
    expect(get.status).toBe(200);
    const standalone = readSse(get, (r) => r.messages.length === 1);
    // Awaited below; a cut connection must fail this test, not surface as an unhandled rejection first.
    standalone.catch(() => undefined);
    await until(() => server!.responder.transports[0].standaloneConnected);
    const reply = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "wait", params: { gate: "late", before: 1, after: 1 } },
      sessionHeaders(sid),
    );
    expect(reply.status).toBe(200);
    // Several request timeouts and checks go by while both responses stay open.
    await sleep(4 * SHORT.requestTimeoutMs);
    server.responder.open("late");
    await server.responder.transports[0].send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    const read = await readSse(reply);
    expect(read.messages.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, result: { done: 2 } });
    expect((await standalone).messages).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);
  });
});

describe("createHttpServer / listenHttp", () => {
  it("sets its own timeouts instead of Node's defaults", () => {
    const http = createHttpServer(() => undefined);
    expect(http.headersTimeout).toBe(DEFAULT_HTTP_SERVER_TIMEOUTS.headersTimeoutMs);
    expect(http.requestTimeout).toBe(DEFAULT_HTTP_SERVER_TIMEOUTS.requestTimeoutMs);
    expect(http.keepAliveTimeout).toBe(DEFAULT_HTTP_SERVER_TIMEOUTS.keepAliveTimeoutMs);
    const tuned = createHttpServer(() => undefined, {
      headersTimeoutMs: 2000,
      requestTimeoutMs: 0,
      keepAliveTimeoutMs: 1000,
    });
    expect([tuned.headersTimeout, tuned.requestTimeout, tuned.keepAliveTimeout]).toEqual([2000, 0, 1000]);
  });

  it("refuses timeouts Node would misread", () => {
    expect(() => createHttpServer(() => undefined, { headersTimeoutMs: 5000, requestTimeoutMs: 1000 })).toThrow(
      /must not exceed requestTimeoutMs/,
    );
    expect(() => createHttpServer(() => undefined, { requestTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => createHttpServer(() => undefined, { timeoutCheckIntervalMs: 0 })).toThrow(RangeError);
  });

  it("listens on 127.0.0.1 by default and reports the port it got; a taken port rejects", async () => {
    const first = await listenHttp((_req, res) => res.end("ok"));
    try {
      expect(first.origin).toBe(`http://127.0.0.1:${first.port}`);
      expect(await (await fetch(first.origin)).text()).toBe("ok");
      await expect(listenHttp(() => undefined, { port: first.port })).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await first.close();
    }
  });
});
