// One McpServer process over Streamable HTTP speaking 2026-07-28 and 2025-11-25 at once, with `onSession: connect`:
// the modern lane's statuses for the session's own refusals, SSE for logs, and a closed stream aborting a tool.
import { describe, expect, it } from "vitest";
import type { JsonObject, RequestId } from "../../runtime/rpc/jsonrpc.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import type { McpServer } from "../../runtime/server/mcp-server.js";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import type { StreamableHttpServerOptions } from "../../runtime/transports/http/server/options.js";
import { listenHttp } from "../../runtime/transports/http/server/listen.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, until } from "../kit/timing.js";
import { envelope, makeServer } from "../server/helpers.js";
import { initialize, post, readSse, sessionHeaders } from "./helpers.js";

const cleanup = closeAfterEach();

/** `server` behind the HTTP endpoint on 127.0.0.1, every transport (session or per request) connected to it. */
async function serve(server: McpServer, options: Partial<StreamableHttpServerOptions> = {}): Promise<string> {
  const mcp = createStreamableHttpServer({
    ...options,
    path: "/mcp",
    onSession: (transport) => server.connect(transport).then(() => undefined),
  });
  const listening = await listenHttp(mcp.nodeListener, { host: "127.0.0.1", port: 0 });
  cleanup(async () => {
    await mcp.close();
    await server.close();
    await listening.close();
  });
  return `${listening.origin}/mcp`;
}

/** A tool call as a 2026-07-28 client sends it: envelope in the body, the mirrored headers beside it. */
function modernCall(url: string, id: RequestId, method: string, params: JsonObject, name?: string, meta = envelope()) {
  const headers: Record<string, string> = {
    "mcp-protocol-version": String(meta["io.modelcontextprotocol/protocolVersion"]),
    "mcp-method": method,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  return post(url, { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }, headers);
}

function tools() {
  const hold = gate();
  const state = { started: 0, aborted: [] as unknown[], release: hold.open };
  const server = makeServer({ logging: true });
  server.tool("whoami", {}, async (_args, ctx) => ctx.peerIdentity?.info?.name ?? "nobody");
  server.tool("chatty", {}, async (_args, ctx) => {
    await ctx.log("info", "working");
    return "done";
  });
  server.tool("park", {}, async (_args, ctx) => {
    state.started++;
    ctx.signal.addEventListener("abort", () => state.aborted.push(ctx.signal.reason));
    await Promise.race([hold.promise, new Promise((resolve) => ctx.signal.addEventListener("abort", resolve))]);
    return "parked";
  });
  return { server, state };
}

describe("an McpServer over HTTP, both eras on one endpoint", () => {
  it("serves a 2026-07-28 tools/call with a JSON reply and no session, and a 2025-11-25 session beside it", async () => {
    const { server } = tools();
    const url = await serve(server);
    const res = await modernCall(url, 1, "tools/call", { name: "whoami", arguments: {} }, "whoami");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(await res.json()).toMatchObject({
      id: 1,
      result: { resultType: "complete", content: [{ type: "text", text: "modern-client" }] },
    });
    const sid = await initialize(url);
    await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(sid));
    const legacy = await readSse(
      await post(
        url,
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "whoami", arguments: {} } },
        sessionHeaders(sid),
      ),
    );
    expect(legacy.messages.at(-1)).toMatchObject({ id: 2, result: { content: [{ text: "test" }] } });
  });

  it("answers server/discover on the modern lane", async () => {
    const { server } = tools();
    const url = await serve(server);
    const res = await modernCall(url, 3, "server/discover", {});
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 3, result: { resultType: "complete" } });
  });

  it("sends the session's envelope refusals under 400 and a method 2026-07-28 dropped under 404", async () => {
    const { server } = tools();
    const url = await serve(server);
    const unsupported = await modernCall(url, 4, "tools/list", {}, undefined, {
      ...envelope(),
      "io.modelcontextprotocol/protocolVersion": "1900-01-01",
    });
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toMatchObject({
      id: 4,
      error: { code: -32022, data: { supported: expect.arrayContaining(["2026-07-28"]) } },
    });
    const { "io.modelcontextprotocol/clientCapabilities": _dropped, ...withoutCapabilities } = envelope();
    const malformed = await modernCall(url, 5, "tools/list", {}, undefined, withoutCapabilities);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ id: 5, error: { code: -32602 } });
    // The headers say 2026-07-28, the body carries no envelope at all: -32602 (not a header mismatch) under 400.
    const bare = await post(
      url,
      { jsonrpc: "2.0", id: 9, method: "server/discover", params: {} },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
    );
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({ id: 9, error: { code: -32602 } });
    const dropped = await modernCall(url, 6, "logging/setLevel", { level: "info" });
    expect(dropped.status).toBe(404);
    expect(await dropped.json()).toMatchObject({ id: 6, error: { code: -32601 } });
  });

  it("turns the reply into SSE for a log line, without event ids", async () => {
    const { server } = tools();
    const url = await serve(server);
    const meta = envelope({ "io.modelcontextprotocol/logLevel": "info" });
    const res = await modernCall(url, 7, "tools/call", { name: "chatty", arguments: {} }, "chatty", meta);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const read = await readSse(res);
    expect(read.messages.map((m) => m.method ?? m.id)).toEqual(["notifications/message", 7]);
    expect(read.events.every((e) => e.id === "")).toBe(true);
  });

  it("aborts a tool whose client closed the connection", async () => {
    const { server, state } = tools();
    const url = await serve(server);
    const abort = new AbortController();
    const sent = fetch(url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "park",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "park", arguments: {}, _meta: envelope() },
      }),
      signal: abort.signal,
    });
    sent.catch(() => undefined);
    await until(() => state.started === 1);
    abort.abort();
    await until(() => state.aborted.length === 1, 10_000, "the tool was aborted");
    expect(state.aborted[0]).toBeInstanceOf(RequestCancelledError);
    state.release();
  });
});
