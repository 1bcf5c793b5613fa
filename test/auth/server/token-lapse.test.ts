// Streams opened with a bearer token end when it lapses: at its exp, on ProtectedResource.revoke, and once a request presenting it is refused.
import { describe, expect, it } from "vitest";
import { introspectionVerifier, jwtVerifier } from "../../../runtime/auth/server/index.js";
import { initializeMessage, post, readSse, sessionHeaders, type SseRead } from "../../http/helpers.js";
import { gate, until } from "../../kit/timing.js";
import { bearer, openSession, parseChallenge, startProtectedServer, useAuthServers } from "./helpers.js";

const env = useAuthServers();
const now = () => Math.floor(Date.now() / 1000);

function openGet(url: string, sid: string, token: string): Promise<Response> {
  return fetch(url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid), ...bearer(token) } });
}

/** Reads a stream in the background; the returned record fills up as events come and says when it ended. */
function follow(res: Response): SseRead {
  const read: SseRead = { events: [], messages: [], ended: false };
  void readSse(res, undefined, read);
  return read;
}

const ended = (read: SseRead) => until(() => read.ended, 5_000, "the stream did not end");

describe("a token's expiry", () => {
  it("ends the GET stream opened with it at its exp, with retry; the expired token is then refused, a fresh one resumes", async () => {
    const rs = await startProtectedServer(
      env.as.issuer,
      jwtVerifier({ issuer: env.as.issuer, clockToleranceSeconds: 0 }),
      { transport: { retryMs: 200 } },
    );
    try {
      const lasting = await env.as.mint(rs.url);
      const sid = await openSession(rs.url, lasting);
      const brief = await env.as.mint(rs.url, { exp: now() + 2 });
      const res = await openGet(rs.url, sid, brief);
      expect(res.status).toBe(200);
      const read = follow(res);
      await ended(read);
      expect(read.retry).toBe(200);
      expect(Date.now()).toBeGreaterThanOrEqual(parseExp(brief) * 1000);

      const stale = await openGet(rs.url, sid, brief);
      expect(stale.status).toBe(401);
      expect(parseChallenge(stale.headers.get("www-authenticate")).error_description).toMatch(/expired/);
      await stale.body?.cancel();
      const fresh = await fetch(rs.url, {
        headers: {
          accept: "text/event-stream",
          "last-event-id": read.events.at(-1)!.id,
          ...sessionHeaders(sid),
          ...bearer(lasting),
        },
      });
      expect(fresh.status).toBe(200);
      await fresh.body?.cancel();
    } finally {
      await rs.stop();
    }
  });
});

function parseExp(jwt: string): number {
  return (JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as { exp: number }).exp;
}

describe("ProtectedResource.revoke", () => {
  it("ends the streams opened with the token (GET and POST), not those of another token of the same subject", async () => {
    const rs = await startProtectedServer(env.as.issuer, jwtVerifier({ issuer: env.as.issuer }), {
      transport: { retryMs: 200 },
    });
    const hold = gate();
    rs.server.tool("hold", {}, async () => {
      await hold.promise;
      return "held";
    });
    try {
      const doomed = await env.as.mint(rs.url, { jti: "doomed" });
      const kept = await env.as.mint(rs.url, { jti: "kept" });
      const sid = await openSession(rs.url, doomed);
      const sid2 = await openSession(rs.url, kept);
      const get = follow(await openGet(rs.url, sid, doomed));
      const keptGet = follow(await openGet(rs.url, sid2, kept));
      const call = follow(
        await post(
          rs.url,
          { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "hold", arguments: {} } },
          { ...sessionHeaders(sid), ...bearer(doomed) },
        ),
      );
      await until(() => rs.server.sessions.some((s) => [...s.operations.inbound.values()].length > 0));
      await until(
        () => rs.mcp.sessions.get(sid)!.standaloneConnected && rs.mcp.sessions.get(sid2)!.standaloneConnected,
      );

      expect(await rs.resource.revoke(doomed)).toBe(2);
      await ended(get);
      await ended(call);
      expect([get.retry, call.retry]).toEqual([200, 200]);
      expect(rs.mcp.sessions.get(sid2)!.standaloneConnected).toBe(true);
      expect(keptGet.ended).toBe(false);
      // Nothing is left to end: the streams went, and their subscriptions with them.
      expect(await rs.resource.revoke(doomed)).toBe(0);
      // A JWT stays valid until its exp: whether it is accepted again is the verifier's call.
      expect((await openGet(rs.url, sid, doomed)).status).toBe(200);
    } finally {
      hold.open();
      await rs.stop();
    }
  });

  it("makes the introspection verifier forget its cached answer: the next request asks the AS again", async () => {
    const rs = await startProtectedServer(
      env.as.issuer,
      introspectionVerifier({
        endpoint: env.as.introspectionEndpoint,
        clientId: "mcp-server",
        clientSecret: "s3cret:with/odd chars",
      }),
    );
    try {
      const token = `opaque-${Math.random()}`;
      env.as.introspection.set(token, { active: true, sub: "alice", aud: rs.url, exp: now() + 300 });
      const sid = await openSession(rs.url, token);
      // Revoked at the AS: the cached answer would still let it in for cacheTtlMs.
      env.as.introspection.set(token, { active: false });
      await rs.resource.revoke(token);
      const res = await post(
        rs.url,
        { jsonrpc: "2.0", id: 1, method: "ping" },
        {
          ...sessionHeaders(sid),
          ...bearer(token),
        },
      );
      expect(res.status).toBe(401);
      await res.body?.cancel();
    } finally {
      await rs.stop();
    }
  });
});

describe("a token refused on a later request", () => {
  it("ends the streams opened with it (the AS revoked it, introspection said so)", async () => {
    const rs = await startProtectedServer(
      env.as.issuer,
      introspectionVerifier({
        endpoint: env.as.introspectionEndpoint,
        clientId: "mcp-server",
        clientSecret: "s3cret:with/odd chars",
        cacheTtlMs: 0,
        negativeCacheTtlMs: 0,
      }),
    );
    try {
      const token = `opaque-${Math.random()}`;
      env.as.introspection.set(token, { active: true, sub: "alice", aud: rs.url, exp: now() + 300 });
      const sid = await openSession(rs.url, token);
      const get = follow(await openGet(rs.url, sid, token));
      await until(() => rs.mcp.sessions.get(sid)!.standaloneConnected);
      env.as.introspection.set(token, { active: false });
      const refused = await post(rs.url, initializeMessage(), bearer(token));
      expect(refused.status).toBe(401);
      await refused.body?.cancel();
      await ended(get);
      expect(rs.mcp.sessions.get(sid)!.standaloneConnected).toBe(false);
    } finally {
      await rs.stop();
    }
  });
});
