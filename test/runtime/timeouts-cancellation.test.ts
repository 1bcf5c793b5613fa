// Timeouts (plain, reset on progress with and without onProgress, maxTotalTimeout) and cancellation on both sides.
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { RequestCancelledError, RequestTimeoutError } from "../../runtime/rpc/errors.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import type { SessionDebugEvent } from "../../runtime/rpc/session/session.js";
import { sessionPair } from "./helpers.js";
import { settle, sleep } from "../kit/timing.js";

const ok = { content: [] };
const cancels = (wire: { message: JsonRpcMessage }[]) =>
  wire
    .filter((s) => "method" in s.message && s.message.method === "notifications/cancelled")
    .map((s) => (s.message as { params: JsonObject }).params);

/** A handler that reports progress every `every` ms for `total` ms, then answers. */
function slowWithProgress(every: number, total: number) {
  return async (_p: JsonObject | undefined, ctx: RequestContext) => {
    const start = Date.now();
    let n = 0;
    while (Date.now() - start < total) {
      await sleep(every);
      if (ctx.signal.aborted) throw new Error("aborted");
      await ctx.progress(++n);
    }
    return ok;
  };
}

describe("timeouts", () => {
  it("rejects with RequestTimeoutError (-32001), sends notifications/cancelled and aborts the handler", async () => {
    const { client, server, clientWire } = await sessionPair();
    let handlerSignal: AbortSignal | undefined;
    server.onRequest("tools/call", (_p, ctx) => {
      handlerSignal = ctx.signal;
      return new Promise<JsonObject>(() => {});
    });
    const error = await client.request("tools/call", { name: "x" }, { timeout: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).code).toBe(-32001);
    expect(cancels(clientWire)).toEqual([{ requestId: 0, reason: (error as Error).message }]);
    await settle();
    expect(handlerSignal!.aborted).toBe(true);
    expect(client.operations.size).toBe(0);
    expect(server.operations.size).toBe(0);
  });

  it("uses the session's default timeout", async () => {
    const { client, server } = await sessionPair({}, { defaultTimeout: 30 });
    server.onRequest("tools/call", () => new Promise<JsonObject>(() => {}));
    await expect(client.request("tools/call", { name: "x" })).rejects.toBeInstanceOf(RequestTimeoutError);
  });

  it("a late response after a timeout is dropped quietly", async () => {
    const errors: Error[] = [];
    const debug: SessionDebugEvent[] = [];
    const { client, server, clientEnd } = await sessionPair(
      {},
      { onerror: (e) => errors.push(e), ondebug: (e) => debug.push(e) },
    );
    // The handler ignores cancellation and answers late; the server's session drops it, so fake it on the wire.
    server.onRequest("tools/call", () => new Promise<JsonObject>(() => {}));
    await expect(client.request("tools/call", { name: "x" }, { timeout: 20 })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
    clientEnd.receiveRaw({ jsonrpc: "2.0", id: 0, result: ok });
    await settle();
    expect(errors).toEqual([]);
    expect(debug).toContainEqual({ kind: "late-response", id: 0 });
  });

  it("without resetTimeoutOnProgress, progress does not extend the deadline", async () => {
    const { client, server } = await sessionPair({ progressInterval: 0 });
    server.onRequest("tools/call", slowWithProgress(20, 300));
    const got: number[] = [];
    const error = await client
      .request("tools/call", { name: "x" }, { timeout: 100, onProgress: (p) => got.push(p.progress) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(got.length).toBeGreaterThan(0);
  });

  it("resetTimeoutOnProgress keeps a long call alive, with onProgress", async () => {
    const { client, server } = await sessionPair({ progressInterval: 0 });
    server.onRequest("tools/call", slowWithProgress(20, 300));
    const got: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "x" },
      { timeout: 100, resetTimeoutOnProgress: true, onProgress: (p) => got.push(p.progress) },
    );
    expect(result).toEqual(ok);
    expect(got.length).toBeGreaterThan(3);
  });

  it("resetTimeoutOnProgress works without onProgress (a token is still attached)", async () => {
    const { client, server } = await sessionPair({ progressInterval: 0 });
    let token: unknown;
    server.onRequest("tools/call", async (p, ctx) => {
      token = (p?._meta as JsonObject | undefined)?.progressToken;
      return slowWithProgress(20, 300)(p, ctx);
    });
    const result = await client.request("tools/call", { name: "x" }, { timeout: 100, resetTimeoutOnProgress: true });
    expect(result).toEqual(ok);
    expect(token).toBe(0);
  });

  it("maxTotalTimeout bounds the call however often progress resets the timeout", async () => {
    const { client, server, clientWire } = await sessionPair({ progressInterval: 0 });
    server.onRequest("tools/call", slowWithProgress(20, 2000));
    const start = Date.now();
    const error = await client
      .request("tools/call", { name: "x" }, { timeout: 100, resetTimeoutOnProgress: true, maxTotalTimeout: 250 })
      .catch((e: unknown) => e);
    const elapsed = Date.now() - start;
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toMatch(/maxTotalTimeout/);
    expect(elapsed).toBeGreaterThanOrEqual(240);
    expect(elapsed).toBeLessThan(1500);
    expect(cancels(clientWire)).toHaveLength(1);
  });
});

describe("cancellation", () => {
  it("caller abort sends notifications/cancelled, rejects, aborts the handler and suppresses its result", async () => {
    const { client, server, clientWire, serverWire } = await sessionPair();
    let reason: unknown;
    let finish!: () => void;
    server.onRequest("tools/call", (_p, ctx) => {
      ctx.signal.addEventListener("abort", () => (reason = ctx.signal.reason));
      return new Promise<JsonObject>((resolve) => (finish = () => resolve(ok)));
    });
    const controller = new AbortController();
    const call = client.request("tools/call", { name: "x" }, { signal: controller.signal });
    await settle();
    controller.abort("user pressed stop");
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestCancelledError);
    expect((error as RequestCancelledError).reason).toBe("user pressed stop");
    expect(cancels(clientWire)).toEqual([{ requestId: 0, reason: "user pressed stop" }]);
    await settle();
    expect(reason).toBeInstanceOf(RequestCancelledError);
    expect((reason as Error).message).toMatch(/user pressed stop/);
    finish();
    await settle();
    expect(serverWire).toEqual([]);
    expect(server.operations.size).toBe(0);
  });

  it("an already-aborted signal rejects at once without touching the wire", async () => {
    const { client, clientWire } = await sessionPair();
    const controller = new AbortController();
    controller.abort();
    await expect(client.request("tools/call", { name: "x" }, { signal: controller.signal })).rejects.toBeInstanceOf(
      RequestCancelledError,
    );
    expect(clientWire).toEqual([]);
  });

  it("removes its abort listener once the call completes", async () => {
    const { client, server, clientWire } = await sessionPair();
    server.onRequest("tools/call", () => ok);
    const controller = new AbortController();
    await client.request("tools/call", { name: "x" }, { signal: controller.signal });
    controller.abort();
    await settle();
    expect(cancels(clientWire)).toEqual([]);
  });

  it("the handler side can cancel a nested server-to-client request", async () => {
    const { client, server, serverWire } = await sessionPair();
    let clientSignal: AbortSignal | undefined;
    client.onRequest("sampling/createMessage", (_p, ctx) => {
      clientSignal = ctx.signal;
      return new Promise<JsonObject>(() => {});
    });
    server.onRequest("tools/call", async (_p, ctx) => {
      const inner = new AbortController();
      setTimeout(() => inner.abort("too slow"), 30);
      await ctx.request("sampling/createMessage", { messages: [] }, { signal: inner.signal }).catch(() => {});
      return ok;
    });
    expect(await client.request("tools/call", { name: "x" })).toEqual(ok);
    expect(clientSignal!.aborted).toBe(true);
    expect(cancels(serverWire)).toEqual([{ requestId: 0, reason: "too slow" }]);
  });

  it("a cancellation for an unknown or finished request is ignored", async () => {
    const errors: Error[] = [];
    const { client, server } = await sessionPair({ onerror: (e) => errors.push(e) });
    server.onRequest("tools/call", () => ok);
    await client.notify("notifications/cancelled", { requestId: 42, reason: "stale" });
    await settle();
    expect(errors).toEqual([]);
    expect(await client.request("tools/call", { name: "x" })).toEqual(ok);
  });
});
