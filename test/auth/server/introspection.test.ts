// RFC 7662 introspection as the token check: active, audience, time and type checks, client authentication, the cache.
import { describe, expect, it } from "vitest";
import { introspectionVerifier, type IntrospectionVerifierOptions } from "../../../runtime/auth/server/index.js";
import { deadOrigin } from "../../kit/net.js";
import { initializeMessage, post } from "../../http/helpers.js";
import {
  bearer,
  openSession,
  parseChallenge,
  startProtectedServer,
  type ProtectedServer,
  useAuthServers,
} from "./helpers.js";
import { sleep } from "../../kit/timing.js";

const env = useAuthServers();
const now = () => Math.floor(Date.now() / 1000);
let counter = 0;
/** A fresh opaque token the AS answers `answer` for (`aud` defaults to the resource). */
function opaque(rs: ProtectedServer, answer: Record<string, unknown> = {}): string {
  const token = `opaque-${++counter}-${Math.random().toString(36).slice(2)}`;
  env.as.introspection.set(token, {
    active: true,
    sub: "alice",
    scope: "mcp:tools",
    aud: rs.url,
    exp: now() + 300,
    iss: env.as.issuer,
    token_type: "Bearer",
    ...answer,
  });
  return token;
}

async function withServer(
  options: Partial<IntrospectionVerifierOptions>,
  run: (rs: ProtectedServer) => Promise<void>,
): Promise<void> {
  const verifier = introspectionVerifier({
    endpoint: env.as.introspectionEndpoint,
    clientId: "mcp-server",
    clientSecret: "s3cret:with/odd chars",
    ...options,
  });
  const rs = await startProtectedServer(env.as.issuer, verifier);
  try {
    await run(rs);
  } finally {
    await rs.stop();
  }
}

describe("introspectionVerifier", () => {
  it("an active token for this resource opens a session as its subject, with its scopes", async () => {
    await withServer({}, async (rs) => {
      const token = opaque(rs, { sub: "bob", scope: "mcp:tools mcp:admin" });
      const sid = await openSession(rs.url, token);
      expect(rs.mcp.sessions.get(sid)?.principal).toBe("bob");
    });
  });

  const REFUSED: [string, Record<string, unknown> | undefined, RegExp][] = [
    ["inactive", { active: false }, /not active/],
    ["unknown to the AS", undefined, /not active/],
    ["for another audience", { aud: "https://other.example/mcp" }, /another resource/],
    ["without an audience", { aud: undefined }, /another resource/],
    ["expired by exp", { exp: now() - 60 }, /expired/],
    ["not valid yet", { nbf: now() + 120 }, /not valid yet/],
    ["from another issuer (issuer configured)", { iss: "https://evil.example" }, /untrusted issuer/],
    ["a refresh token", { token_type: "refresh_token" }, /not a bearer access token/],
    ["sender-constrained (cnf)", { cnf: { "x5t#S256": "abc" } }, /sender-constrained/],
  ];
  it.each(REFUSED)("%s: 401 invalid_token", async (_name, answer, description) => {
    await withServer({ issuer: env.as.issuer }, async (rs) => {
      const token = answer === undefined ? "never-issued" : opaque(rs, answer);
      const res = await post(rs.url, initializeMessage(), bearer(token));
      expect(res.status).toBe(401);
      const challenge = parseChallenge(res.headers.get("www-authenticate"));
      expect(challenge.error).toBe("invalid_token");
      expect(challenge.error_description).toMatch(description);
      expect(rs.mcp.sessions.size).toBe(0);
    });
  });

  it("client_secret_post sends the credentials in the form instead", async () => {
    await withServer({ authMethod: "client_secret_post" }, async (rs) => {
      await openSession(rs.url, opaque(rs));
    });
  });

  it("wrong client credentials: the AS refuses us, which is 503 (not the token's fault), reported without the token", async () => {
    await withServer({ clientSecret: "wrong" }, async (rs) => {
      const token = opaque(rs);
      const res = await post(rs.url, initializeMessage(), bearer(token));
      expect(res.status).toBe(503);
      expect(rs.errors.map((e) => e.message)).toEqual([
        `Cannot verify access tokens: Token introspection at ${env.as.introspectionEndpoint} answered HTTP 401`,
      ]);
    });
  });

  it("an introspection endpoint with nothing listening: 503", async () => {
    const endpoint = `${await deadOrigin()}/introspect`;
    await withServer({ endpoint }, async (rs) => {
      expect((await post(rs.url, initializeMessage(), bearer(opaque(rs)))).status).toBe(503);
      expect(rs.errors[0]?.message).toMatch(/Token introspection at .* failed/);
    });
  });
});

describe("introspection cache", () => {
  const hits = () => env.as.hits.get("/introspect") ?? 0;

  it("reuses an active answer for the same token; cacheTtlMs 0 asks every time", async () => {
    await withServer({}, async (rs) => {
      const token = opaque(rs);
      const before = hits();
      await openSession(rs.url, token);
      await openSession(rs.url, token);
      expect(hits() - before).toBe(1);
      // Inactive answers are not kept: a token the AS starts to know about is accepted at once.
      const late = "issued-later";
      expect((await post(rs.url, initializeMessage(), bearer(late))).status).toBe(401);
      env.as.introspection.set(late, { active: true, sub: "alice", aud: rs.url, exp: now() + 300 });
      await openSession(rs.url, late);
    });
    await withServer({ cacheTtlMs: 0 }, async (rs) => {
      const token = opaque(rs);
      const before = hits();
      await openSession(rs.url, token);
      await openSession(rs.url, token);
      expect(hits() - before).toBe(4);
    });
  });

  it("keeps at most maxCacheEntries answers", async () => {
    await withServer({ maxCacheEntries: 1 }, async (rs) => {
      const [a, b] = [opaque(rs), opaque(rs)];
      const before = hits();
      for (const token of [a, a, b, a]) await openSession(rs.url, token);
      // a (asked), a (cached), b (asked, pushes a out), a (asked again).
      expect(hits() - before).toBe(3);
    });
  });

  it("never past the token's exp: the answer is asked again once it expired", async () => {
    await withServer({ clockToleranceSeconds: 0 }, async (rs) => {
      const token = opaque(rs, { exp: now() + 1 });
      await openSession(rs.url, token);
      const before = hits();
      await sleep(2100);
      const res = await post(rs.url, initializeMessage(), bearer(token));
      expect(res.status).toBe(401);
      expect(hits() - before).toBe(1);
    });
  });

  it("refuses missing credentials and out-of-range limits when configured", () => {
    expect(() =>
      introspectionVerifier({ endpoint: env.as.introspectionEndpoint, clientId: "", clientSecret: "x" }),
    ).toThrow(/clientId/);
    expect(() =>
      introspectionVerifier({
        endpoint: env.as.introspectionEndpoint,
        clientId: "a",
        clientSecret: "x",
        cacheTtlMs: -1,
      }),
    ).toThrow(RangeError);
    expect(() =>
      introspectionVerifier({
        endpoint: env.as.introspectionEndpoint,
        clientId: "a",
        clientSecret: "x",
        authMethod: "private_key_jwt" as "client_secret_post",
      }),
    ).toThrow(/authMethod/);
  });
});
