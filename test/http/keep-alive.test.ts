// The node:http requester's keep-alive pool against real servers: idle connections retired, the idle-close race retried once, no unhandled socket errors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { nodeRequester, type WireRequester } from "../../runtime/transports/http/client/node-requester.js";
import { listen as listenLoopback } from "../kit/net.js";
import { rng } from "../kit/random.js";
import { settle, sleep, until } from "../kit/timing.js";

type Handler = (req: IncomingMessage, res: ServerResponse, info: { connection: number; onConnection: number }) => void;

interface TestServer {
  url: URL;
  http: Server;
  /** Every connection the server accepted, in order. */
  sockets: Socket[];
  /** Requests that reached the handler. */
  requests: number;
  /** Connections the client ended (FIN received while the server still had it open). */
  endedByClient: number;
  stop(): Promise<void>;
}

const servers: TestServer[] = [];
const requesters: WireRequester[] = [];
afterEach(async () => {
  for (const r of requesters.splice(0)) r.close();
  for (const s of servers.splice(0)) await s.stop();
});

/** A node:http server on 127.0.0.1; `handler` sees which connection (1-based) and which request on it this is. */
async function listen(handler: Handler, keepAliveTimeout: number): Promise<TestServer> {
  const http = createServer();
  http.keepAliveTimeout = keepAliveTimeout;
  const server: TestServer = {
    url: new URL("http://127.0.0.1/"),
    http,
    sockets: [],
    requests: 0,
    endedByClient: 0,
    async stop() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  const perSocket = new Map<Socket, number>();
  http.on("connection", (socket: Socket) => {
    server.sockets.push(socket);
    perSocket.set(socket, 0);
    socket.on("end", () => server.endedByClient++);
  });
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    server.requests++;
    const onConnection = perSocket.get(req.socket)! + 1;
    perSocket.set(req.socket, onConnection);
    req.resume();
    req.on("end", () => handler(req, res, { connection: server.sockets.indexOf(req.socket) + 1, onConnection }));
  });
  server.url = new URL(`${(await listenLoopback(http)).origin}/mcp`);
  servers.push(server);
  return server;
}

/**
 * A JSON answer. `Connection: keep-alive` set by hand keeps Node from adding its `Keep-Alive: timeout=N` hint, as
 * many servers and proxies do: the client then knows nothing of the server's idle timeout.
 */
function answer(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    connection: "keep-alive",
  });
  res.end(text);
}

function requester(idleSocketTimeoutMs?: number): WireRequester {
  const r = nodeRequester(idleSocketTimeoutMs === undefined ? {} : { idleSocketTimeoutMs });
  requesters.push(r);
  return r;
}

async function call(r: WireRequester, url: URL, n: number, signal?: AbortSignal): Promise<unknown> {
  const response = await r.send(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ n }),
    signal,
  });
  return JSON.parse(await response.text());
}

describe("a request that fails on a reused connection", () => {
  it("is sent again on a new connection when nothing of a response had arrived", async () => {
    // The server closes a kept-alive connection just as the next request arrives on it: the idle-close race.
    const server = await listen((_req, res, { onConnection }) => {
      if (onConnection === 2) res.socket!.destroy();
      else answer(res, { ok: true });
    }, 60_000);
    const r = requester(60_000);
    expect(await call(r, server.url, 1)).toEqual({ ok: true });
    expect(await call(r, server.url, 2)).toEqual({ ok: true });
    expect(server.sockets).toHaveLength(2);
    expect(server.requests).toBe(3);
  });

  it.each([
    // Some of a response arrived: the server saw the request, so it is not sent twice. (end, not destroy: destroy
    // can discard the bytes still queued, and then nothing did arrive.)
    ["after the first bytes of a response", (res: ServerResponse) => res.socket!.end("HTTP/1.1 200 OK\r\n")],
    [
      "with a response body cut short",
      (res: ServerResponse) => res.socket!.end("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"),
    ],
  ])("is not sent again when it failed %s", async (_name, fail) => {
    const server = await listen(
      (_req, res, { onConnection }) => (onConnection === 2 ? fail(res) : answer(res, { ok: true })),
      60_000,
    );
    const r = requester(60_000);
    await call(r, server.url, 1);
    await expect(call(r, server.url, 2)).rejects.toThrow();
    expect(server.requests).toBe(2);
  });

  it("is not sent again when its connection was a new one, or when it was aborted", async () => {
    let fate: "drop" | "answer" | "hold" = "drop";
    const server = await listen(
      (_req, res) =>
        fate === "drop" ? res.socket!.destroy() : fate === "answer" ? answer(res, { ok: true }) : undefined,
      60_000,
    );
    const r = requester(60_000);
    await expect(call(r, server.url, 1)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(server.requests).toBe(1);
    fate = "answer";
    await call(r, server.url, 2);
    fate = "hold";
    const controller = new AbortController();
    const aborted = call(r, server.url, 3, controller.signal);
    aborted.catch(() => undefined);
    await until(() => server.requests === 3);
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    await sleep(20);
    expect(server.requests).toBe(3);
  });
});

describe("the idle-close race against a real server timeout", () => {
  it("calls that reach the server just as its keepAliveTimeout closes the idle connection all succeed", async () => {
    let finished: { at: number; socket: Socket } | undefined;
    const server = await listen((_req, res) => {
      // The server arms its idle timer when a response finishes; this is when the window opens.
      res.once("finish", () => (finished = { at: performance.now(), socket: res.socket ?? server.sockets.at(-1)! }));
      answer(res, { ok: true });
    }, 100);
    // The client's own idle limit is longer, so only the retry can save a call that meets a closing connection.
    const r = requester(60_000);
    const results: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      await call(r, server.url, 0);
      // The idle timeout the server really set (Node may add a margin to keepAliveTimeout).
      const closesAt = finished!.at + finished!.socket.timeout!;
      await sleep(closesAt - 100 - performance.now());
      // Into the window: the request is written while the connection is still open, then this process (and with
      // it the server) is busy until past the server's timeout. libuv runs due timers after the check phase, so
      // the timer closes a connection that holds the unread request, and the client sees it reset.
      await settle();
      const sent = call(r, server.url, i + 1).catch((error: unknown) => error);
      await new Promise((resolve) => process.nextTick(resolve));
      while (performance.now() < closesAt + 100);
      results.push(await sent);
    }
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
  });
});

describe("idle connections", () => {
  it("are closed by the client after idleSocketTimeoutMs, before the server's own timeout", async () => {
    const server = await listen((_req, res) => answer(res, { ok: true }), 60_000);
    const r = requester(100);
    await call(r, server.url, 1);
    await until(() => server.endedByClient === 1, 5000);
    await call(r, server.url, 2);
    expect(server.sockets).toHaveLength(2);
  });

  it("rejects a negative idleSocketTimeoutMs", () => {
    expect(() => nodeRequester({ idleSocketTimeoutMs: -1 })).toThrow(RangeError);
  });
});

describe("connections that fail anywhere", () => {
  it("settle every call and raise nothing unhandled", async () => {
    // Seeded, so a failure can be replayed: each request meets one way of breaking (or none).
    const random = rng(7);
    const fates = ["answer", "drop", "cut-headers", "cut-body", "stream-then-drop", "hold"] as const;
    const server = await listen((_req, res) => {
      const fate = fates[Math.floor(random() * fates.length)];
      const socket = res.socket!;
      if (fate === "answer") return answer(res, { ok: true });
      if (fate === "drop") return socket.destroy();
      if (fate === "cut-headers") return void socket.end("HTTP/1.1 200 OK\r\ncontent-");
      if (fate === "cut-body")
        return (
          res.writeHead(200, { "content-length": 50 }),
          res.write('{"ok":'),
          setTimeout(() => socket.destroy(), 2)
        );
      if (fate === "stream-then-drop") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: {}\n\n");
        return void setTimeout(() => socket.resetAndDestroy(), 2);
      }
      // hold: answers nothing for a while, then drops the connection (the client may have aborted by then).
      setTimeout(() => socket.destroy(), 20);
    }, 50);
    const r = requester(30);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, async (_, i) => {
        const controller = new AbortController();
        // Every fourth call is aborted early, at some point of its exchange; the rest only by the hang guard.
        const timer = setTimeout(() => controller.abort(new Error("gave up")), i % 4 === 3 ? i % 7 : 10_000);
        try {
          const response = await r.send(server.url, {
            method: "POST",
            headers: {},
            body: String(i),
            signal: controller.signal,
          });
          if (i % 3 === 0) return await response.text();
          if (i % 3 === 1) return await response.stream(() => undefined, controller.signal);
          return await response.discard();
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    expect(outcomes).toHaveLength(200);
    expect(outcomes.some((o) => o.status === "fulfilled")).toBe(true);
    expect(outcomes.some((o) => o.status === "rejected")).toBe(true);
    // Let late socket events (resets, closes of idle connections) happen while the test still runs.
    await sleep(100);
  });
});
