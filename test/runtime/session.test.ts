// Session core: ids, correlation, every JSON-RPC error path, result validation, handler context, close.
import { describe, expect, it } from "vitest";
import { ErrorCode, RpcError, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ConnectionClosedError, InvalidResultError } from "../../runtime/rpc/errors.js";
import { Session, type SessionDebugEvent } from "../../runtime/rpc/session/session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { rawPeer, sessionPair } from "./helpers.js";
import { settle } from "../kit/timing.js";
import { session } from "./helpers.js";

const ok = { content: [{ type: "text", text: "ok" }] };

async function withEcho() {
  const peer = await rawPeer();
  peer.server.onRequest("tools/call", (params) => ({ content: [{ type: "text", text: String(params?.name) }] }));
  return peer;
}

/** Proves the session still serves after an error: a valid call gets its normal answer. */
async function stillServes(peer: Awaited<ReturnType<typeof withEcho>>, id: number | string = 999) {
  peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "after" } });
  expect(await peer.next()).toEqual({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "after" }] } });
}

describe("request ids and correlation", () => {
  it("numbers outbound requests from 0 upward and correlates responses", async () => {
    const { client, server, clientWire } = await sessionPair();
    server.onRequest("tools/call", (p) => ({ content: [{ type: "text", text: String(p?.name) }] }));
    const results = await Promise.all([
      client.request("tools/call", { name: "a" }),
      client.request("tools/call", { name: "b" }),
      client.request("tools/call", { name: "c" }),
    ]);
    expect(results.map((r) => (r.content as { text: string }[])[0].text)).toEqual(["a", "b", "c"]);
    expect(clientWire.map((s) => (s.message as { id?: unknown }).id)).toEqual([0, 1, 2]);
    expect(client.operations.size).toBe(0);
  });

  it("answers a peer's id 0 and string ids with the same id, keeping 1 and '1' apart", async () => {
    const peer = await withEcho();
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 0, method: "tools/call", params: { name: "zero" } });
    expect(await peer.next()).toEqual({ jsonrpc: "2.0", id: 0, result: { content: [{ type: "text", text: "zero" }] } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: "1", method: "tools/call", params: { name: "str" } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "num" } });
    const answers = [await peer.next(), await peer.next()] as { id: unknown; result: JsonObject }[];
    expect(answers).toContainEqual({ jsonrpc: "2.0", id: "1", result: { content: [{ type: "text", text: "str" }] } });
    expect(answers).toContainEqual({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "num" }] } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: "", method: "tools/call", params: { name: "empty" } });
    expect(await peer.next()).toMatchObject({ id: "" });
  });

  it("routes a response with id 0 to the first request", async () => {
    const [raw, end] = createInMemoryPair();
    const client = session("client");
    raw.onmessage = (m) => {
      const req = m as { id: number };
      void raw.send({ jsonrpc: "2.0", id: req.id, result: { content: [], echo: req.id } });
    };
    await raw.start();
    await client.connect(end);
    expect(await client.request("tools/call", { name: "x" })).toEqual({ content: [], echo: 0 });
  });
});

describe("JSON-RPC error paths (the session keeps serving after each)", () => {
  it("-32700 without id for a frame that did not parse", async () => {
    const peer = await withEcho();
    peer.serverEnd.receiveMalformed(new SyntaxError("Unexpected token"));
    const reply = (await peer.next()) as JsonObject;
    expect(reply).toMatchObject({ jsonrpc: "2.0", error: { code: ErrorCode.ParseError } });
    expect("id" in reply).toBe(false);
    await stillServes(peer);
  });

  it("-32600 without id for non-objects (number, string, null, array batch)", async () => {
    const peer = await withEcho();
    for (const frame of [42, "hello", null, [{ jsonrpc: "2.0", id: 1, method: "ping" }]]) {
      peer.serverEnd.receiveRaw(frame);
      const reply = (await peer.next()) as JsonObject;
      expect(reply).toMatchObject({ jsonrpc: "2.0", error: { code: ErrorCode.InvalidRequest } });
      expect("id" in reply).toBe(false);
    }
    await stillServes(peer);
  });

  it("-32600 with the id when the envelope is bad but the id is readable", async () => {
    const peer = await withEcho();
    peer.serverEnd.receiveRaw({ jsonrpc: "1.0", id: 7, method: "tools/call", params: { name: "x" } });
    expect(await peer.next()).toMatchObject({ id: 7, error: { code: ErrorCode.InvalidRequest } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 0, method: 12 });
    expect(await peer.next()).toMatchObject({ id: 0, error: { code: ErrorCode.InvalidRequest } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: "p", method: "tools/call", params: [1, 2] });
    expect(await peer.next()).toMatchObject({ id: "p", error: { code: ErrorCode.InvalidRequest } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: { x: 1 }, method: "tools/call" });
    const reply = (await peer.next()) as JsonObject;
    expect(reply).toMatchObject({ error: { code: ErrorCode.InvalidRequest } });
    expect("id" in reply).toBe(false);
    await stillServes(peer);
  });

  it("uses a supplied envelope guard instead of the default one", async () => {
    const peer = await rawPeer({
      isMessage: (v) => (v as JsonObject).jsonrpc === "2.0" && (v as JsonObject).id !== 13,
    });
    peer.server.onRequest("tools/call", () => ok);
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 13, method: "tools/call", params: { name: "x" } });
    expect(await peer.next()).toMatchObject({ id: 13, error: { code: ErrorCode.InvalidRequest } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 14, method: "tools/call", params: { name: "x" } });
    expect(await peer.next()).toMatchObject({ id: 14, result: ok });
  });

  it("-32601 for a method outside the table, and for one in the table without a handler", async () => {
    const peer = await withEcho();
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "no/such" });
    expect(await peer.next()).toMatchObject({ id: 1, error: { code: ErrorCode.MethodNotFound } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(await peer.next()).toMatchObject({ id: 2, error: { code: ErrorCode.MethodNotFound } });
    // Names of Object.prototype members are not methods.
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 3, method: "constructor" });
    expect(await peer.next()).toMatchObject({ id: 3, error: { code: ErrorCode.MethodNotFound } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 4, method: "__proto__" });
    expect(await peer.next()).toMatchObject({ id: 4, error: { code: ErrorCode.MethodNotFound } });
    // A notification name used as a request.
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 5, method: "notifications/initialized" });
    expect(await peer.next()).toMatchObject({ id: 5, error: { code: ErrorCode.MethodNotFound } });
    await stillServes(peer);
  });

  it("-32602 with error.data.errors from explainParams", async () => {
    const peer = await withEcho();
    let called = false;
    peer.server.onRequest("tools/call", () => {
      called = true;
      return ok;
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5, arguments: "no" } });
    expect(await peer.next()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: ErrorCode.InvalidParams,
        message: "Invalid params for tools/call",
        data: {
          errors: [
            { pointer: "/name", message: "must be a string" },
            { pointer: "/arguments", message: "must be an object" },
          ],
        },
      },
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 2, method: "tools/call" });
    expect(await peer.next()).toMatchObject({
      id: 2,
      error: { code: ErrorCode.InvalidParams, data: { errors: [{ pointer: "" }] } },
    });
    expect(called).toBe(false);
    peer.server.onRequest("tools/call", (p) => ({ content: [{ type: "text", text: String(p?.name) }] }));
    await stillServes(peer);
  });

  it("-32603 when a handler throws, the RpcError's own code and data when it throws one", async () => {
    const peer = await withEcho();
    peer.server.onRequest("tools/list", async (p) => {
      if (p?.cursor === "rpc") throw new RpcError(-32002, "Resource not found", { uri: "file:///x" });
      if (p?.cursor === "bad") return [1, 2] as unknown as JsonObject;
      throw new Error("boom");
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(await peer.next()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: ErrorCode.InternalError, message: "boom" },
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: "rpc" } });
    expect(await peer.next()).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32002, message: "Resource not found", data: { uri: "file:///x" } },
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { cursor: "bad" } });
    expect(await peer.next()).toMatchObject({ id: 3, error: { code: ErrorCode.InternalError } });
    peer.server.onRequest("tools/list", () => {
      throw new Error("sync boom");
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 4, method: "tools/list" });
    expect(await peer.next()).toMatchObject({ id: 4, error: { code: ErrorCode.InternalError, message: "sync boom" } });
    await stillServes(peer);
  });

  it("-32600 for a request reusing an id that is still in flight", async () => {
    const peer = await rawPeer();
    let release!: () => void;
    peer.server.onRequest("tools/call", () => new Promise<JsonObject>((r) => (release = () => r(ok))));
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a" } });
    await settle();
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "b" } });
    expect(await peer.next()).toMatchObject({ id: 1, error: { code: ErrorCode.InvalidRequest } });
    release();
    expect(await peer.next()).toEqual({ jsonrpc: "2.0", id: 1, result: ok });
  });

  it("reports a response for an unknown id to onerror without throwing or replying", async () => {
    const errors: Error[] = [];
    const peer = await rawPeer({ onerror: (e) => errors.push(e) });
    peer.server.onRequest("tools/call", () => ok);
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 12345, result: {} });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } });
    await settle();
    expect(errors).toHaveLength(2);
    expect(errors[0].message).toMatch(/unknown request id 12345/);
    expect(errors[1]).toBeInstanceOf(RpcError);
    expect(peer.received).toEqual([]);
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
    expect(await peer.next()).toMatchObject({ id: 1, result: ok });
  });

  it("ignores notifications with unknown methods or bad params, telling only the debug hook", async () => {
    const debug: SessionDebugEvent[] = [];
    const { client, server, serverWire } = await sessionPair({ ondebug: (e) => debug.push(e) });
    await client.notify("notifications/unknown", { x: 1 });
    await settle();
    expect(debug).toEqual([{ kind: "unknown-notification", method: "notifications/unknown" }]);
    expect(serverWire).toEqual([]);
    server.onRequest("tools/call", () => ok);
    expect(await client.request("tools/call", { name: "x" })).toEqual(ok);
  });

  it("delivers notifications to their handler, and a handler error goes to onerror", async () => {
    const errors: Error[] = [];
    const { client, server } = await sessionPair({}, { onerror: (e) => errors.push(e) });
    const got: unknown[] = [];
    client.onNotification("notifications/message", (p) => {
      got.push(p);
      if (p?.level === "error") throw new Error("handler failed");
    });
    await server.notify("notifications/message", { level: "info", data: "hello" });
    await server.notify("notifications/message", { level: "error", data: "x" });
    await server.notify("notifications/message", { data: "no level" });
    await settle();
    expect(got).toEqual([
      { level: "info", data: "hello" },
      { level: "error", data: "x" },
    ]);
    expect(errors.map((e) => e.message)).toEqual(["handler failed"]);
  });
});

describe("responses to our requests", () => {
  it("rejects with the peer's RpcError code, message and data", async () => {
    const { client, server } = await sessionPair();
    server.onRequest("tools/call", () => {
      throw new RpcError(-32042, "URL elicitation required", { elicitations: [] });
    });
    const error = await client.request("tools/call", { name: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32042, message: "URL elicitation required", data: { elicitations: [] } });
  });

  it("rejects a result failing the outbound isResult with InvalidResultError and its issues", async () => {
    const { client, server } = await sessionPair();
    server.onRequest("tools/call", () => ({ content: "not an array" }));
    const error = await client.request("tools/call", { name: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).issues).toEqual([{ pointer: "/content", message: "must be an array" }]);
    expect((error as InvalidResultError).result).toEqual({ content: "not an array" });
    server.onRequest("tools/call", () => ok);
    expect(await client.request("tools/call", { name: "x" })).toEqual(ok);
  });

  it("fails a pending call when the peer answers it with a malformed response", async () => {
    const [raw, end] = createInMemoryPair();
    const client = session("client");
    const seen: unknown[] = [];
    raw.onmessage = (m) => {
      seen.push(m);
      end.receiveRaw({ jsonrpc: "2.0", id: (m as { id: number }).id, result: "not an object" });
    };
    await raw.start();
    await client.connect(end);
    await expect(client.request("tools/call", { name: "x" })).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
    expect(seen).toHaveLength(1);
  });
});

describe("handler context", () => {
  it("sends nested requests and notifications with relatedRequestId = the inbound id, and exposes the principal", async () => {
    const { client, server, serverWire } = await sessionPair();
    client.onRequest("sampling/createMessage", (p) => ({ role: "assistant", echoed: p?.messages }));
    let principal: string | undefined;
    server.onRequest("tools/call", async (_p, ctx) => {
      principal = ctx.principal;
      await ctx.notify("notifications/message", { level: "info", data: "working" });
      const sampled = await ctx.request("sampling/createMessage", { messages: ["hi"] });
      return { content: [{ type: "text", text: JSON.stringify(sampled.echoed) }] };
    });
    const result = await client.request("tools/call", { name: "x" });
    expect(result).toEqual({ content: [{ type: "text", text: '["hi"]' }] });
    expect(principal).toBe("alice");
    expect(
      serverWire.map((s) => [(s.message as { method?: string }).method ?? "response", s.options?.relatedRequestId]),
    ).toEqual([
      ["notifications/message", 0],
      ["sampling/createMessage", 0],
      ["response", 0],
    ]);
  });

  it("gives handlers requestId and method", async () => {
    const { client, server } = await sessionPair();
    server.onRequest("tools/call", (_p, ctx) => ({ content: [], id: ctx.requestId, method: ctx.method }));
    await client.request("tools/call", { name: "a" });
    expect(await client.request("tools/call", { name: "b" })).toEqual({ content: [], id: 1, method: "tools/call" });
  });
});

describe("closing", () => {
  it("rejects every pending request with ConnectionClosedError and frees timers, from either side", async () => {
    for (const closer of ["client", "server"] as const) {
      const pair = await sessionPair();
      let aborted: unknown;
      pair.server.onRequest("tools/call", (_p, ctx) => {
        ctx.signal.addEventListener("abort", () => (aborted = ctx.signal.reason));
        return new Promise<JsonObject>(() => {});
      });
      const pending = [
        pair.client.request("tools/call", { name: "a" }, { onProgress: () => {} }),
        pair.client.request("tools/call", { name: "b" }, { timeout: 100_000 }),
      ];
      const outcomes = Promise.allSettled(pending);
      await settle();
      expect(pair.client.operations.outbound.size).toBe(2);
      expect(pair.server.operations.inbound.size).toBe(2);
      let closed = 0;
      pair.client.onclose = () => closed++;
      await pair[closer].close();
      await settle();
      for (const outcome of await outcomes) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(ConnectionClosedError);
      }
      expect(closed).toBe(1);
      expect(pair.client.operations.size).toBe(0);
      expect(pair.client.operations.byProgressToken.size).toBe(0);
      expect(pair.server.operations.size).toBe(0);
      expect(aborted).toBeInstanceOf(ConnectionClosedError);
      expect(pair.client.isOpen).toBe(false);
      await expect(pair.client.request("tools/call", { name: "c" })).rejects.toBeInstanceOf(ConnectionClosedError);
      await expect(pair.client.notify("notifications/initialized")).rejects.toBeInstanceOf(ConnectionClosedError);
    }
  });

  it("delivers messages sent before a close, then closes the other end", async () => {
    const { client, server } = await sessionPair();
    let serverClosed = false;
    server.onclose = () => (serverClosed = true);
    const got: unknown[] = [];
    server.onNotification("notifications/initialized", (p) => {
      got.push(p ?? "none");
    });
    void client.notify("notifications/initialized");
    await client.close();
    await settle();
    expect(got).toEqual(["none"]);
    expect(serverClosed).toBe(true);
  });
});
