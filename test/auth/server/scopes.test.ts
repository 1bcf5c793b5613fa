// Per-tool and per-method scopes: 403 insufficient_scope where the body is known, step-up on the same session, ctx.auth in handlers.
import { beforeAll, describe, expect, it } from "vitest";
import { jwtVerifier } from "../../../runtime/auth/server/index.js";
import { createStreamableHttpServer } from "../../../runtime/transports/http/server/server.js";
import { listenHttp } from "../../../runtime/transports/http/server/listen.js";
import { initialize, post, readSse, sessionHeaders } from "../../http/helpers.js";
import { makeServer } from "../../server/helpers.js";
import { bearer, callTool, openSession, parseChallenge, useAuthServers } from "./helpers.js";

const env = useAuthServers((as) => jwtVerifier({ issuer: as.issuer }), {
  requiredScopes: ["mcp:tools"],
  init: { methodScopes: { "prompts/list": ["mcp:prompts"] }, capabilities: { prompts: {} } },
});
let admin: ReturnType<typeof makeServer>;

beforeAll(() => {
  let ran = 0;
  env.rs.server.tool("counted_admin", { scopes: ["mcp:admin", "mcp:write"] }, () => `ran ${++ran}`);
  admin = env.rs.server;
});

describe("tool scopes over HTTP", () => {
  it("a tool needing a scope the token lacks: 403 insufficient_scope naming granted + required, the handler never runs, the session goes on", async () => {
    const token = await env.as.mint(env.rs.url, { scope: "mcp:tools offline_access" });
    const sid = await openSession(env.rs.url, token);
    const refused = await callTool(env.rs.url, sid, token, "counted_admin", 7);
    expect(refused.status).toBe(403);
    const challenge = parseChallenge(refused.challenge);
    expect(challenge.error).toBe("insufficient_scope");
    // What the token had (so a step-up loses nothing, offline_access included), then what the call needs.
    expect(challenge.scope).toBe("mcp:tools offline_access mcp:admin mcp:write");
    expect(challenge.resource_metadata).toBe(env.rs.resource.metadataUrl);
    expect(challenge.error_description).toBe("This request needs the scopes mcp:admin mcp:write");
    expect(refused.body).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32600, data: { error: "insufficient_scope" } },
    });
    // Nothing ran, and the same session still serves what the token allows.
    const who = await callTool(env.rs.url, sid, token, "whoami", 8);
    expect(who.status).toBe(200);
    expect(JSON.parse((who.body as { result: { content: { text: string }[] } }).result.content[0]!.text)).toEqual({
      principal: "sub:alice",
      scopes: ["mcp:tools", "offline_access"],
      sub: "alice",
    });
    // Step-up: a new token of the same subject with the union of scopes, on the same session.
    const stepped = await env.as.mint(env.rs.url, { scope: challenge.scope });
    const allowed = await callTool(env.rs.url, sid, stepped, "counted_admin", 9);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ id: 9, result: { content: [{ type: "text", text: "ran 1" }] } });
  });

  it("a granted scope that could not stand unquoted in the header is left out of the challenge, not a server error", async () => {
    const token = await env.as.mint(env.rs.url, { scope: 'mcp:tools we"ird' });
    const sid = await openSession(env.rs.url, token);
    const refused = await callTool(env.rs.url, sid, token, "admin");
    expect(refused.status).toBe(403);
    expect(parseChallenge(refused.challenge).scope).toBe("mcp:tools mcp:admin");
  });

  it("a method scope (methodScopes) refuses the method itself; other methods pass", async () => {
    const token = await env.as.mint(env.rs.url);
    const sid = await openSession(env.rs.url, token);
    const res = await post(
      env.rs.url,
      { jsonrpc: "2.0", id: 3, method: "prompts/list" },
      { ...sessionHeaders(sid), ...bearer(token) },
    );
    expect(res.status).toBe(403);
    expect(parseChallenge(res.headers.get("www-authenticate")).scope).toBe("mcp:tools mcp:prompts");
    const list = await post(
      env.rs.url,
      { jsonrpc: "2.0", id: 4, method: "tools/list" },
      { ...sessionHeaders(sid), ...bearer(await env.as.mint(env.rs.url)) },
    );
    expect(list.status).toBe(200);
    expect((await readSse(list)).messages.at(-1)).toMatchObject({ id: 4, result: { tools: expect.any(Array) } });
  });

  it("tools/list does not show scopes; an unknown tool needs none (it gets the usual error)", async () => {
    const token = await env.as.mint(env.rs.url);
    const sid = await openSession(env.rs.url, token);
    const list = await readSse(
      await post(
        env.rs.url,
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { ...sessionHeaders(sid), ...bearer(token) },
      ),
    );
    const tools = (list.messages.at(-1) as { result: { tools: Record<string, unknown>[] } }).result.tools;
    expect(tools.find((t) => t.name === "admin")).toEqual({ name: "admin", inputSchema: { type: "object" } });
    const unknown = await callTool(env.rs.url, sid, token, "no_such_tool");
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ error: { code: -32602 } });
  });
});

describe("McpServer.requiredScopes", () => {
  it("unions the method's scopes and the named tool's, for tools/call and tools/async/call; nothing for notifications or responses", () => {
    const server = makeServer({ methodScopes: { "tools/call": ["mcp:call"] } });
    server.tool("t", { scopes: ["a", "b", "a"] }, () => "");
    const call = (method: string, name: unknown) => ({ jsonrpc: "2.0", id: 1, method, params: { name } });
    expect(server.requiredScopes(call("tools/call", "t"))).toEqual(["mcp:call", "a", "b"]);
    expect(server.requiredScopes(call("tools/async/call", "t"))).toEqual(["a", "b"]);
    expect(server.requiredScopes(call("tools/call", "other"))).toEqual(["mcp:call"]);
    expect(server.requiredScopes(call("tools/call", 42))).toEqual(["mcp:call"]);
    expect(server.requiredScopes({ jsonrpc: "2.0", method: "tools/call", params: { name: "t" } })).toEqual([]);
    expect(server.requiredScopes({ jsonrpc: "2.0", id: 1, result: {} })).toEqual([]);
    expect(server.requiredScopes("junk")).toEqual([]);
    expect(admin.requiredScopes(call("tools/call", "counted_admin"))).toEqual(["mcp:admin", "mcp:write"]);
  });

  it("refuses scope lists that could not go into a challenge header", () => {
    const server = makeServer();
    for (const bad of [["two words"], ['quo"te'], ["back\\slash"], [""], [7]]) {
      expect(() => server.tool(`t${JSON.stringify(bad)}`, { scopes: bad as string[] }, () => "")).toThrow(
        /scope tokens/,
      );
    }
    expect(() => makeServer({ methodScopes: { "tools/list": ["a b"] } })).toThrow(/scope tokens/);
  });
});

describe("without the authorize hook", () => {
  it("the tool's scopes still hold inside McpServer for a caller with a grant (a JSON-RPC error); grants reach ctx.auth", async () => {
    const server = makeServer();
    server.tool("admin", { scopes: ["mcp:admin"] }, () => "admin done");
    server.tool("whoami", {}, (_a, ctx) => JSON.stringify(ctx.auth ?? null));
    const grants: Record<string, { principal: string; scopes?: string[] } | string> = {
      "Bearer plain": "plain-user",
      "Bearer reader": { principal: "reader", scopes: ["mcp:read"] },
      "Bearer admin": { principal: "root", scopes: ["mcp:admin"] },
    };
    const mcp = createStreamableHttpServer({
      onSession: async (t) => void (await server.connect(t)),
      authenticate: (req) => grants[req.headers["authorization"] ?? ""],
    });
    const http = await listenHttp(mcp.nodeListener);
    try {
      const url = `${http.origin}/mcp`;
      const call = async (who: string, name: string) => {
        const headers = { authorization: who };
        const sid = await initialize(url, headers);
        const res = await post(
          url,
          { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: {} } },
          { ...sessionHeaders(sid), ...headers },
        );
        return (await readSse(res)).messages.at(-1);
      };
      expect(await call("Bearer plain", "admin")).toMatchObject({
        error: {
          code: -32600,
          message: "Insufficient scope: tool admin needs mcp:admin",
          data: { requiredScopes: ["mcp:admin"] },
        },
      });
      expect(await call("Bearer reader", "admin")).toMatchObject({ error: { code: -32600 } });
      expect(await call("Bearer admin", "admin")).toMatchObject({ result: { content: [{ text: "admin done" }] } });
      const text = (message: unknown) =>
        (message as { result: { content: { text: string }[] } }).result.content[0]!.text;
      expect(JSON.parse(text(await call("Bearer reader", "whoami")))).toEqual({
        principal: "reader",
        scopes: ["mcp:read"],
      });
      expect(JSON.parse(text(await call("Bearer plain", "whoami")))).toEqual({ principal: "plain-user" });
    } finally {
      await mcp.close();
      await http.close();
    }
  });
});
