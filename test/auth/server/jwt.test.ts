// JWT access tokens at a protected MCP endpoint: every way a request can fail the bearer check, and what it is told.
import { SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwtVerifier } from "../../../runtime/auth/server/index.js";
import { deadOrigin } from "../../kit/net.js";
import { initializeMessage, post } from "../../http/helpers.js";
import {
  bearer,
  openSession,
  parseChallenge,
  signingKey,
  startAuthorizationServer,
  startProtectedServer,
  type ProtectedServer,
  type SigningKey,
  type TestAuthorizationServer,
} from "./helpers.js";

let as: TestAuthorizationServer;
let rs: ProtectedServer;
let stranger: SigningKey;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  as = await startAuthorizationServer();
  rs = await startProtectedServer(as.issuer, jwtVerifier({ issuer: as.issuer }), { requiredScopes: ["mcp:tools"] });
  stranger = await signingKey("key-1");
});
afterAll(async () => {
  await rs?.stop();
  await as?.stop();
});

interface Case {
  name: string;
  headers: () => Promise<Record<string, string>>;
  /** Appended to the endpoint URL. */
  query?: () => Promise<string>;
  status: number;
  error?: string;
  description?: RegExp;
}

const token =
  (claims: Record<string, unknown> = {}, options: Parameters<TestAuthorizationServer["mint"]>[2] = {}) =>
  async () =>
    bearer(await as.mint(rs.url, claims, options));

const CASES: Case[] = [
  { name: "no Authorization header", headers: async () => ({}), status: 401 },
  { name: "another scheme (Basic)", headers: async () => ({ authorization: "Basic YWxpY2U6cHc=" }), status: 401 },
  {
    name: "Bearer without a token",
    headers: async () => ({ authorization: "Bearer" }),
    status: 400,
    error: "invalid_request",
    description: /Bearer <token>/,
  },
  {
    name: "two tokens",
    headers: async () => ({ authorization: "Bearer abc def" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "a character no token has",
    headers: async () => ({ authorization: "Bearer abc,def" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "a valid token in the URL query as well",
    headers: token(),
    query: async () => `?access_token=${await as.mint(rs.url)}`,
    status: 400,
    error: "invalid_request",
    description: /not in the URL/,
  },
  {
    name: "not a JWT",
    headers: async () => bearer("abcdef"),
    status: 401,
    error: "invalid_token",
    description: /not a valid/,
  },
  {
    name: "bad signature (another key, same kid)",
    headers: async () => bearer(await as.mint(rs.url, {}, { key: stranger })),
    status: 401,
    error: "invalid_token",
    description: /signature does not verify/,
  },
  {
    name: "wrong issuer",
    headers: token({ iss: "https://evil.example" }),
    status: 401,
    error: "invalid_token",
    description: /untrusted issuer/,
  },
  {
    name: "wrong audience",
    headers: token({ aud: "https://other.example/mcp" }),
    status: 401,
    error: "invalid_token",
    description: /another resource/,
  },
  {
    name: "no audience",
    headers: token({}, { without: ["aud"] }),
    status: 401,
    error: "invalid_token",
    description: /another resource/,
  },
  { name: "expired", headers: token({ exp: now() - 60 }), status: 401, error: "invalid_token", description: /expired/ },
  {
    name: "no expiry",
    headers: token({}, { without: ["exp"] }),
    status: 401,
    error: "invalid_token",
    description: /expiry/,
  },
  {
    name: "nbf in the future",
    headers: token({ nbf: now() + 120 }),
    status: 401,
    error: "invalid_token",
    description: /not valid yet/,
  },
  {
    name: "alg none",
    headers: async () =>
      bearer(
        new UnsecuredJWT({ iss: as.issuer, aud: rs.url, sub: "alice", scope: "mcp:tools", exp: now() + 300 }).encode(),
      ),
    status: 401,
    error: "invalid_token",
    description: /algorithm is not accepted/,
  },
  {
    name: "HS256 (not allowed by default), keyed with the public JWK's text",
    headers: async () =>
      bearer(
        await new SignJWT({ iss: as.issuer, aud: rs.url, sub: "alice", scope: "mcp:tools", exp: now() + 300 })
          .setProtectedHeader({ alg: "HS256", kid: "key-1", typ: "at+jwt" })
          .sign(new TextEncoder().encode(JSON.stringify(as.key.publicJwk))),
      ),
    status: 401,
    error: "invalid_token",
    description: /algorithm is not accepted/,
  },
  {
    name: "typ JWT (an ID token, say)",
    headers: token({}, { header: { typ: "JWT" } }),
    status: 401,
    error: "invalid_token",
    description: /not an access token/,
  },
  {
    name: "a key id the issuer does not have",
    headers: token({}, { header: { kid: "key-9" } }),
    status: 401,
    error: "invalid_token",
    description: /No key/,
  },
  {
    name: "sender-constrained (cnf.jkt)",
    headers: token({ cnf: { jkt: "abc" } }),
    status: 401,
    error: "invalid_token",
    description: /sender-constrained/,
  },
  {
    name: "no subject and no client id",
    headers: token({}, { without: ["sub", "client_id"] }),
    status: 401,
    error: "invalid_token",
    description: /no subject/,
  },
  {
    name: "valid, without the scope every request needs",
    headers: token({ scope: "openid" }),
    status: 403,
    error: "insufficient_scope",
    description: /mcp:tools/,
  },
];

describe("JWT bearer check at the MCP endpoint (node listener)", () => {
  it.each(CASES)("$name: HTTP $status $error, a challenge naming the metadata, no session", async (c) => {
    const query = c.query ? await c.query() : "";
    const res = await post(rs.url + query, initializeMessage(), await c.headers());
    expect(res.status).toBe(c.status);
    const challenge = parseChallenge(res.headers.get("www-authenticate"));
    expect(challenge.resource_metadata).toBe(`${rs.origin}/.well-known/oauth-protected-resource/mcp`);
    expect(challenge.error).toBe(c.error);
    if (c.description) expect(challenge.error_description).toMatch(c.description);
    if (c.status !== 400) expect(challenge.scope?.split(" ")).toContain("mcp:tools");
    // The body is a JSON-RPC error saying the same, for clients that read bodies.
    const body = (await res.json()) as { error: { message: string; data?: { error?: string } } };
    expect(body.error.data?.error).toBe(c.error);
    expect(rs.mcp.sessions.size).toBe(0);
  });

  it("a valid token opens a session bound to its subject", async () => {
    const sid = await openSession(rs.url, await as.mint(rs.url));
    expect(rs.mcp.sessions.get(sid)?.principal).toBe("sub:alice");
    expect(rs.errors).toEqual([]);
  });

  it("accepts the scheme in any case and a token with base64 padding characters it allows", async () => {
    const jwt = await as.mint(rs.url, { sub: "carol" });
    const res = await post(rs.url, initializeMessage(), { authorization: `bEaReR ${jwt}` });
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });
});

describe("jwtVerifier options", () => {
  it("audience: false (an explicit opt-out) accepts a token for another resource; typ: false a plain JWT", async () => {
    const loose = await startProtectedServer(
      as.issuer,
      jwtVerifier({ issuer: as.issuer, audience: false, typ: false }),
    );
    try {
      const other = await as.mint("https://other.example/mcp", { sub: "dave" }, { header: { typ: "JWT" } });
      const sid = await openSession(loose.url, other);
      expect(loose.mcp.sessions.get(sid)?.principal).toBe("sub:dave");
    } finally {
      await loose.stop();
    }
  });

  it("a configured audience list replaces the resource (an API identifier)", async () => {
    const api = await startProtectedServer(as.issuer, jwtVerifier({ issuer: as.issuer, audience: ["api://mcp"] }));
    try {
      expect((await post(api.url, initializeMessage(), bearer(await as.mint(api.url)))).status).toBe(401);
      const ok = await post(api.url, initializeMessage(), bearer(await as.mint("api://mcp")));
      expect(ok.status).toBe(200);
      await ok.body?.cancel();
    } finally {
      await api.stop();
    }
  });

  it("an audience that differs only in URL form (upper-case scheme) still matches", async () => {
    const res = await post(rs.url, initializeMessage(), bearer(await as.mint(rs.url.replace("http:", "HTTP:"))));
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });

  it("refuses what cannot be safe: no issuer, alg none in the list, a limit out of range", () => {
    expect(() => jwtVerifier({ issuer: "" })).toThrow(/issuer/);
    expect(() => jwtVerifier({ issuer: as.issuer, algorithms: ["RS256", "none"] })).toThrow(/never none/);
    expect(() => jwtVerifier({ issuer: as.issuer, clockToleranceSeconds: -1 })).toThrow(RangeError);
  });
});

describe("finding the issuer's keys", () => {
  it("through OpenID Connect discovery when RFC 8414 metadata is not served; prepare() finds them up front", async () => {
    const oidc = await startAuthorizationServer({ discovery: "oidc" });
    const verifier = jwtVerifier({ issuer: oidc.issuer });
    await verifier.prepare();
    expect(oidc.hits.get("/.well-known/oauth-authorization-server")).toBe(1);
    expect(oidc.hits.get("/.well-known/openid-configuration")).toBe(1);
    expect(oidc.hits.get("/jwks")).toBe(1);
    const rs2 = await startProtectedServer(oidc.issuer, verifier);
    try {
      await openSession(rs2.url, await oidc.mint(rs2.url));
      await openSession(rs2.url, await oidc.mint(rs2.url));
      // Cached: neither the metadata nor the keys were fetched again.
      expect(oidc.hits.get("/.well-known/openid-configuration")).toBe(1);
      expect(oidc.hits.get("/jwks")).toBe(1);
    } finally {
      await rs2.stop();
      await oidc.stop();
    }
  });

  it("metadata naming another issuer is not used: 503, reported without the token", async () => {
    const liar = await startAuthorizationServer({ metadataIssuer: "https://evil.example" });
    const rs2 = await startProtectedServer(liar.issuer, jwtVerifier({ issuer: liar.issuer }));
    try {
      const jwt = await liar.mint(rs2.url);
      const res = await post(rs2.url, initializeMessage(), bearer(jwt));
      expect(res.status).toBe(503);
      expect(res.headers.get("www-authenticate")).toBeNull();
      expect(rs2.errors.map((e) => e.message).join("\n")).toMatch(/names the issuer "https:\/\/evil.example"/);
      expect(rs2.errors.map((e) => e.message).join("\n")).not.toContain(jwt);
      await expect(jwtVerifier({ issuer: liar.issuer }).prepare()).rejects.toThrow(/names the issuer/);
    } finally {
      await rs2.stop();
      await liar.stop();
    }
  });

  it("a key set that cannot be fetched (nothing listening) is 503 with Retry-After, and reported", async () => {
    const deadUri = `${await deadOrigin()}/jwks`;
    const rs2 = await startProtectedServer(as.issuer, jwtVerifier({ issuer: as.issuer, jwksUri: deadUri }), {
      retryAfterSeconds: 30,
    });
    try {
      const res = await post(rs2.url, initializeMessage(), bearer(await as.mint(rs2.url)));
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("30");
      expect(rs2.errors).toHaveLength(1);
      expect(rs2.errors[0]!.message).toMatch(/Cannot verify access tokens/);
    } finally {
      await rs2.stop();
    }
  });
});
