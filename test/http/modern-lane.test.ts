// MCP 2026-07-28 beside 2025-11-25 on one endpoint: each POST classified by its body, the per-request lane's headers
// checked, its replies (JSON first, error statuses, SSE when needed) and a closed stream cancelling its request.
import { describe, expect, it } from "vitest";
import type { Socket } from "node:net";
import { ErrorCode, type JsonObject, type JsonRpcMessage, type RequestId } from "../../runtime/rpc/jsonrpc.js";
import type { MethodSpec } from "../../runtime/rpc/dispatch.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { Session } from "../../runtime/rpc/session/session.js";
import { createStreamableHttpServer, type HttpServerTransport } from "../../runtime/transports/http/server/server.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, until } from "../kit/timing.js";
import { ACCEPT_BOTH, initialize, initializeMessage, post, readSse, serverPerTest, sessionHeaders } from "./helpers.js";

const start = serverPerTest();
const cleanup = closeAfterEach();

const VERSION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "modern-client", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const HEADER_MISMATCH = -32020;

/** A 2026-07-28 request: the envelope in `_meta`. */
function modern(id: RequestId, method: string, params: JsonObject = {}): JsonRpcMessage {
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: META } };
}

/** The headers a 2026-07-28 client mirrors from such a request. */
function mirrored(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = { "mcp-protocol-version": VERSION, "mcp-method": method };
  if (name !== undefined) headers["mcp-name"] = name;
  return headers;
}

const base64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;

/** A stand-in session that answers each request with the error its params name (`code`), or with its params. */
function answering(t: HttpServerTransport): void {
  t.onmessage = (message) => {
    const m = message as { id?: RequestId; params?: { code?: number } };
    if (m.id === undefined) return;
    const code = m.params?.code;
    const reply: JsonRpcMessage =
      code === undefined
        ? { jsonrpc: "2.0", id: m.id, result: { params: m.params as JsonObject } }
        : { jsonrpc: "2.0", id: m.id, error: { code, message: `error ${code}` } };
    void t.send(reply, { relatedRequestId: m.id }).catch(() => undefined);
  };
}

describe("classification: the body decides the lane", () => {
  it("an enveloped request gets a transport of its own, marked perRequest, and a JSON reply without session id", async () => {
    const server = await start();
    const res = await post(server.url, modern(1, "echo", { m: 1 }), mirrored("echo"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(await res.json()).toMatchObject({ id: 1, result: { echo: { m: 1 }, sessionId: null } });
    const [transport] = server.responder.transports;
    expect(transport.sessionId).toBeUndefined();
    expect(transport.perRequest).toBe(true);
    expect(server.responder.received[0].info?.reply?.lossCancels).toBe(true);
    expect(server.mcp.sessions.size).toBe(0);
    // It ends with its request.
    await until(() => server.responder.closed.includes(transport));
  });

  it("an enveloped request naming a live session is served on a transport of its own; the id is ignored, not echoed", async () => {
    const server = await start();
    const sid = await initialize(server.url);
    const res = await post(server.url, modern(2, "echo", { m: 2 }), { ...mirrored("echo"), "mcp-session-id": sid });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(await res.json()).toMatchObject({ id: 2, result: { sessionId: null } });
    expect(server.responder.transports).toHaveLength(2);
    expect(server.responder.transports[1].perRequest).toBe(true);
    // The session itself goes on as before.
    const legacy = await readSse(
      await post(server.url, { jsonrpc: "2.0", id: 3, method: "echo", params: {} }, sessionHeaders(sid)),
    );
    expect(legacy.messages.at(-1)).toMatchObject({ id: 3, result: { sessionId: sid } });
  });

  it("initialize and session traffic stay on the sessionful lane: a session id, SSE with event ids, no lossCancels", async () => {
    const server = await start();
    const first = await post(server.url, initializeMessage());
    const sid = first.headers.get("mcp-session-id");
    expect(sid).toBeTruthy();
    await readSse(first);
    const [transport] = server.responder.transports;
    expect(transport.perRequest).toBe(false);
    const res = await post(server.url, { jsonrpc: "2.0", id: 4, method: "echo" }, sessionHeaders(sid!));
    expect(res.headers.get("mcp-session-id")).toBe(sid);
    const read = await readSse(res);
    expect(read.events.every((e) => e.id !== "")).toBe(true);
    expect(server.responder.received.at(-1)?.info?.reply?.lossCancels).toBe(false);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid!) } });
    expect(get.status).toBe(200);
    await get.body?.cancel();
    expect((await fetch(server.url, { method: "DELETE", headers: sessionHeaders(sid!) })).status).toBe(200);
  });

  it("a stateless server serves enveloped requests on the same lane, and the rest as before", async () => {
    const server = await start({ stateless: true });
    const res = await post(server.url, modern(5, "echo"), mirrored("echo"));
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({ id: 5, result: {} });
    expect(server.responder.received[0].info?.reply?.lossCancels).toBe(true);
    const legacy = await post(server.url, { jsonrpc: "2.0", id: 6, method: "echo" });
    expect(legacy.headers.get("content-type")).toBe("text/event-stream");
    expect((await readSse(legacy)).messages.at(-1)).toMatchObject({ id: 6 });
    expect(server.responder.received[1].info?.reply?.lossCancels).toBe(false);
    expect(server.responder.transports.every((t) => t.perRequest)).toBe(true);
  });

  it("no envelope, session or initialize: 400 -32600 as before, but the per-request lane when MCP-Protocol-Version names another era", async () => {
    const server = await start();
    const plain = { jsonrpc: "2.0", id: 7, method: "echo" };
    const legacyHeaders: Record<string, string>[] = [{}, { "mcp-protocol-version": "2025-11-25" }];
    for (const headers of legacyHeaders) {
      const res = await post(server.url, plain, headers);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: { code: ErrorCode.InvalidRequest, message: expect.stringMatching(/Mcp-Session-Id/) },
      });
    }
    expect(server.responder.transports).toHaveLength(0);
    // A 2026-07-28 client whose envelope is missing: its session is told so (-32602 in the session's terms).
    const res = await post(server.url, plain, mirrored("echo"));
    expect(res.status).toBe(200);
    expect(server.responder.transports).toHaveLength(1);
    expect(server.responder.transports[0]!.perRequest).toBe(true);
    expect(server.responder.received[0]!.info?.protocolVersion).toBe(VERSION);
  });

  it("stateless, too: a request naming a version the lane does not speak goes to the per-request lane", async () => {
    const server = await start({ stateless: true });
    await post(server.url, { jsonrpc: "2.0", id: 8, method: "echo" }, mirrored("echo"));
    expect(server.responder.received[0]!.info?.protocolVersion).toBe(VERSION);
    expect(server.responder.received[0]!.info?.reply?.lossCancels).toBe(true);
  });
});

describe("header validation on the 2026-07-28 lane", () => {
  const call = modern(9, "tools/call", { name: "get_weather", arguments: { region: "us-west1" } });
  const good = mirrored("tools/call", "get_weather");

  it.each([
    ["MCP-Protocol-Version missing", { ...good, "mcp-protocol-version": undefined }],
    ["MCP-Protocol-Version differing from the envelope", { ...good, "mcp-protocol-version": "2025-11-25" }],
    ["Mcp-Method missing", { ...good, "mcp-method": undefined }],
    ["Mcp-Method differing from the method", { ...good, "mcp-method": "tools/list" }],
    ["Mcp-Name missing", { ...good, "mcp-name": undefined }],
    ["Mcp-Name differing from the tool", { ...good, "mcp-name": "other" }],
    ["Mcp-Name decoding to another tool", { ...good, "mcp-name": base64("other") }],
    ["Mcp-Name with a character outside visible ASCII", { ...good, "mcp-name": "get_weather\u00e9" }],
    ["Mcp-Name in a broken Base64 form", { ...good, "mcp-name": "=?base64?!!?=" }],
    ["Mcp-Param-Region missing", { ...good, "mcp-param-region": undefined }],
    ["Mcp-Param-Region differing from the argument", { ...good, "mcp-param-region": "eu-west1" }],
  ])("%s: 400 and -32020 with the request's id; nothing reaches a session", async (_what, headers) => {
    const server = await start({
      headerParams: (tool) => (tool === "get_weather" ? [{ path: ["region"], header: "Region" }] : undefined),
    });
    const sent = Object.fromEntries(
      Object.entries({ "mcp-param-region": "us-west1", ...headers }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>;
    const res = await post(server.url, call, sent);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 9,
      error: { code: HEADER_MISMATCH, message: expect.stringMatching(/^Header mismatch: /) },
    });
    expect(server.responder.transports).toHaveLength(0);
  });

  it("takes Base64 sentinels for Mcp-Name and Mcp-Param once decoded, and upper-case header names", async () => {
    const server = await start({
      onSession: answering,
      headerParams: () => [{ path: ["greeting"], header: "Greeting" }],
    });
    const res = await post(
      server.url,
      modern(10, "tools/call", { name: "天気", arguments: { greeting: "Hello, 世界" } }),
      {
        "MCP-Protocol-Version": VERSION,
        "MCP-METHOD": "tools/call",
        "Mcp-Name": base64("天気"),
        "MCP-PARAM-GREETING": "=?base64?SGVsbG8sIOS4lueVjA==?=",
      },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 10, result: { params: { name: "天気" } } });
  });
});

describe("the HTTP status of an error reply on the 2026-07-28 lane", () => {
  it.each([
    [ErrorCode.InvalidRequest, 400],
    [ErrorCode.InvalidParams, 400],
    [HEADER_MISMATCH, 400],
    [-32021, 400],
    [-32022, 400],
    [ErrorCode.MethodNotFound, 404],
    [ErrorCode.InternalError, 200],
    [ErrorCode.ServerBusy, 200],
  ])("%i: %i, with the JSON-RPC error as the body", async (code, status) => {
    const server = await start({ onSession: answering });
    const res = await post(server.url, modern(11, "anything", { code }), mirrored("anything"));
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 11, error: { code, message: `error ${code}` } });
  });

  it("the stand-in session's method-not-found is a 404 whose body tells it from a legacy server's", async () => {
    const server = await start();
    const res = await post(server.url, modern(12, "no/such"), mirrored("no/such"));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ id: 12, error: { code: ErrorCode.MethodNotFound } });
  });

  it("the sessionful lane keeps 200 for the same error (JSON replies there)", async () => {
    const server = await start({ responseMode: "json" });
    const sid = await initialize(server.url);
    const res = await post(server.url, { jsonrpc: "2.0", id: 13, method: "no/such" }, sessionHeaders(sid));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 13, error: { code: ErrorCode.MethodNotFound } });
  });
});

describe("replies on the 2026-07-28 lane", () => {
  it("turn into an SSE stream when a related message comes first: no event ids, no session id, not buffered", async () => {
    const server = await start();
    const res = await post(server.url, modern(14, "progress", { count: 2 }), mirrored("progress"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    expect(res.headers.get("mcp-session-id")).toBeNull();
    const read = await readSse(res);
    expect(read.messages.map((m) => m.method ?? m.id)).toEqual([
      "notifications/progress",
      "notifications/progress",
      14,
    ]);
    expect(read.events.every((e) => e.id === "")).toBe(true);
  });

  it("answer a notification 202 with no body, whatever its headers, and hand it to a transport that then ends", async () => {
    const server = await start();
    const res = await post(server.url, { jsonrpc: "2.0", method: "notifications/something", params: { _meta: META } });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
    expect(server.responder.received[0].message).toMatchObject({ method: "notifications/something" });
    expect(server.responder.transports[0].perRequest).toBe(true);
    await until(() => server.responder.closed.length === 1);
  });
});

const anyParams: MethodSpec = { kind: "request", paramsType: "Params", isParams: () => true, explainParams: () => [] };

/**
 * A real JSON-RPC session per transport: `park` holds until released or aborted, recording the abort; `chatty`
 * sends a log line first (so its reply turns into SSE), then parks.
 */
function parkingSessions() {
  const hold = gate();
  const state = { started: 0, aborted: [] as unknown[], release: hold.open };
  const park = async (ctx: RequestContext) => {
    state.started++;
    ctx.signal.addEventListener("abort", () => state.aborted.push(ctx.signal.reason));
    await Promise.race([hold.promise, new Promise((resolve) => ctx.signal.addEventListener("abort", resolve))]);
    return {};
  };
  const onSession = async (transport: HttpServerTransport) => {
    const session = new Session({ inbound: { park: anyParams, chatty: anyParams } });
    session.onRequest("park", (_params, ctx) => park(ctx));
    session.onRequest("chatty", async (_params, ctx) => {
      await ctx.notify("notifications/message", { level: "info", data: "working" });
      return park(ctx);
    });
    cleanup(() => session.close());
    await session.connect(transport);
  };
  return { state, onSession };
}

/** POSTs a modern request whose connection the test can drop. */
function openModern(url: string, id: RequestId, method: string) {
  const abort = new AbortController();
  const sent = fetch(url, {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...mirrored(method) },
    body: JSON.stringify(modern(id, method)),
    signal: abort.signal,
  });
  sent.catch(() => undefined);
  return { sent, drop: () => abort.abort() };
}

describe("a closed stream cancels the request (2026-07-28)", () => {
  it("a JSON reply nobody waits for any more: the handler's signal fires, the transport ends", async () => {
    const { state, onSession } = parkingSessions();
    const closed: HttpServerTransport[] = [];
    const server = await start({
      onSession: async (t) => {
        await onSession(t);
        const sessionClose = t.onclose;
        t.onclose = () => {
          closed.push(t);
          sessionClose?.();
        };
      },
    });
    const request = openModern(server.url, 15, "park");
    await until(() => state.started === 1);
    request.drop();
    await until(() => state.aborted.length === 1, 10_000, "the handler was aborted");
    expect(state.aborted[0]).toBeInstanceOf(RequestCancelledError);
    await until(() => closed.length === 1);
    state.release();
  });

  it("an SSE reply whose stream the client closes: the handler's signal fires", async () => {
    const { state, onSession } = parkingSessions();
    const server = await start({ onSession });
    const request = openModern(server.url, 16, "chatty");
    const res = await request.sent;
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const read = await readSse(res, (r) => r.messages.length === 1);
    expect(read.messages[0]).toMatchObject({ method: "notifications/message" });
    await until(() => state.started === 1);
    request.drop();
    await until(() => state.aborted.length === 1, 10_000, "the handler was aborted");
    expect(state.aborted[0]).toBeInstanceOf(RequestCancelledError);
    state.release();
  });

  it("a client gone while its request was being let in: the request never reaches its handler", async () => {
    const { state, onSession } = parkingSessions();
    const letIn = gate();
    const entered = gate();
    const closed: HttpServerTransport[] = [];
    const server = await start({
      onSession: async (t) => {
        entered.open();
        await letIn.promise;
        await onSession(t);
        const sessionClose = t.onclose;
        t.onclose = () => {
          closed.push(t);
          sessionClose?.();
        };
      },
    });
    const closedSockets: Socket[] = [];
    server.http.on("connection", (socket: Socket) => socket.on("close", () => closedSockets.push(socket)));
    const request = openModern(server.url, 17, "park");
    await entered.promise;
    request.drop();
    await until(() => closedSockets.length === 1);
    letIn.open();
    await until(() => closed.length === 1, 10_000, "the transport ended");
    expect(state.started).toBe(0);
  });
});

describe("what applies to both lanes, and what does not", () => {
  it("the session quotas do not count per-request transports: modern requests pass while the quotas are full", async () => {
    const server = await start({ maxSessionsPerPrincipal: 1, maxSessions: 1 });
    await initialize(server.url);
    const refused = await post(server.url, initializeMessage(1));
    expect(refused.status).toBe(429);
    const waits = [1, 2, 3].map((n) =>
      post(server.url, modern(20 + n, "wait", { gate: "g", before: 0, after: 0 }), mirrored("wait")),
    );
    await until(() => server.responder.received.filter((r) => (r.message as { id?: unknown }).id !== 0).length === 3);
    server.responder.open("g");
    for (const res of await Promise.all(waits)) {
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ result: { done: 0 } });
    }
    expect(server.mcp.sessions.size).toBe(1);
  });

  it("Host/Origin, authentication, authorization and the body limit come first", async () => {
    const refusals: string[] = [];
    const server = await start({
      maxBodyBytes: 2048,
      authenticate: (request) => (request.headers["authorization"] === "Bearer ok" ? "alice" : undefined),
      authorize: (message) => {
        if ((message as { method?: string }).method !== "forbidden") return undefined;
        refusals.push("forbidden");
        return { status: 403, message: "Forbidden" };
      },
    });
    const auth = { authorization: "Bearer ok" };
    const echo = modern(30, "echo");
    expect((await post(server.url, echo, { ...mirrored("echo"), ...auth, origin: "http://evil.example" })).status).toBe(
      403,
    );
    expect((await post(server.url, echo, mirrored("echo"))).status).toBe(401);
    const big = modern(31, "echo", { pad: "x".repeat(4096) });
    expect((await post(server.url, big, { ...mirrored("echo"), ...auth })).status).toBe(413);
    // Authorization sees the message before its headers are checked (none are sent here).
    const forbidden = await post(server.url, modern(32, "forbidden"), auth);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ id: 32 });
    expect(refusals).toEqual(["forbidden"]);
    expect(server.responder.transports).toHaveLength(0);
    const ok = await post(server.url, echo, { ...mirrored("echo"), ...auth });
    expect(await ok.json()).toMatchObject({ id: 30, result: { principal: "alice" } });
  });
});

describe("the 2026-07-28 lane through the fetch handler", () => {
  const request = (body: JsonRpcMessage, method: string, signal?: AbortSignal) =>
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { host: "127.0.0.1", accept: ACCEPT_BOTH, "content-type": "application/json", ...mirrored(method) },
      body: JSON.stringify(body),
      signal,
    });

  it("answers with the mapped status and no session id", async () => {
    const mcp = createStreamableHttpServer({ onSession: answering });
    cleanup(() => mcp.close());
    const res = await mcp.fetch(request(modern(60, "x", { code: ErrorCode.MethodNotFound }), "x"));
    expect(res.status).toBe(404);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(await res.json()).toMatchObject({ id: 60, error: { code: ErrorCode.MethodNotFound } });
  });

  it("a request whose signal aborts while its JSON reply is pending aborts its handler", async () => {
    const { state, onSession } = parkingSessions();
    const mcp = createStreamableHttpServer({ onSession });
    cleanup(() => mcp.close());
    const abort = new AbortController();
    void mcp.fetch(request(modern(61, "park"), "park", abort.signal));
    await until(() => state.started === 1);
    abort.abort();
    await until(() => state.aborted.length === 1, 10_000, "the handler was aborted");
    expect(state.aborted[0]).toBeInstanceOf(RequestCancelledError);
    state.release();
  });
});

describe("CORS for 2026-07-28 pages", () => {
  it("a preflight may send the mirrored headers, Mcp-Param ones included, and the request then goes through", async () => {
    const app = "http://localhost:5173";
    const server = await start({ cors: { allowedOrigins: [app] } });
    const preflight = await fetch(server.url, {
      method: "OPTIONS",
      headers: {
        origin: app,
        "access-control-request-method": "POST",
        "access-control-request-headers":
          "content-type, mcp-protocol-version, mcp-method, mcp-name, Mcp-Param-Region, mcp-param-region, mcp-param-a(b)",
      },
    });
    expect(preflight.status).toBe(204);
    const allowed = preflight.headers.get("access-control-allow-headers")!.split(", ");
    expect(allowed).toEqual(
      expect.arrayContaining(["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region"]),
    );
    expect(allowed.filter((h) => h.startsWith("mcp-param-"))).toEqual(["mcp-param-region"]);
    const res = await post(server.url, modern(50, "echo"), {
      ...mirrored("echo"),
      origin: app,
      "mcp-param-region": "x",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(app);
  });
});

describe("requests on transports of their own: maxStatelessRequests, close()", () => {
  const wait = (id: RequestId, name: string) => modern(id, "wait", { gate: name, before: 0, after: 0 });

  it("past maxStatelessRequests a POST gets 503 with Retry-After and -32000, and opens nothing; a freed place serves", async () => {
    const server = await start({ maxStatelessRequests: 2 });
    const held = [40, 41].map((id) => post(server.url, wait(id, "g"), mirrored("wait")));
    await until(() => server.responder.received.length === 2);
    const refused = await post(server.url, modern(42, "echo"), mirrored("echo"));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      id: 42,
      error: {
        code: ErrorCode.ServerBusy,
        message: expect.stringContaining("maxStatelessRequests 2"),
        data: { maxStatelessRequests: 2 },
      },
    });
    expect(server.responder.transports).toHaveLength(2);
    // A session does not count against it.
    const sid = await initialize(server.url);
    expect(sid).toBeTruthy();
    server.responder.open("g");
    for (const res of await Promise.all(held)) expect(res.status).toBe(200);
    await until(() => server.responder.closed.length === 2);
    expect((await post(server.url, modern(43, "echo"), mirrored("echo"))).status).toBe(200);
  });

  it("counts stateless mode's transports too", async () => {
    const server = await start({ stateless: true, maxStatelessRequests: 1 });
    const held = post(server.url, {
      jsonrpc: "2.0",
      id: 44,
      method: "wait",
      params: { gate: "g", before: 0, after: 0 },
    });
    await until(() => server.responder.received.length === 1);
    const refused = await post(server.url, { jsonrpc: "2.0", id: 45, method: "echo" });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ id: 45, error: { code: ErrorCode.ServerBusy } });
    server.responder.open("g");
    expect((await held).status).toBe(200);
  });

  it("a closed connection ends its transport even when nothing above watches it, and frees its place", async () => {
    const server = await start({ maxStatelessRequests: 1 });
    const abort = new AbortController();
    const sent = fetch(server.url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...mirrored("wait"),
      },
      body: JSON.stringify(wait(46, "never")),
      signal: abort.signal,
    });
    sent.catch(() => undefined);
    await until(() => server.responder.received.length === 1);
    abort.abort();
    // The stand-in never answers and watches no connection: the transport ends on its own.
    await until(() => server.responder.closed.length === 1, 10_000, "the transport ended");
    expect((await post(server.url, modern(47, "echo"), mirrored("echo"))).status).toBe(200);
  });

  it("close() ends requests in flight on transports of their own: a pending JSON reply gets 503", async () => {
    const server = await start();
    const held = post(server.url, wait(48, "never"), mirrored("wait"));
    await until(() => server.responder.received.length === 1);
    await server.mcp.close();
    const res = await held;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: ErrorCode.ConnectionLost } });
    expect(server.responder.closed).toHaveLength(1);
  });
});
