// The HTTP server transport's auth hooks on their own (no MCP meaning): authenticate's grants and challenges, authorize, routes.
import { describe, expect, it } from "vitest";
import type { AuthGrant } from "../../../runtime/rpc/transport.js";
import {
  createStreamableHttpServer,
  type HttpAuthResult,
  type StreamableHttpServerOptions,
} from "../../../runtime/transports/http/server/server.js";
import {
  initialize,
  initializeMessage,
  makeResponder,
  post,
  postToHandler,
  readSse,
  sessionHeaders,
  serverPerTest,
  type RunningServer,
} from "../../http/helpers.js";

const startServer = serverPerTest();

async function start(options: Partial<StreamableHttpServerOptions>): Promise<RunningServer & { errors: Error[] }> {
  const errors: Error[] = [];
  const server = await startServer({ onerror: (e) => errors.push(e), ...options });
  return Object.assign(server, { errors });
}

describe("authenticate", () => {
  it("a grant's principal binds the session; the grant (frozen) reaches InboundInfo.auth of every message", async () => {
    const scopes = ["read"];
    const s = await start({
      authenticate: (req) =>
        req.headers["authorization"] === "Bearer t" ? { principal: "ann", scopes, claims: { tenant: "x" } } : null,
    });
    const sid = await initialize(s.url, { authorization: "Bearer t" });
    const echo = await readSse(
      await post(
        s.url,
        { jsonrpc: "2.0", id: 1, method: "echo" },
        { ...sessionHeaders(sid), authorization: "Bearer t" },
      ),
    );
    expect(echo.messages.at(-1)).toMatchObject({ result: { principal: "ann" } });
    const auth = s.responder.received.at(-1)!.info!.auth!;
    expect(auth).toEqual({ principal: "ann", scopes: ["read"], claims: { tenant: "x" } });
    expect(Object.isFrozen(auth) && Object.isFrozen(auth.scopes) && Object.isFrozen(auth.claims)).toBe(true);
    // A copy: what the hook keeps changing later does not reach handlers.
    scopes.push("write");
    expect(auth.scopes).toEqual(["read"]);
    expect(s.responder.transports[0]!.principal).toBe("ann");
  });

  it("a challenge answers the request as given: status, WWW-Authenticate, extra headers, JSON-RPC error with data", async () => {
    const s = await start({
      authenticate: (): HttpAuthResult => ({
        status: 401,
        wwwAuthenticate: 'Bearer realm="x"',
        message: "Come back with a token",
        data: { hint: 1 },
        headers: { "retry-after": "3" },
      }),
    });
    const res = await post(s.url, initializeMessage());
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="x"');
    expect(res.headers.get("retry-after")).toBe("3");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Come back with a token", data: { hint: 1 } },
    });
    expect(s.mcp.sessions.size).toBe(0);
    // GET and DELETE get it too.
    expect((await fetch(s.url, { headers: { accept: "text/event-stream" } })).status).toBe(401);
  });

  it("a challenge's default message is the status's reason; a challenge wins over authRequired: false", async () => {
    const s = await start({ authenticate: () => ({ status: 403 }), authRequired: false });
    const res = await post(s.url, initializeMessage());
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { message: "Forbidden" } });
  });

  it("an answer of the wrong shape is unauthenticated (401) and reported; a throwing hook is 401 and not reported", async () => {
    const s = await start({
      authenticate: (req) =>
        req.headers["x-mode"] === "throw"
          ? Promise.reject(new Error("secret-token-in-here"))
          : ({ who: "?" } as unknown as string),
    });
    expect((await post(s.url, initializeMessage())).status).toBe(401);
    expect(s.errors.map((e) => e.message)).toEqual([
      "authenticate returned neither a principal, a grant nor a challenge",
    ]);
    expect((await post(s.url, initializeMessage(), { "x-mode": "throw" })).status).toBe(401);
    expect(s.errors).toHaveLength(1);
  });

  it("the challenge header reaches pages of a CORS-listed origin (exposed)", async () => {
    const s = await start({
      cors: { allowedOrigins: ["http://localhost:5173"] },
      authenticate: () => ({ status: 401, wwwAuthenticate: "Bearer" }),
    });
    const res = await post(s.url, initializeMessage(), { origin: "http://localhost:5173" });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-expose-headers")?.split(", ")).toContain("www-authenticate");
  });
});

describe("authorize", () => {
  it("sees every POSTed message with the grant; a challenge refuses it with the request's id, before a session opens", async () => {
    const seen: [unknown, AuthGrant | undefined, string][] = [];
    const s = await start({
      authenticate: () => ({ principal: "ann", scopes: ["a"] }),
      authorize: (message, grant, request) => {
        seen.push([message, grant, request.method]);
        const method = (message as { method?: string }).method;
        if (method === "initialize" && (message as { id?: unknown }).id === "refuse")
          return { status: 403, wwwAuthenticate: 'Bearer error="insufficient_scope"' };
        if (method === "echo" || method === "notifications/denied") return { status: 403, message: "Not for you" };
        return undefined;
      },
    });
    const refused = await post(s.url, initializeMessage("refuse"));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      id: "refuse",
      error: { code: -32600, message: "Forbidden" },
    });
    expect(s.mcp.sessions.size).toBe(0);
    const sid = await initialize(s.url);
    const echo = await post(s.url, { jsonrpc: "2.0", id: 5, method: "echo" }, sessionHeaders(sid));
    expect(echo.status).toBe(403);
    expect(await echo.json()).toMatchObject({ id: 5, error: { message: "Not for you" } });
    const note = await post(s.url, { jsonrpc: "2.0", method: "notifications/denied" }, sessionHeaders(sid));
    expect(note.status).toBe(403);
    expect(await note.json()).toEqual({ jsonrpc: "2.0", error: { code: -32600, message: "Not for you" } });
    const ping = await post(s.url, { jsonrpc: "2.0", id: 6, method: "ping" }, sessionHeaders(sid));
    expect(ping.status).toBe(200);
    await readSse(ping);
    // Refused messages never reached the session; the grant and request came with every call.
    expect(s.responder.received.map((r) => (r.message as { method?: string }).method)).toEqual(["initialize", "ping"]);
    expect(seen.map(([m]) => (m as { method: string }).method)).toEqual([
      "initialize",
      "initialize",
      "echo",
      "notifications/denied",
      "ping",
    ]);
    expect(seen.every(([, grant, method]) => grant?.principal === "ann" && method === "POST")).toBe(true);
  });

  it("an answer that is not a challenge is a server error (500, reported); nothing is delivered", async () => {
    const s = await start({ authorize: () => ({ status: 200 }) });
    const res = await post(s.url, initializeMessage());
    expect(res.status).toBe(500);
    expect(s.errors[0]?.message).toMatch(/authorize returned something other than a challenge/);
    expect(s.responder.received).toEqual([]);
  });

  it("applies behind the fetch handler as well", async () => {
    const mcp = createStreamableHttpServer({ onSession: makeResponder().attach, authorize: () => ({ status: 403 }) });
    try {
      expect((await postToHandler((r) => mcp.fetch(r), initializeMessage(1))).status).toBe(403);
      expect(mcp.sessions.size).toBe(0);
    } finally {
      await mcp.close();
    }
  });
});

describe("routes", () => {
  it("serve GET at their path, unauthenticated, on an endpoint mounted at any path; other methods get 405", async () => {
    const s = await start({
      authenticate: () => null,
      routes: [
        {
          path: "/doc",
          serve: (req) => ({ status: 200, headers: { "content-type": "text/plain" }, body: `doc for ${req.method}` }),
        },
      ],
    });
    const doc = await fetch(`${s.url.replace("/mcp", "")}/doc`);
    expect(doc.status).toBe(200);
    expect(await doc.text()).toBe("doc for GET");
    expect((await fetch(`${s.url.replace("/mcp", "")}/doc`, { method: "DELETE" })).status).toBe(405);
    // The endpoint itself still wants credentials.
    expect((await post(s.url, initializeMessage())).status).toBe(401);
  });

  it("a route that throws is a 500 and reported", async () => {
    const s = await start({ routes: [{ path: "/doc", serve: () => Promise.reject(new Error("no doc")) }] });
    expect((await fetch(`${s.url.replace("/mcp", "")}/doc`)).status).toBe(500);
    expect(s.errors.map((e) => e.message)).toEqual(["no doc"]);
  });
});
