// The client transport against the real server transport: replies, standalone stream, resumption, expiry.
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage, RequestId } from "../../runtime/rpc/jsonrpc.js";
import {
  CONNECTION_LOST_CODE,
  SessionExpiredError,
  StreamLostError,
  StreamableHttpClientTransport,
  type StreamableHttpClientOptions,
} from "../../runtime/transports/http/client/transport.js";
import { InMemoryEventStore } from "../../runtime/transports/http/server/event-store.js";
import { initializeMessage, startServer, type RunningServer } from "./helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep, until } from "../kit/timing.js";

let server: RunningServer | undefined;
const cleanup = closeAfterEach(async () => {
  await server?.stop();
  server = undefined;
});

interface Harness {
  client: StreamableHttpClientTransport;
  messages: JsonObject[];
  errors: Error[];
  /** Resolves with the response to `id` once it arrives. */
  response(id: RequestId): Promise<JsonObject>;
  request(id: RequestId, method: string, params?: JsonObject): Promise<JsonObject>;
}

function harness(options: Partial<StreamableHttpClientOptions> = {}): Harness {
  const client = new StreamableHttpClientTransport({ url: server!.url, ...options });
  cleanup(() => client.close());
  const messages: JsonObject[] = [];
  const errors: Error[] = [];
  client.onmessage = (m) => messages.push(m as JsonObject);
  client.onerror = (e) => errors.push(e);
  const response = async (id: RequestId) => {
    await until(() => messages.some((m) => m.id === id && !("method" in m)), 5000);
    return messages.find((m) => m.id === id && !("method" in m))!;
  };
  return {
    client,
    messages,
    errors,
    response,
    async request(id, method, params) {
      await client.send({ jsonrpc: "2.0", id, method, params } as JsonRpcMessage);
      return response(id);
    },
  };
}

async function connect(h: Harness): Promise<void> {
  await h.client.start();
  await h.client.send(initializeMessage(0));
  await h.response(0);
  await h.client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

const progressOf = (messages: JsonObject[], token: string) =>
  messages
    .filter(
      (m) => m.method === "notifications/progress" && (m.params as { progressToken: string }).progressToken === token,
    )
    .map((m) => (m.params as { progress: number }).progress);

describe("round trips", () => {
  it("leaves no abort listener behind on the session's signal once requests are answered", async () => {
    server = await startServer();
    const h = harness({ standaloneStream: "manual" });
    await connect(h);
    const lifetime = (h.client as unknown as { lifetime: AbortController }).lifetime.signal;
    const before = getEventListeners(lifetime, "abort").length;
    for (let id = 1; id <= 40; id++) await h.request(id, "echo", { id });
    // Concurrent ones too: each SSE reply listens while open and lets go when it ends.
    await Promise.all(Array.from({ length: 30 }, (_, i) => h.request(100 + i, "echo", { i })));
    await until(() => getEventListeners(lifetime, "abort").length <= before);
    expect(getEventListeners(lifetime, "abort").length).toBeLessThanOrEqual(before);
  });

  it("initializes over SSE, keeps the session id and negotiated version, and sends them on later requests", async () => {
    server = await startServer();
    const h = harness({ standaloneStream: "manual" });
    await connect(h);
    expect(h.client.sessionId).toBe(server.responder.transports[0].sessionId);
    expect(h.client.protocolVersion).toBe("2025-11-25");
    const res = await h.request(1, "echo", { x: 1 });
    expect(res).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { echo: { x: 1 }, principal: null, sessionId: h.client.sessionId },
    });
    const last = server.responder.received.at(-1)!;
    expect(last.info?.headers?.["mcp-protocol-version"]).toBe("2025-11-25");
    expect(last.info?.headers?.["mcp-session-id"]).toBe(h.client.sessionId);
  });

  it("handles JSON replies and delivers progress before the response over SSE", async () => {
    server = await startServer({ responseMode: (m) => (m === "echo" || m === "initialize" ? "json" : "sse") });
    const h = harness({ standaloneStream: "manual" });
    await connect(h);
    expect((await h.request(1, "echo", { j: true })).result).toMatchObject({ echo: { j: true } });
    await h.request(2, "progress", { count: 3 });
    const order = h.messages
      .filter((m) => m.id === 2 || m.method === "notifications/progress")
      .map((m) => (m.method ? "p" : "r"));
    expect(order).toEqual(["p", "p", "p", "r"]);
    expect(progressOf(h.messages, "2")).toEqual([1, 2, 3]);
    expect(h.errors).toEqual([]);
  });

  it("setProtocolVersion changes the header sent", async () => {
    server = await startServer({ responseMode: "json" });
    const h = harness({ standaloneStream: "manual" });
    await connect(h);
    h.client.setProtocolVersion("2025-06-18");
    await h.request(1, "echo");
    expect(server.responder.received.at(-1)!.info?.headers?.["mcp-protocol-version"]).toBe("2025-06-18");
  });

  it("a 4xx with a JSON-RPC error body: the request's answer on 2026-07-28 (and for its codes); else an HTTP error", async () => {
    const answers: Record<string, { code: number; message: string; data?: unknown }> = {
      modern: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"] } },
      legacy: { code: -32600, message: "Bad Request: Server not initialized" },
    };
    const plain = createServer((req, res) => {
      const error = answers[String(req.headers["x-kind"])]!;
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: null, error }));
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    cleanup(() => new Promise((resolve) => plain.close(resolve)));
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/`;
    const cases = [
      ["2025-11-25", "modern", "answer"],
      ["2025-11-25", "legacy", "HttpStatusError"],
      ["2026-07-28", "legacy", "answer"],
    ] as const;
    for (const [version, kind, expected] of cases) {
      const client = new StreamableHttpClientTransport({ url, headers: { "x-kind": kind } });
      cleanup(() => client.close());
      client.setProtocolVersion(version);
      const got: unknown[] = [];
      client.onmessage = (m) => void got.push(m);
      const sent = client.send({ jsonrpc: "2.0", id: 5, method: "echo" });
      if (expected === "answer") {
        await sent;
        expect(got).toEqual([{ jsonrpc: "2.0", id: 5, error: answers[kind] }]);
      } else await expect(sent).rejects.toMatchObject({ name: "HttpStatusError", status: 400 });
    }
  });

  it("rejects send with an HTTP error when the refusal carries no JSON-RPC body", async () => {
    for (const [type, body] of [
      ["text/plain", "Bad Request"],
      ["application/json", '{"detail":"no"}'],
    ]) {
      const plain = createServer((_req, res) => res.writeHead(400, { "content-type": type }).end(body));
      await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
      cleanup(() => new Promise((resolve) => plain.close(resolve)));
      const client = new StreamableHttpClientTransport({
        url: `http://127.0.0.1:${(plain.address() as AddressInfo).port}/`,
      });
      cleanup(() => client.close());
      await expect(client.send({ jsonrpc: "2.0", id: 6, method: "echo" })).rejects.toMatchObject({
        name: "HttpStatusError",
        status: 400,
      });
    }
  });
});

describe("server-to-client requests", () => {
  it("receives a request on the POST's stream and POSTs its answer back (202)", async () => {
    server = await startServer();
    const h = harness({ standaloneStream: "manual" });
    await connect(h);
    h.client.onmessage = (m) => {
      h.messages.push(m as JsonObject);
      const msg = m as { id?: string; method?: string };
      if (msg.method === "elicitation/create") {
        void h.client.send(
          { jsonrpc: "2.0", id: msg.id!, result: { action: "accept", content: { name: "Ada" } } },
          { relatedRequestId: msg.id },
        );
      }
    };
    const res = await h.request(3, "ask");
    expect(res).toMatchObject({ id: 3, result: { answer: { action: "accept", content: { name: "Ada" } } } });
    expect(h.messages.find((m) => m.method === "elicitation/create")).toMatchObject({ id: "ask-3" });
  });
});

describe("standalone stream", () => {
  it("opens automatically after notifications/initialized and receives unrelated server messages", async () => {
    server = await startServer();
    const h = harness();
    await connect(h);
    // The GET must be open before the broadcast, or it would wait in the backlog (also fine, but not this test).
    await until(() => server!.responder.transports[0].standaloneConnected);
    await h.request(1, "broadcast", { text: "hello" });
    await until(() => h.messages.some((m) => m.method === "notifications/message"));
    expect(h.messages.find((m) => m.method === "notifications/message")).toMatchObject({ params: { text: "hello" } });
  });

  it("resumes the standalone stream after the server closes it, without missing messages", async () => {
    server = await startServer({ retryMs: 20 });
    const h = harness();
    await connect(h);
    await until(() => server!.responder.transports[0].standaloneConnected);
    const t = server.responder.transports[0];
    await t.closeStandaloneStream();
    // Sent while the client is away (waiting out `retry`): kept in the store, replayed on resume.
    await t.send({ jsonrpc: "2.0", method: "notifications/message", params: { text: "while away" } });
    await until(() => h.messages.some((m) => m.method === "notifications/message"));
    await until(() => t.standaloneConnected);
    await t.send({ jsonrpc: "2.0", method: "notifications/message", params: { text: "after" } });
    await until(() => h.messages.filter((m) => m.method === "notifications/message").length === 2);
    expect(
      h.messages.filter((m) => m.method === "notifications/message").map((m) => (m.params as { text: string }).text),
    ).toEqual(["while away", "after"]);
    expect(h.errors).toEqual([]);
  });

  it("tolerates 405 silently (stateless server)", async () => {
    server = await startServer({ stateless: true });
    const h = harness();
    await connect(h);
    await h.client.openStandaloneStream();
    await h.request(1, "echo");
    expect(h.errors).toEqual([]);
  });
});

/** A fetch that notes when each SSE body ended and when each GET started, to measure reconnect delays. */
function timingFetch(log: { bodyEnds: number[]; gets: number[] }, failGets = false): typeof fetch {
  return async (input, init) => {
    if ((init?.method ?? "GET") === "GET") {
      log.gets.push(performance.now());
      if (failGets) throw new TypeError("simulated network failure");
    }
    const res = await fetch(input, init);
    if (!res.body || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) return res;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        flush() {
          log.bodyEnds.push(performance.now());
        },
      }),
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

describe("resumption", () => {
  it("after a server-initiated close mid-request, waits the server's retry, resumes via Last-Event-ID and completes exactly once", async () => {
    server = await startServer({ retryMs: 300 });
    const log = { bodyEnds: [] as number[], gets: [] as number[] };
    const h = harness({ standaloneStream: "manual", fetch: timingFetch(log) });
    await connect(h);
    await h.client.send({ jsonrpc: "2.0", id: 7, method: "wait", params: { gate: "g", before: 2, after: 3 } });
    await until(() => progressOf(h.messages, "7").length === 2);
    await server.responder.transports[0].closeSseStream(7);
    server.responder.open("g");
    const res = await h.response(7);
    expect(res).toEqual({ jsonrpc: "2.0", id: 7, result: { done: 5 } });
    expect(progressOf(h.messages, "7")).toEqual([1, 2, 3, 4, 5]);
    expect(h.messages.filter((m) => m.id === 7)).toHaveLength(1);
    // The resume GET came no sooner than `retry` after the client saw the connection end.
    expect(log.gets).toHaveLength(1);
    const closeSeen = log.bodyEnds.filter((t) => t <= log.gets[0]).at(-1)!;
    expect(log.gets[0] - closeSeen).toBeGreaterThanOrEqual(300);
    expect(h.errors).toEqual([]);
  });

  it("treats repeated server closes as polling: a request outliving many connections completes", async () => {
    server = await startServer({ closeSseAfterMs: 40, retryMs: 10 });
    const h = harness({ standaloneStream: "manual", reconnect: { maxAttempts: 1 } });
    await connect(h);
    await h.client.send({ jsonrpc: "2.0", id: 8, method: "wait", params: { gate: "p", before: 1, after: 2 } });
    await sleep(250); // several close/resume cycles
    server.responder.open("p");
    expect(await h.response(8)).toMatchObject({ result: { done: 3 } });
    expect(progressOf(h.messages, "8")).toEqual([1, 2, 3]);
    expect(h.errors).toEqual([]);
  });

  it("gives up after maxAttempts failed reconnects and fails the request with a typed error", async () => {
    server = await startServer({ retryMs: 5 });
    const log = { bodyEnds: [] as number[], gets: [] as number[] };
    const h = harness({ standaloneStream: "manual", fetch: timingFetch(log, true), reconnect: { maxAttempts: 3 } });
    await connect(h);
    await h.client.send({ jsonrpc: "2.0", id: 9, method: "wait", params: { gate: "never", before: 1, after: 0 } });
    await until(() => progressOf(h.messages, "9").length === 1);
    await server.responder.transports[0].closeSseStream(9);
    const res = await h.response(9);
    expect(res).toMatchObject({ id: 9, error: { code: CONNECTION_LOST_CODE, data: { reason: "stream-lost" } } });
    expect(log.gets).toHaveLength(3);
    expect(h.errors.some((e) => e instanceof StreamLostError)).toBe(true);
    server.responder.open("never");
  });

  it("resumes a stream from a resumption token handed back by the app, in a new transport", async () => {
    server = await startServer();
    const tokens: string[] = [];
    const h = harness({
      standaloneStream: "manual",
      terminateOnClose: false,
      onResumptionToken: (t, info) => void (info.requestId === 4 && tokens.push(t)),
    });
    await connect(h);
    await h.client.send({ jsonrpc: "2.0", id: 4, method: "wait", params: { gate: "r", before: 1, after: 2 } });
    await until(() => progressOf(h.messages, "4").length === 1);
    const sessionId = h.client.sessionId!;
    // The app "restarts": the old transport goes away without ending the session.
    await h.client.close();
    expect(server.mcp.sessions.has(sessionId)).toBe(true);
    server.responder.open("r");
    const h2 = harness({ standaloneStream: "manual", sessionId, protocolVersion: "2025-11-25" });
    await h2.client.resumeStream(tokens.at(-1)!, { requestId: 4 });
    expect(await h2.response(4)).toMatchObject({ result: { done: 3 } });
    expect(progressOf(h2.messages, "4")).toEqual([2, 3]);
  });
});

describe("reconnect options", () => {
  it.each([
    { reconnect: { maxAttempts: -1 }, named: "reconnect.maxAttempts" },
    { reconnect: { initialDelayMs: 0.5 }, named: "reconnect.initialDelayMs" },
    { reconnect: { maxDelayMs: 2 ** 31 }, named: "reconnect.maxDelayMs" },
    { reconnect: { factor: 0.5 }, named: "reconnect.factor" },
    { reconnect: { factor: Number.NaN }, named: "reconnect.factor" },
  ])("refuses $named out of range where the transport is made", ({ reconnect, named }) => {
    expect(() => new StreamableHttpClientTransport({ url: "http://127.0.0.1:1/mcp", reconnect })).toThrow(
      new RegExp(`^${named.replace(".", "\\.")} must be`),
    );
  });
});

describe("resuming a finished stream", () => {
  it("replays it, then stops after the attempt bound instead of polling an empty stream forever", async () => {
    // A store that never frees a finished stream early: every GET finds it, replayed to its end, then empty.
    const store = new InMemoryEventStore();
    server = await startServer({
      eventStore: {
        append: store.append.bind(store),
        replayAfter: store.replayAfter.bind(store),
        deleteSession: store.deleteSession.bind(store),
      },
    });
    const tokens: string[] = [];
    const h = harness({
      standaloneStream: "manual",
      onResumptionToken: (t, info) => void (info.requestId === 6 && tokens.push(t)),
    });
    await connect(h);
    await h.request(6, "progress", { count: 1 });
    const log = { bodyEnds: [] as number[], gets: [] as number[] };
    const h2 = harness({
      standaloneStream: "manual",
      sessionId: h.client.sessionId,
      protocolVersion: "2025-11-25",
      terminateOnClose: false,
      fetch: timingFetch(log),
      reconnect: { maxAttempts: 2, initialDelayMs: 5, maxDelayMs: 10 },
    });
    // Without the request id the transport cannot know the stream is finished.
    await h2.client.resumeStream(tokens[0]);
    await until(() => h2.errors.length > 0);
    expect(h2.errors[0]).toBeInstanceOf(StreamLostError);
    expect(log.gets).toHaveLength(3);
    expect(progressOf(h2.messages, "6")).toEqual([1]);
    expect(h2.messages.filter((m) => m.id === 6)).toHaveLength(1);
  });
});

describe("session expiry", () => {
  it("a 404 on the session id clears it, tells the app, fails in-flight requests, and a new session can start", async () => {
    server = await startServer();
    const h = harness({ standaloneStream: "manual" });
    const expired: SessionExpiredError[] = [];
    h.client.onsessionexpired = (e) => expired.push(e);
    await connect(h);
    const oldId = h.client.sessionId!;
    await h.client.send({ jsonrpc: "2.0", id: 1, method: "wait", params: { gate: "x", before: 1, after: 1 } });
    await until(() => progressOf(h.messages, "1").length === 1);
    // The server forgets the session behind the client's back.
    await server.responder.transports[0].close();
    await expect(h.client.send({ jsonrpc: "2.0", id: 2, method: "echo" })).rejects.toBeInstanceOf(SessionExpiredError);
    expect(expired.map((e) => e.sessionId)).toEqual([oldId]);
    expect(h.client.sessionId).toBeUndefined();
    expect(await h.response(1)).toMatchObject({
      error: { code: CONNECTION_LOST_CODE, data: { reason: "session-expired" } },
    });
    // Start over.
    await h.client.send(initializeMessage(10));
    await h.response(10);
    expect(h.client.sessionId).toBeDefined();
    expect(h.client.sessionId).not.toBe(oldId);
    expect((await h.request(11, "echo")).result).toMatchObject({ sessionId: h.client.sessionId });
  });

  it("close() sends DELETE, ending the server session", async () => {
    server = await startServer();
    const h = harness({ standaloneStream: "manual" });
    let closed = 0;
    h.client.onclose = () => closed++;
    await connect(h);
    const sid = h.client.sessionId!;
    await h.client.close();
    expect(closed).toBe(1);
    expect(server.responder.closed.map((t) => t.sessionId)).toEqual([sid]);
    expect(server.mcp.sessions.size).toBe(0);
  });
});
