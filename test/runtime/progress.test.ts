// Progress: tokens in _meta, monotonic values, rate limiting, last value before the response, quiet late progress.
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { ProgressInfo } from "../../runtime/rpc/peer.js";
import { ProgressOrderError } from "../../runtime/rpc/errors.js";
import { ProgressReporter, readProgressToken, withProgressToken } from "../../runtime/rpc/progress.js";
import type { SessionDebugEvent } from "../../runtime/rpc/session/session.js";
import { sessionPair } from "./helpers.js";
import { settle, sleep } from "../kit/timing.js";

const ok = { content: [] };
const kindOf = (m: JsonRpcMessage): string => ("method" in m ? m.method : "response");

describe("progress tokens", () => {
  it("puts a unique token in params._meta, keeps other _meta keys and leaves the caller's params untouched", async () => {
    const { client, server, clientWire } = await sessionPair();
    const seenMeta: unknown[] = [];
    server.onRequest("tools/call", (p) => {
      seenMeta.push(p?._meta);
      return ok;
    });
    const params = { name: "x", _meta: { traceId: "t-1" } };
    await client.request("tools/call", params, { onProgress: () => {} });
    await client.request("tools/call", { name: "y" }, { onProgress: () => {} });
    expect(params).toEqual({ name: "x", _meta: { traceId: "t-1" } });
    expect(seenMeta[0]).toEqual({ traceId: "t-1", progressToken: 0 });
    expect(seenMeta[1]).toEqual({ progressToken: 1 });
    expect((clientWire[0].message as { params: JsonObject }).params.name).toBe("x");
  });

  it("sends no token when no progress is wanted", async () => {
    const { client, server } = await sessionPair();
    let meta: unknown = "unset";
    server.onRequest("tools/call", (p) => {
      meta = p?._meta;
      return ok;
    });
    await client.request("tools/call", { name: "x" });
    expect(meta).toBeUndefined();
  });

  it("reads and writes tokens as pure functions", () => {
    expect(readProgressToken({ _meta: { progressToken: 0 } })).toBe(0);
    expect(readProgressToken({ _meta: { progressToken: "a" } })).toBe("a");
    expect(readProgressToken({ _meta: { progressToken: 1.5 } })).toBeUndefined();
    expect(readProgressToken({ _meta: null as unknown as JsonObject })).toBeUndefined();
    expect(readProgressToken(undefined)).toBeUndefined();
    expect(withProgressToken(undefined, 3)).toEqual({ _meta: { progressToken: 3 } });
  });
});

describe("progress from a handler", () => {
  it("reaches onProgress with total and message", async () => {
    const { client, server } = await sessionPair({ progressInterval: 0 });
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(1, 3, "one");
      await ctx.progress(2.5);
      return ok;
    });
    const got: ProgressInfo[] = [];
    await client.request("tools/call", { name: "x" }, { onProgress: (p) => got.push(p) });
    expect(got).toEqual([{ progress: 1, total: 3, message: "one" }, { progress: 2.5 }]);
  });

  it("refuses values that do not increase, and non-numbers", async () => {
    const { client, server } = await sessionPair({ progressInterval: 0 });
    const outcomes: unknown[] = [];
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(5);
      outcomes.push(await ctx.progress(5).catch((e: unknown) => e));
      outcomes.push(await ctx.progress(4).catch((e: unknown) => e));
      outcomes.push(await ctx.progress(Number.NaN).catch((e: unknown) => e));
      await ctx.progress(6);
      return ok;
    });
    const got: number[] = [];
    await client.request("tools/call", { name: "x" }, { onProgress: (p) => got.push(p.progress) });
    expect(outcomes[0]).toBeInstanceOf(ProgressOrderError);
    expect(outcomes[1]).toBeInstanceOf(ProgressOrderError);
    expect(outcomes[2]).toBeInstanceOf(TypeError);
    expect(got).toEqual([5, 6]);
  });

  it("is a no-op without a token", async () => {
    const { client, server, serverWire } = await sessionPair({ progressInterval: 0 });
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(1);
      await ctx.progress(1); // not even checked: nothing is tracked without a token
      return ok;
    });
    await client.request("tools/call", { name: "x" });
    expect(serverWire.map((s) => kindOf(s.message))).toEqual(["response"]);
  });

  it("stops once the response has been sent", async () => {
    const { client, server, serverWire } = await sessionPair({ progressInterval: 0 });
    let later: (() => Promise<void>) | undefined;
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(1);
      later = () => ctx.progress(2);
      return ok;
    });
    await client.request("tools/call", { name: "x" }, { onProgress: () => {} });
    await later!();
    await settle();
    expect(serverWire.map((s) => kindOf(s.message))).toEqual(["notifications/progress", "response"]);
  });

  it("rate-limits to one notification per window, holding the latest value", async () => {
    const { client, server, serverWire } = await sessionPair({ progressInterval: 40 });
    server.onRequest("tools/call", async (_p, ctx) => {
      for (let i = 1; i <= 10; i++) await ctx.progress(i, 10);
      // Sent at once: 1; held: 10 (2..9 replaced). The held value goes out when the window opens.
      await sleep(100);
      return ok;
    });
    const got: number[] = [];
    await client.request("tools/call", { name: "x" }, { onProgress: (p) => got.push(p.progress) });
    expect(got).toEqual([1, 10]);
    const progressTimes = serverWire.filter((s) => kindOf(s.message) === "notifications/progress");
    expect(progressTimes).toHaveLength(2);
    expect(serverWire.map((s) => kindOf(s.message)).at(-1)).toBe("response");
  });

  it("sends the held last value before the response when the handler finishes inside the window", async () => {
    const { client, server, serverWire, clientEnd } = await sessionPair({ progressInterval: 10_000 });
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(1);
      await ctx.progress(2);
      await ctx.progress(3, 3, "done");
      return ok;
    });
    const arrivals: string[] = [];
    const original = clientEnd.onmessage!;
    clientEnd.onmessage = (m, info) => {
      arrivals.push(kindOf(m as JsonRpcMessage));
      original(m, info);
    };
    const got: ProgressInfo[] = [];
    await client.request("tools/call", { name: "x" }, { onProgress: (p) => got.push(p) });
    expect(got).toEqual([{ progress: 1 }, { progress: 3, total: 3, message: "done" }]);
    expect(arrivals).toEqual(["notifications/progress", "notifications/progress", "response"]);
    expect(serverWire.map((s) => s.options?.relatedRequestId)).toEqual([0, 0, 0]);
  });

  it("drops the held value when the request is cancelled", async () => {
    const sent: JsonObject[] = [];
    const reporter = new ProgressReporter("t", 1, { sendProgress: async (p) => void sent.push(p) }, 30);
    await reporter.report(1);
    await reporter.report(2);
    reporter.stop();
    await sleep(60);
    expect(sent.map((p) => p.progress)).toEqual([1]);
    await reporter.report(3);
    expect(sent).toHaveLength(1);
  });
});

describe("progress arriving at the caller", () => {
  it("drops progress for a just-completed token quietly, but reports an unknown token", async () => {
    const errors: Error[] = [];
    const debug: SessionDebugEvent[] = [];
    const { client, server } = await sessionPair({}, { onerror: (e) => errors.push(e), ondebug: (e) => debug.push(e) });
    server.onRequest("tools/call", () => ok);
    const got: number[] = [];
    await client.request("tools/call", { name: "x" }, { onProgress: (p) => got.push(p.progress) });
    // The server's progress for token 0 raced the response.
    await server.notify("notifications/progress", { progressToken: 0, progress: 1 });
    await settle();
    expect(errors).toEqual([]);
    expect(debug).toContainEqual({ kind: "late-progress", detail: 0 });
    await server.notify("notifications/progress", { progressToken: "never-issued", progress: 1 });
    await settle();
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/unknown token/);
    expect(got).toEqual([]);
  });

  it("reports a throwing onProgress to onerror and still resolves the call", async () => {
    const errors: Error[] = [];
    const { client, server } = await sessionPair({ progressInterval: 0 }, { onerror: (e) => errors.push(e) });
    server.onRequest("tools/call", async (_p, ctx) => {
      await ctx.progress(1);
      return ok;
    });
    const result = await client.request(
      "tools/call",
      { name: "x" },
      {
        onProgress: () => {
          throw new Error("listener bug");
        },
      },
    );
    expect(result).toEqual(ok);
    expect(errors.map((e) => e.message)).toEqual(["listener bug"]);
  });
});
