// A client that stops reading its SSE reply: the server stops writing past the high-water mark, closes with
// `retry`, and the client gets every event by resuming from its Last-Event-ID once it reads again.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { InMemoryEventStore } from "../../runtime/transports/http/server/event-store.js";
import { UndeliverableMessageError } from "../../runtime/transports/http/server/server.js";
import { SseDecoder } from "../../runtime/transports/http/sse.js";
import {
  ACCEPT_BOTH,
  initialize,
  initializeMessage,
  postToHandler,
  readSse,
  sessionHeaders,
  startServer,
  type RunningServer,
  type SseRead,
} from "./helpers.js";
import { until } from "../kit/timing.js";

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const MARK = 64 * 1024;
const PAD = 8 * 1024;
// 16 MB: more than loopback's kernel buffers take (a few MB) before a stopped reader makes the server queue.
const COUNT = 2000;
/** One flood event on the wire, with room for its id, JSON envelope and chunk framing. */
const EVENT_BYTES = PAD + 512;

/** Records the most any response held unsent right after a write: the server-side cost of a slow reader. */
function watchBuffered(s: RunningServer): { max: number } {
  const seen = { max: 0 };
  s.http.removeAllListeners("request");
  s.http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const ok = write(...args);
      seen.max = Math.max(seen.max, res.writableLength);
      return ok;
    }) as ServerResponse["write"];
    s.mcp.nodeListener(req, res);
  });
  return seen;
}

/** Indices of the flood notifications, and "response" for the final answer. */
function floodOrder(messages: JsonObject[]): (number | string)[] {
  return messages.map((m) => (m.method ? (m.params as { data: { i: number } }).data.i : "response"));
}

/** Resumes with GET + Last-Event-ID, reading each connection to its end, until the response arrived. */
async function resumeUntilAnswered(url: string, sid: string, lastEventId: string, into: JsonObject[]): Promise<number> {
  let connections = 0;
  while (!into.some((m) => m.id !== undefined && !m.method)) {
    if (++connections > 500) throw new Error("no response after 500 resumes");
    const res = await fetch(url, {
      headers: { accept: "text/event-stream", "last-event-id": lastEventId, ...sessionHeaders(sid) },
    });
    expect(res.status).toBe(200);
    const read = await readSse(res);
    into.push(...read.messages);
    lastEventId = read.events.at(-1)?.id || lastEventId;
  }
  return connections;
}

describe("SSE backpressure", () => {
  it("stops writing to a paused reader past the mark, closes with retry, and a resume delivers every event in order", async () => {
    server = await startServer({
      sseHighWaterMarkBytes: MARK,
      retryMs: 5,
      // Large enough to hold the whole flood: here nothing may be lost, only delayed.
      eventStore: new InMemoryEventStore({ maxBytesPerSession: 64 * 1024 * 1024 }),
    });
    const buffered = watchBuffered(server);
    const sid = await initialize(server.url);
    const transport = server.responder.transports[0];

    // A POST whose response nobody reads: the client socket stops reading once its small buffer is full.
    let paused!: IncomingMessage;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port: server!.port,
          path: "/mcp",
          method: "POST",
          agent: false,
          headers: { accept: ACCEPT_BOTH, "content-type": "application/json", ...sessionHeaders(sid) },
        },
        (res) => {
          paused = res;
          res.pause();
          resolve();
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "flood", params: { count: COUNT, size: PAD } }));
    });
    // The handler runs to its end: its later events go only to the store.
    await until(() => transport.pendingRequestCount === 0, 20_000);
    expect(buffered.max).toBeGreaterThan(0);
    expect(buffered.max).toBeLessThan(MARK + EVENT_BYTES + 256);

    // The client reads again: what was written, then `retry`, then the end of the body.
    const first: SseRead = { events: [], messages: [], ended: false };
    await new Promise<void>((resolve, reject) => {
      const decoder = new SseDecoder({
        onEvent: (e) => {
          first.events.push({ id: e.lastEventId, data: e.data });
          if (e.data !== "") first.messages.push(JSON.parse(e.data) as JsonObject);
        },
        onRetry: (ms) => (first.retry = ms),
      });
      paused.setEncoding("utf8");
      paused.on("data", (chunk: string) => decoder.push(chunk));
      paused.on("end", () => resolve());
      paused.on("error", reject);
      paused.resume();
    });
    expect(first.retry).toBe(5);
    expect(first.messages.length).toBeGreaterThan(0);
    expect(first.messages.length).toBeLessThan(COUNT);

    const all = [...first.messages];
    const connections = await resumeUntilAnswered(server.url, sid, first.events.at(-1)!.id, all);
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(floodOrder(all)).toEqual([...Array.from({ length: COUNT }, (_, i) => i), "response"]);
    expect(all.at(-1)).toEqual({ jsonrpc: "2.0", id: 7, result: { done: COUNT } });
  }, 60_000);

  it("behind the fetch handler, holds no more than the mark for a body nobody reads", async () => {
    server = await startServer({
      sseHighWaterMarkBytes: MARK,
      retryMs: 5,
      eventStore: new InMemoryEventStore({ maxBytesPerSession: 64 * 1024 * 1024 }),
    });
    const postTo = (body: JsonRpcMessage, sid?: string) =>
      postToHandler(server!.mcp.fetch, body, sid ? sessionHeaders(sid) : {});
    const init = await postTo(initializeMessage(0));
    const sid = init.headers.get("mcp-session-id")!;
    await readSse(init);
    const flood = await postTo({ jsonrpc: "2.0", id: 3, method: "flood", params: { count: 200, size: PAD } }, sid);
    await until(() => server!.responder.transports[0].pendingRequestCount === 0, 20_000);
    // Nothing read the body while the handler ran, so all of it is what the server held for it.
    const text = await flood.text();
    expect(Buffer.byteLength(text)).toBeLessThan(MARK + EVENT_BYTES + 256);
    const first = await readSse(new Response(text));
    expect(first.retry).toBe(5);
    const all = [...first.messages];
    await resumeUntilAnswered(server.url, sid, first.events.at(-1)!.id, all);
    expect(floodOrder(all)).toEqual([...Array.from({ length: 200 }, (_, i) => i), "response"]);
  });

  it("ends a stateless stream nobody reads at the mark, since it cannot be resumed, and reports it", async () => {
    const errors: Error[] = [];
    server = await startServer({ stateless: true, sseHighWaterMarkBytes: MARK, onerror: (e) => errors.push(e) });
    const flood = await postToHandler(
      server.mcp.fetch,
      { jsonrpc: "2.0", id: 1, method: "flood", params: { count: 200, size: PAD } },
      { "mcp-protocol-version": "2025-11-25" },
    );
    await until(() => server!.responder.closed.length === 1, 20_000);
    const text = await flood.text();
    expect(Buffer.byteLength(text)).toBeLessThan(MARK + EVENT_BYTES + 256);
    const read = await readSse(new Response(text));
    expect(read.messages.length).toBeLessThan(200);
    expect(read.messages.every((m) => m.method === "notifications/message")).toBe(true);
    expect(errors.some((e) => e instanceof UndeliverableMessageError)).toBe(true);
  });
});
