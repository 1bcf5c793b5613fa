// One McpServer, both protocol eras on a connection: pinned by the first request, server/discover, the 2026-07-28
// envelope and result members, the 2025-11-25 handshake enforced, handlers reading the peer per request.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { McpServer } from "../../runtime/server/mcp-server.js";
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { revisionTables } from "../../generated/revisions.js";
import type { PeerIdentity } from "../../runtime/rpc/peer.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { envelope, makeServer, rawPeer } from "./helpers.js";
import { makeServer as tasksServer } from "../tasks/helpers.js";

const cleanup = closeAfterEach();
const MODERN = "2026-07-28";

/** A server with a tool that reports who called it and logs at two levels, a resource, and a tool that elicits. */
function server(): { server: McpServer; seen: (PeerIdentity | undefined)[]; calls: () => number } {
  const seen: (PeerIdentity | undefined)[] = [];
  let calls = 0;
  const s = makeServer({ logging: true });
  s.tool("whoami", {}, async (_args, ctx) => {
    calls++;
    seen.push(ctx.peerIdentity);
    await ctx.log("info", "an info line");
    await ctx.log("error", "an error line");
    return ctx.peerIdentity?.info?.name ?? "nobody";
  });
  s.tool("ask", {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: "name?", requestedSchema: { type: "object", properties: {} } });
    return answer.action;
  });
  s.resource("file:///readme", { name: "readme" }, async () => ({ contents: [{ uri: "file:///readme", text: "hi" }] }));
  cleanup(() => s.close());
  return { server: s, seen, calls: () => calls };
}

const initialize = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: {} },
  clientInfo: { name: "legacy-client", version: "2.0.0" },
};

describe("a 2025-11-25 connection", () => {
  it("refuses requests before initialize (but ping), without running their handler; initialize then serves them", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    const early = await peer.request("tools/call", { name: "whoami", arguments: {} });
    expect(early.error).toMatchObject({ code: -32600 });
    expect((early.error as JsonObject).message).toContain("before initialize");
    expect(s.calls()).toBe(0);
    expect((await peer.request("ping")).result).toEqual({});
    expect((await peer.request("initialize", initialize)).result).toMatchObject({ protocolVersion: "2025-11-25" });
    await peer.notify("notifications/initialized");
    const call = await peer.request("tools/call", { name: "whoami", arguments: {} });
    expect(call.result).toMatchObject({ content: [{ type: "text", text: "legacy-client" }] });
    expect(call.result).not.toHaveProperty("resultType");
    expect(s.seen[0]).toMatchObject({
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      info: { name: "legacy-client" },
      logLevel: "debug",
    });
    // Every level until logging/setLevel.
    expect(peer.logs()).toEqual(["an info line", "an error line"]);
  });

  it("keeps -32002 for a missing resource and refuses an enveloped initialize-less call", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    await peer.request("initialize", initialize);
    const missing = await peer.request("resources/read", { uri: "file:///nope" });
    expect(missing.error).toMatchObject({ code: -32002, data: { uri: "file:///nope" } });
  });
});

describe("server/discover", () => {
  it("answers on a fresh connection with the modern revisions and initialize's capabilities, and pins nothing", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    const discover = await peer.request("server/discover", { _meta: envelope() });
    const result = discover.result as JsonObject;
    expect(result).toMatchObject({
      resultType: "complete",
      supportedVersions: [MODERN],
      ttlMs: 0,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "test-server", version: "1.0.0" } },
    });
    // A legacy client that probed goes on with initialize on the same connection.
    const init = await peer.request("initialize", initialize);
    expect((init.result as JsonObject).capabilities).toEqual(result.capabilities);
  });

  it("answers a probe without an envelope too", async () => {
    const peer = await rawPeer(cleanup, server().server);
    expect((await peer.request("server/discover")).result).toMatchObject({ supportedVersions: [MODERN] });
  });
});

describe("a 2026-07-28 connection (pinned by an enveloped request)", () => {
  it("serves tools with resultType, serverInfo and cache hints; handlers read the envelope as the peer", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    const list = await peer.request("tools/list", { _meta: envelope() });
    expect(list.result).toMatchObject({
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "test-server" } },
    });
    const call = await peer.request("tools/call", { name: "whoami", arguments: {}, _meta: envelope() });
    expect(call.result).toMatchObject({ resultType: "complete", content: [{ text: "modern-client" }] });
    expect(call.result).not.toHaveProperty("ttlMs");
    expect(s.seen[0]).toEqual({
      protocolVersion: MODERN,
      capabilities: {},
      info: { name: "modern-client", version: "1.0.0" },
    });
  });

  it("sends log messages only at or above the level a request asks for", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    await peer.request("tools/call", { name: "whoami", arguments: {}, _meta: envelope() });
    expect(peer.logs()).toEqual([]);
    await peer.request("tools/call", {
      name: "whoami",
      arguments: {},
      _meta: envelope({ "io.modelcontextprotocol/logLevel": "warning" }),
    });
    expect(peer.logs()).toEqual(["an error line"]);
  });

  it.each([
    ["no protocol version", { "io.modelcontextprotocol/clientCapabilities": {} }, -32602],
    ["no client capabilities", { "io.modelcontextprotocol/protocolVersion": MODERN }, -32602],
    ["an unsupported version", envelope({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }), -32022],
    ["a bad log level", envelope({ "io.modelcontextprotocol/logLevel": "loud" }), -32602],
    ["bad client info", envelope({ "io.modelcontextprotocol/clientInfo": "me" }), -32602],
  ])("refuses a request with %s (%s)", async (_name, meta, code) => {
    const s = server();
    const peer = await rawPeer(cleanup, s.server);
    await peer.request("tools/list", { _meta: envelope() });
    const refused = await peer.request("tools/call", { name: "whoami", arguments: {}, _meta: meta });
    expect(refused.error).toMatchObject({ code });
    if (code === -32022) expect((refused.error as JsonObject).data).toMatchObject({ supported: [MODERN] });
    expect(s.calls()).toBe(0);
    // The connection goes on.
    expect((await peer.request("tools/list", { _meta: envelope() })).result).toBeDefined();
  });

  it.each(["initialize", "ping", "logging/setLevel", "resources/subscribe"])(
    "answers %s, gone in 2026-07-28, with -32601",
    async (method) => {
      const peer = await rawPeer(cleanup, server().server);
      await peer.request("tools/list", { _meta: envelope() });
      const params = method === "initialize" ? { ...initialize, _meta: envelope() } : { _meta: envelope() };
      expect((await peer.request(method, params)).error).toMatchObject({ code: -32601 });
    },
  );

  it("answers a missing resource -32602 with data.uri", async () => {
    const peer = await rawPeer(cleanup, server().server);
    const missing = await peer.request("resources/read", { uri: "file:///nope", _meta: envelope() });
    expect(missing.error).toMatchObject({ code: -32602, data: { uri: "file:///nope" } });
    const read = await peer.request("resources/read", { uri: "file:///readme", _meta: envelope() });
    expect(read.result).toMatchObject({ resultType: "complete", ttlMs: 0, contents: [{ text: "hi" }] });
  });

  it("refuses an ask the envelope declares no capability for: -32021 with data.requiredCapabilities, nothing sent", async () => {
    const peer = await rawPeer(cleanup, server().server);
    const call = await peer.request("tools/call", { name: "ask", arguments: {}, _meta: envelope() });
    expect(call.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(peer.received.filter((m) => m.method === "elicitation/create")).toEqual([]);
  });
});

describe("what only 2025-11-25 has stays out of a 2026 connection", () => {
  it("serves a task-augmented call as a plain one, and advertises neither core tasks nor taskSupport", async () => {
    const s = tasksServer({ logging: true });
    cleanup(() => s.tasks.close());
    cleanup(() => s.close());
    s.tool("count", { taskSupport: "optional" }, async (_args, ctx) => {
      await ctx.log("info", "counted");
      return "done";
    });
    const peer = await rawPeer(cleanup, s);
    const discover = (await peer.request("server/discover", { _meta: envelope() })).result as JsonObject;
    expect(discover.capabilities).not.toHaveProperty("tasks");
    const list = (await peer.request("tools/list", { _meta: envelope() })).result as { tools: JsonObject[] };
    expect(list.tools[0]).not.toHaveProperty("execution");
    const call = await peer.request("tools/call", { name: "count", arguments: {}, task: {}, _meta: envelope() });
    expect(call.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "done" }] });
    expect(peer.received.filter((m) => String(m.method).startsWith("notifications/"))).toEqual([]);
  });
});

describe("cache hints (2026-07-28)", () => {
  it("cacheable results carry the server's hint for their method, else ttlMs 0 and private; 2025 results none", async () => {
    const s = makeServer({ cache: { "tools/list": { ttlMs: 60_000, scope: "public" } } });
    s.tool("t", {}, () => "x");
    s.resource("file:///r", { name: "r" }, async () => ({ contents: [{ uri: "file:///r", text: "r" }] }));
    cleanup(() => s.close());
    const modern = await rawPeer(cleanup, s);
    expect((await modern.request("tools/list", { _meta: envelope() })).result).toMatchObject({
      ttlMs: 60_000,
      cacheScope: "public",
    });
    expect((await modern.request("resources/read", { uri: "file:///r", _meta: envelope() })).result).toMatchObject({
      ttlMs: 0,
      cacheScope: "private",
    });
    const legacy = await rawPeer(cleanup, s);
    await legacy.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "l", version: "1" },
    });
    expect((await legacy.request("tools/list")).result).not.toHaveProperty("ttlMs");
  });
});

describe("the modern era comes from the generated tables", () => {
  it("a server given no revision tables speaks 2025-11-25 only: -32022 naming its revisions, discover unknown", async () => {
    const s = new McpServer({
      serverInfo: { name: "legacy-only", version: "1" },
      inbound: clientToServer,
      outbound: serverToClient,
      isMessage,
    });
    s.tool("t", {}, () => "x");
    cleanup(() => s.close());
    const peer = await rawPeer(cleanup, s);
    const modern = await peer.request("tools/list", { _meta: envelope() });
    expect(modern.error).toMatchObject({ code: -32022, data: { requested: MODERN } });
    const supported = ((modern.error as JsonObject).data as { supported: string[] }).supported;
    expect(supported[0]).toBe("2025-11-25");
    expect(supported).not.toContain(MODERN);
    expect((await peer.request("server/discover", { _meta: envelope() })).error).toMatchObject({ code: -32601 });
    const legacy = await rawPeer(cleanup, s);
    expect((await legacy.request("initialize", initialize)).result).toMatchObject({ protocolVersion: "2025-11-25" });
  });

  it("what a client of the revision may send is the table's: a method left out of it answers -32601", async () => {
    const { "completion/complete": _dropped, ...inbound } = revisionTables[MODERN]!.inbound;
    const s = new McpServer({
      serverInfo: { name: "trimmed", version: "1" },
      inbound: clientToServer,
      outbound: serverToClient,
      isMessage,
      revisions: { [MODERN]: { ...revisionTables[MODERN]!, inbound } },
    });
    s.prompt("p", { arguments: [{ name: "x" }] }, () => ({ messages: [] }));
    cleanup(() => s.close());
    const peer = await rawPeer(cleanup, s);
    expect((await peer.request("prompts/list", { _meta: envelope() })).result).toMatchObject({
      resultType: "complete",
    });
    const complete = await peer.request("completion/complete", {
      ref: { type: "ref/prompt", name: "p" },
      argument: { name: "x", value: "" },
      _meta: envelope(),
    });
    expect(complete.error).toMatchObject({ code: -32601 });
  });
});
