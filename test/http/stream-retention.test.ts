// Finished SSE streams leave the event store: at once when the client provably has them, else after a window.
import { Agent, request as httpRequest } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage, RequestId } from "../../runtime/rpc/jsonrpc.js";
import { InMemoryEventStore } from "../../runtime/transports/http/server/event-store.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import type { HttpServerTransport } from "../../runtime/transports/http/server/server.js";
import { SseDecoder } from "../../runtime/transports/http/sse.js";
import {
  ACCEPT_BOTH,
  initialize,
  initializeMessage,
  post,
  postToHandler,
  readSse,
  sessionHeaders,
  serverPerTest,
} from "./helpers.js";
import { until } from "../kit/timing.js";

const start = serverPerTest();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The project's HTTP client on one session: sequential requests, answered through onmessage. */
async function connectClient(url: string): Promise<(method: string, params?: JsonObject) => Promise<JsonObject>> {
  const client = new StreamableHttpClientTransport({ url, standaloneStream: "manual" });
  cleanups.push(() => client.close().catch(() => undefined));
  const waiting = new Map<RequestId, (m: JsonObject) => void>();
  client.onmessage = (m) => {
    const msg = m as JsonObject;
    if (!("method" in msg)) waiting.get(msg.id as RequestId)?.(msg);
  };
  let next = 0;
  const call = async (method: string, params?: JsonObject): Promise<JsonObject> => {
    const id = next++;
    const answered = new Promise<JsonObject>((resolve) => waiting.set(id, resolve));
    await client.send(id === 0 ? initializeMessage(0) : { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    const reply = await answered;
    waiting.delete(id);
    return reply;
  };
  await client.start();
  await call("initialize");
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return call;
}

/** Answers every request with an empty result (initialize with a minimal one), remembering nothing. */
function answerEverything(t: HttpServerTransport): void {
  t.onmessage = (message) => {
    const m = message as { id?: RequestId; method?: string };
    if (m.id === undefined || m.method === undefined) return;
    const result =
      m.method === "initialize"
        ? { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "lean", version: "0" } }
        : { echo: (message as { params?: JsonObject }).params ?? {} };
    void t.send({ jsonrpc: "2.0", id: m.id, result }, { relatedRequestId: m.id }).catch(() => undefined);
  };
}

/** A POST on a given agent's connection, read to its end; resolves with the SSE event ids. */
function postOn(agent: Agent, port: number, sid: string, body: JsonObject): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        agent,
        headers: { accept: ACCEPT_BOTH, "content-type": "application/json", ...sessionHeaders(sid) },
      },
      (res) => {
        const ids: string[] = [];
        const decoder = new SseDecoder({ onLastEventId: (id) => ids.push(id) });
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => decoder.push(chunk));
        res.on("end", () => resolve(ids));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("finished streams in the event store", () => {
  it("20,000 calls in one session leave the store's entry count and the heap flat", async () => {
    const store = new InMemoryEventStore();
    // A responder that keeps nothing (the shared one records every message), so the heap shows the transport.
    const server = await start({ eventStore: store, onSession: answerEverything });
    const call = await connectClient(server.url);
    // Warm up first, so code paths, pools and the session's own structures are in place before measuring.
    for (let i = 0; i < 500; i++) await call("echo", { i });
    const before = { heap: heapAfterGc(), store: store.stats() };
    // Four lanes of 5,000 sequential calls: the client's pool spreads them over a few keep-alive connections.
    const LANES = 4;
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let i = lane; i < 20_000; i += LANES) {
          const reply = await call("echo", { i });
          if ((reply.result as { echo: { i: number } }).echo.i !== i) throw new Error(`wrong reply for call ${i}`);
        }
      }),
    );
    const after = { heap: heapAfterGc(), store: store.stats() };
    // Each call's stream is freed once the client's next request on its connection shows it read that stream
    // to its end; the last stream on each connection is all that may stay.
    expect(after.store.streams).toBeLessThanOrEqual(LANES + 1);
    expect(after.store.events).toBeLessThanOrEqual(2 * (LANES + 1));
    expect(after.store.bytes).toBeLessThanOrEqual(before.store.bytes + 1024);
    // Kept logs cost about 300 bytes each, so the 20,000 of them the store used to keep came to 6 MB or more.
    expect(after.heap - before.heap).toBeLessThan(2 * 1024 * 1024);
  }, 120_000);

  it("frees a stream read to its end once the client's next request comes on the same connection, not before", async () => {
    const store = new InMemoryEventStore();
    const server = await start({ eventStore: store });
    const sid = await initialize(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const first = await postOn(agent, server.port, sid, {
      jsonrpc: "2.0",
      id: 1,
      method: "progress",
      params: { count: 2 },
    });
    // Read to its end, but nothing shows yet that the bytes reached the client: it stays resumable.
    expect(store.replayAfter(sid, first[0]).events.filter((e) => e.message)).toHaveLength(3);
    const second = await postOn(agent, server.port, sid, { jsonrpc: "2.0", id: 2, method: "echo" });
    // The second request came on the connection the first stream ended on: the first is gone, the second is kept.
    expect(() => store.replayAfter(sid, first[0])).toThrow(/unknown Last-Event-ID/);
    expect(store.replayAfter(sid, second[0]).events.filter((e) => e.message)).toHaveLength(1);
  });

  it("keeps a stream cut before its final event resumable for the retention window, then frees it", async () => {
    const store = new InMemoryEventStore({ finishedStreamRetentionMs: 300 });
    const server = await start({ eventStore: store });
    const sid = await initialize(server.url);
    const cut = async (id: number, gate: string) => {
      const res = await post(
        server!.url,
        { jsonrpc: "2.0", id, method: "wait", params: { gate, before: 1, after: 1 } },
        sessionHeaders(sid),
      );
      const read = await readSse(res, (r) => r.messages.length === 1);
      server!.responder.open(gate);
      await until(() => server!.responder.transports[0].pendingRequestCount === 0);
      return read.events.at(-1)!.id;
    };
    const early = await cut(1, "a");
    // Finished (answered while no connection carried it), within its window: the replay has the rest.
    const replay = await readSse(
      await fetch(server.url, {
        headers: { accept: "text/event-stream", "last-event-id": early, ...sessionHeaders(sid) },
      }),
    );
    expect(replay.messages.map((m) => m.id ?? "progress")).toEqual(["progress", 1]);
    const late = await cut(2, "b");
    expect(store.stats().finishedStreams).toBeGreaterThanOrEqual(1);
    await until(() => store.stats().streams === 0, 5000);
    const gone = await fetch(server.url, {
      headers: { accept: "text/event-stream", "last-event-id": late, ...sessionHeaders(sid) },
    });
    expect(gone.status).toBe(400);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(/unknown Last-Event-ID/);
  });

  it("behind the fetch handler, which cannot see delivery, keeps at most maxFinishedStreamsPerSession streams", async () => {
    const store = new InMemoryEventStore({ maxFinishedStreamsPerSession: 20 });
    const server = await start({ eventStore: store });
    const call = (body: JsonRpcMessage, sid?: string) =>
      postToHandler(server!.mcp.fetch, body, sid ? sessionHeaders(sid) : {});
    const init = await call(initializeMessage(0));
    const sid = init.headers.get("mcp-session-id")!;
    await readSse(init);
    let firstEventId = "";
    for (let i = 1; i <= 200; i++) {
      const read = await readSse(await call({ jsonrpc: "2.0", id: i, method: "echo" }, sid));
      firstEventId ||= read.events[0].id;
    }
    expect(store.stats().streams).toBeLessThanOrEqual(20);
    // The oldest went first; the newest are still there for a client that missed their end.
    expect(store.stats().streams).toBeGreaterThanOrEqual(20);
    expect(() => store.replayAfter(sid, firstEventId)).toThrow(/unknown/);
  });
});
