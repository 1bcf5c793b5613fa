// Requests whose reply stream closed before their response: they stop taking in-flight places, their number is
// bounded on its own (maxDetachedRequests), and ping and tasks/cancel are served even at the cap.
import { describe, expect, it } from "vitest";
import { ErrorCode, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import type { ReplyChannel } from "../../runtime/rpc/transport.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import type { ResponseMode } from "../../runtime/transports/http/server/options.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, sleep, until } from "../kit/timing.js";
import { makeServer, serveOverHttp, type TaskServer } from "../tasks/helpers.js";
import { kit } from "../tasks/helpers.js";
import { initialize, post, readSse, sessionHeaders } from "./helpers.js";

const cleanup = closeAfterEach();

/** A server whose tool `park` holds until released and records whether its handler was aborted; `echo` answers. */
function parkingServer(options: { maxInFlightRequests?: number; maxDetachedRequests?: number } = {}) {
  const hold = gate();
  let started = 0;
  const aborted: unknown[] = [];
  const server: TaskServer = makeServer(options);
  server.tool("park", {}, async (_args, ctx) => {
    started++;
    ctx.signal.addEventListener("abort", () => aborted.push(ctx.signal.reason));
    await hold.promise;
    return "parked";
  });
  // Task support makes the server answer tasks/*.
  server.tool("echo", { taskSupport: "optional" }, async () => "echo");
  cleanup(() => server.tasks.close());
  cleanup(() => server.close());
  return { server, release: hold.open, started: () => started, aborted };
}

/** An open HTTP session on `url`: POSTs that return their SSE reply, and POSTs whose connection can be dropped. */
async function httpSession(url: string) {
  const sessionId = await initialize(url);
  const headers = sessionHeaders(sessionId);
  await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  let next = 1;
  const message = (method: string, params: JsonObject) => ({ jsonrpc: "2.0", id: next++, method, params });
  return {
    /** The JSON-RPC response to one request. */
    async call(method: string, params: JsonObject = {}): Promise<JsonObject> {
      const res = await post(url, message(method, params), headers);
      if (res.headers.get("content-type")?.startsWith("application/json")) return (await res.json()) as JsonObject;
      const read = await readSse(res, (r) => r.messages.some((m) => "result" in m || "error" in m));
      return read.messages.find((m) => "result" in m || "error" in m)!;
    },
    /** Sends a request and keeps its reply stream open; `drop()` closes that connection from the client's side. */
    async open(method: string, params: JsonObject = {}, mode: ResponseMode = "sse"): Promise<{ drop: () => void }> {
      const abort = new AbortController();
      const sent = fetch(url, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers },
        body: JSON.stringify(message(method, params)),
        signal: abort.signal,
      });
      // A JSON reply has no headers before the response itself: the request is out once its handler runs.
      if (mode === "json") sent.catch(() => undefined);
      else expect((await sent).status).toBe(200);
      return { drop: () => abort.abort() };
    },
  };
}

const parkCall = { name: "park", arguments: {} };
const echoCall = { name: "echo", arguments: {} };

describe("requests abandoned by their peer over Streamable HTTP", () => {
  it.each(["sse", "json"] as const)(
    "100 requests whose replies (%s) were abandoned do not wedge the session: later calls are served, the handlers run on",
    async (responseMode) => {
      const s = parkingServer();
      const url = await serveOverHttp(cleanup, s.server, { responseMode });
      const session = await httpSession(url);
      const streams = await Promise.all(
        Array.from({ length: 100 }, () => session.open("tools/call", parkCall, responseMode)),
      );
      await until(() => s.started() === 100);
      // At the cap while the streams are open.
      expect((await session.call("tools/call", echoCall)).error).toMatchObject({ code: ErrorCode.ServerBusy });
      for (const stream of streams) stream.drop();
      // Served once the server saw the streams close (before the fix: -32000 until the 100 handlers end).
      const deadline = Date.now() + 10_000;
      let answer = await session.call("tools/call", echoCall);
      while (answer.error !== undefined && Date.now() < deadline) {
        await sleep(5);
        answer = await session.call("tools/call", echoCall);
      }
      expect(answer.result).toMatchObject({ content: [{ type: "text", text: "echo" }] });
      // MCP 2025-11-25: a lost stream is not a cancellation (the client may come back for the answer).
      expect(s.aborted).toEqual([]);
      s.release();
    },
  );

  it("past maxDetachedRequests the oldest detached requests are aborted", async () => {
    const s = parkingServer({ maxDetachedRequests: 2 });
    const url = await serveOverHttp(cleanup, s.server);
    const session = await httpSession(url);
    const streams = await Promise.all(Array.from({ length: 5 }, () => session.open("tools/call", parkCall)));
    await until(() => s.started() === 5);
    for (const stream of streams) stream.drop();
    await until(() => s.aborted.length === 3, 10_000, "three of five detached requests aborted");
    expect(String(s.aborted[0])).toContain("maxDetachedRequests");
    // The two that remain still run, and the session serves on.
    expect((await session.call("tools/call", echoCall)).result).toBeDefined();
    expect(s.aborted).toHaveLength(3);
    s.release();
  });

  it("ping and tasks/cancel are served at the in-flight cap, other requests are refused", async () => {
    const s = parkingServer({ maxInFlightRequests: 3 });
    const url = await serveOverHttp(cleanup, s.server);
    const session = await httpSession(url);
    await Promise.all(Array.from({ length: 3 }, () => session.open("tools/call", parkCall)));
    await until(() => s.started() === 3);
    expect((await session.call("tools/call", echoCall)).error).toMatchObject({ code: ErrorCode.ServerBusy });
    expect((await session.call("ping")).result).toEqual({});
    // The receiver answers for itself: no such task (not the cap's -32000).
    const cancel = await session.call("tasks/cancel", { taskId: "no-such-task" });
    expect(cancel.error).toMatchObject({ code: ErrorCode.InvalidParams });
    s.release();
  });
});

describe("a reply channel whose loss is a cancellation (lossCancels)", () => {
  it("aborts the request when its connection goes and frees its place", async () => {
    const listeners: ((connected: boolean) => void)[] = [];
    const channel: ReplyChannel = {
      connected: true,
      lossCancels: true,
      watchConnection: (listener) => void listeners.push(listener),
    };
    const s = parkingServer({ maxInFlightRequests: 1 });
    const [clientEnd, serverEnd] = createInMemoryPair({ serverInfo: { reply: channel } });
    await s.server.connect(serverEnd);
    const client = kit.clientSession();
    await client.connect(clientEnd);
    cleanup(() => client.close());
    const parked = client.request("tools/call", parkCall);
    parked.catch(() => undefined);
    await until(() => s.started() === 1);
    for (const listener of listeners.splice(0)) listener(false);
    expect(s.aborted).toHaveLength(1);
    expect(s.aborted[0]).toBeInstanceOf(RequestCancelledError);
    await expect(client.request("tools/call", echoCall)).resolves.toMatchObject({ content: [{ text: "echo" }] });
    s.release();
  });
});
