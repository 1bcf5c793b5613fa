// No token value in any answer, error, onerror report or console line, on every failure path of the bearer check.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  InvalidTokenError,
  introspectionVerifier,
  jwtVerifier,
  type TokenVerifier,
} from "../../../runtime/auth/server/index.js";
import { deadOrigin } from "../../kit/net.js";
import { initializeMessage, post } from "../../http/helpers.js";
import {
  bearer,
  callTool,
  openSession,
  signingKey,
  startAuthorizationServer,
  startProtectedServer,
  type ProtectedServer,
  type TestAuthorizationServer,
  useAuthServers,
} from "./helpers.js";

const env = useAuthServers();
let liar: TestAuthorizationServer;
let deadServer: string;
const seen: string[] = [];
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  liar = await startAuthorizationServer({ metadataIssuer: "https://evil.example" });
  deadServer = await deadOrigin();
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void seen.push(args.map(String).join(" ")));
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await liar?.stop();
});

/** Everything a response shows: status, every header, the body. */
async function shown(res: Response): Promise<string> {
  const headers: string[] = [];
  res.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
  return `${res.status}\n${headers.join("\n")}\n${await res.text()}`;
}

/** Everything an error carries that could be logged: message, stack, cause, own properties. */
function errorText(error: Error): string {
  return [
    error.message,
    error.stack ?? "",
    String((error as { cause?: unknown }).cause ?? ""),
    JSON.stringify(error),
  ].join("\n");
}

/** The token and, for a JWT, its signature alone: neither may appear anywhere. */
function fragments(token: string): string[] {
  const parts = token.split(".");
  return parts.length === 3 ? [token, parts[2]!] : [token];
}

interface Path {
  name: string;
  verifier: () => TokenVerifier;
  /** Makes the tokens and sends the requests; returns what the client saw. */
  run: (rs: ProtectedServer) => Promise<{ tokens: string[]; texts: string[] }>;
}

const send = async (rs: ProtectedServer, token: string, extra = ""): Promise<{ tokens: string[]; texts: string[] }> => {
  const res = await post(rs.url + extra, initializeMessage(), bearer(token));
  return { tokens: [token], texts: [await shown(res)] };
};
const jwt = () => jwtVerifier({ issuer: env.as.issuer });
const introspection = (endpoint = env.as.introspectionEndpoint, clientSecret = "s3cret:with/odd chars") =>
  introspectionVerifier({ endpoint, clientId: "mcp-server", clientSecret });

const PATHS: Path[] = [
  { name: "JWT expired", verifier: jwt, run: async (rs) => send(rs, await env.as.mint(rs.url, { exp: now() - 60 })) },
  {
    name: "JWT for another audience",
    verifier: jwt,
    run: async (rs) => send(rs, await env.as.mint("https://other.example/mcp")),
  },
  {
    name: "JWT with a bad signature",
    verifier: jwt,
    run: async (rs) => send(rs, await env.as.mint(rs.url, {}, { key: await signingKey("key-1") })),
  },
  {
    name: "JWT of the wrong type",
    verifier: jwt,
    run: async (rs) => send(rs, await env.as.mint(rs.url, {}, { header: { typ: "JWT" } })),
  },
  { name: "not a JWT", verifier: jwt, run: async (rs) => send(rs, `leak-me-${Math.random().toString(36).slice(2)}`) },
  {
    name: "a malformed header",
    verifier: jwt,
    run: async (rs) => {
      const token = `leak-me-${Math.random().toString(36).slice(2)}`;
      const res = await post(rs.url, initializeMessage(), { authorization: `Bearer ${token} ${token}` });
      return { tokens: [token], texts: [await shown(res)] };
    },
  },
  {
    name: "a token in the query",
    verifier: jwt,
    run: async (rs) => {
      const token = await env.as.mint(rs.url);
      return send(rs, token, `?access_token=${token}`);
    },
  },
  {
    name: "keys unreachable",
    verifier: () => jwtVerifier({ issuer: env.as.issuer, jwksUri: `${deadServer}/jwks` }),
    run: async (rs) => send(rs, await env.as.mint(rs.url)),
  },
  {
    name: "metadata of another issuer",
    verifier: () => jwtVerifier({ issuer: liar.issuer }),
    run: async (rs) => send(rs, await liar.mint(rs.url)),
  },
  {
    name: "introspection: inactive",
    verifier: introspection,
    run: async (rs) => send(rs, `opaque-leak-${Math.random()}`),
  },
  {
    name: "introspection: the AS refuses our credentials",
    verifier: () => introspection(undefined, "wrong"),
    run: async (rs) => send(rs, `opaque-leak-${Math.random()}`),
  },
  {
    name: "introspection: nothing listening",
    verifier: () => introspection(`${deadServer}/introspect`),
    run: async (rs) => send(rs, `opaque-leak-${Math.random()}`),
  },
  {
    name: "a custom verifier whose errors quote the token",
    verifier: () => ({
      verify: async (token) => {
        if (token.startsWith("refuse")) throw new InvalidTokenError(`token ${token} is revoked`);
        throw new Error(`backend failed for ${token}`);
      },
    }),
    run: async (rs) => {
      const refused = await send(rs, `refuse-${Math.random().toString(36).slice(2)}`);
      const failed = await send(rs, `fail-${Math.random().toString(36).slice(2)}`);
      return { tokens: [...refused.tokens, ...failed.tokens], texts: [...refused.texts, ...failed.texts] };
    },
  },
  {
    name: "insufficient scope for a tool",
    verifier: jwt,
    run: async (rs) => {
      const token = await env.as.mint(rs.url);
      const sid = await openSession(rs.url, token);
      const refused = await callTool(rs.url, sid, token, "admin");
      expect(refused.status).toBe(403);
      return { tokens: [token], texts: [JSON.stringify(refused)] };
    },
  },
];

describe("no token value leaks", () => {
  it.each(PATHS)("$name", async (path) => {
    const rs = await startProtectedServer(env.as.issuer, path.verifier());
    try {
      seen.length = 0;
      const { tokens, texts } = await path.run(rs);
      const everything = [...texts, ...rs.errors.map(errorText), ...seen].join("\n---\n");
      // The answers say something (a challenge, an error) ...
      expect(texts.every((t) => /^(4|5)\d\d\b|"status":403/.test(t))).toBe(true);
      // ... and nothing anywhere quotes a token.
      for (const fragment of tokens.flatMap(fragments)) expect(everything).not.toContain(fragment);
    } finally {
      await rs.stop();
    }
  });

  it("the custom verifier's errors are scrubbed, not dropped: onerror still says what failed", async () => {
    const rs = await startProtectedServer(env.as.issuer, {
      verify: async (token) => Promise.reject(new Error(`backend failed for ${token}`)),
    });
    try {
      const res = await post(rs.url, initializeMessage(), bearer("some-opaque-token"));
      expect(res.status).toBe(503);
      expect(rs.errors.map((e) => e.message)).toEqual(["Cannot verify access tokens: backend failed for [token]"]);
    } finally {
      await rs.stop();
    }
  });
});
