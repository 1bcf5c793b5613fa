// RFC 7662 introspection as the token check: active, audience, time and type checks, client authentication, the caches, the bound on questions.
import { describe, expect, it } from "vitest";
import {
  introspectionVerifier,
  type IntrospectionVerifierOptions,
  type TokenVerifier,
} from "../../../runtime/auth/server/index.js";
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
import { gate, sleep, until } from "../../kit/timing.js";

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

/** How many verify calls the resource server has begun: how a test knows requests reached the verifier. */
interface Entered {
  count: number;
}

async function withServer(
  options: Partial<IntrospectionVerifierOptions>,
  run: (rs: ProtectedServer, entered: Entered) => Promise<void>,
): Promise<void> {
  const verifier = introspectionVerifier({
    endpoint: env.as.introspectionEndpoint,
    clientId: "mcp-server",
    clientSecret: "s3cret:with/odd chars",
    ...options,
  });
  const entered: Entered = { count: 0 };
  const counting: TokenVerifier = {
    verify: (token, context) => {
      entered.count++;
      return verifier.verify(token, context);
    },
    forget: (token) => verifier.forget?.(token),
  };
  const rs = await startProtectedServer(env.as.issuer, counting);
  try {
    await run(rs, entered);
  } finally {
    env.as.holdIntrospection = undefined;
    await rs.stop();
  }
}

describe("introspectionVerifier", () => {
  it("an active token for this resource opens a session as its subject, with its scopes", async () => {
    await withServer({}, async (rs) => {
      const token = opaque(rs, { sub: "bob", scope: "mcp:tools mcp:admin" });
      const sid = await openSession(rs.url, token);
      expect(rs.mcp.sessions.get(sid)?.principal).toBe("sub:bob");
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
    });
    await withServer({ negativeCacheTtlMs: 0 }, async (rs) => {
      // Refusals are not kept here: a token the AS starts to know about is accepted at once.
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

  it("a refused token is asked about once per negativeCacheTtlMs, then again (a token the AS learns of gets in)", async () => {
    await withServer({ negativeCacheTtlMs: 300 }, async (rs) => {
      const token = `unknown-${Math.random()}`;
      const before = hits();
      for (let i = 0; i < 20; i++) {
        const res = await post(rs.url, initializeMessage(), bearer(token));
        expect(res.status).toBe(401);
        expect(parseChallenge(res.headers.get("www-authenticate")).error_description).toMatch(/not active/);
      }
      expect(hits() - before).toBe(1);
      env.as.introspection.set(token, { active: true, sub: "alice", aud: rs.url, exp: now() + 300 });
      await sleep(350);
      await openSession(rs.url, token);
      expect(hits() - before).toBe(2);
    });
    await withServer({ negativeCacheTtlMs: 0 }, async (rs) => {
      const token = `unknown-${Math.random()}`;
      const before = hits();
      for (let i = 0; i < 5; i++) expect((await post(rs.url, initializeMessage(), bearer(token))).status).toBe(401);
      expect(hits() - before).toBe(5);
    });
  });

  it("refusals are pushed out before active answers when the cache is full", async () => {
    await withServer({ maxCacheEntries: 2 }, async (rs) => {
      const good = opaque(rs);
      await openSession(rs.url, good);
      const before = hits();
      for (let i = 0; i < 5; i++) await post(rs.url, initializeMessage(), bearer(`junk-${i}-${Math.random()}`));
      await openSession(rs.url, good);
      // Five junk tokens asked about; the active answer stayed.
      expect(hits() - before).toBe(5);
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
    for (const bad of [
      { negativeCacheTtlMs: -1 },
      { maxConcurrentIntrospections: 0 },
      { maxConcurrentIntrospections: 1.5 },
      { maxQueuedIntrospections: -1 },
    ]) {
      expect(() =>
        introspectionVerifier({ endpoint: env.as.introspectionEndpoint, clientId: "a", clientSecret: "x", ...bad }),
      ).toThrow(RangeError);
    }
  });
});

/** POSTs initialize with each token at once; the responses in order of the tokens. */
function initializeAll(rs: ProtectedServer, tokens: readonly string[]): Promise<Response>[] {
  return tokens.map((token) => post(rs.url, initializeMessage(), bearer(token)));
}

/** The statuses of responses, their bodies read to the end. */
function statusesOf(responses: Promise<Response>[]): Promise<number[]> {
  return Promise.all(
    responses.map(async (pending) => {
      const res = await pending;
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

describe("the questions asked of the authorization server", () => {
  const hits = () => env.as.hits.get("/introspect") ?? 0;

  it("1,000 random tokens at once: at most maxConcurrentIntrospections questions out at a time, one per token", async () => {
    await withServer({ maxQueuedIntrospections: Infinity }, async (rs, entered) => {
      const held = gate();
      env.as.holdIntrospection = held.promise;
      env.as.introspecting.most = 0;
      const before = hits();
      const tokens = Array.from({ length: 1000 }, (_, i) => `random-${i}-${Math.random().toString(36).slice(2)}`);
      const responses = initializeAll(rs, tokens);
      // The AS answers nothing until every token is at the verifier and the default bound (16) is out: the
      // others either wait their turn or would be at the AS by then.
      await until(() => entered.count === 1000 && env.as.introspecting.now >= 16);
      held.open();
      const statuses = await statusesOf(responses);
      expect(statuses.every((status) => status === 401)).toBe(true);
      expect(env.as.introspecting.most).toBe(16);
      expect(hits() - before).toBe(1000);
    });
  });

  it("many requests with one token while it is being asked about: one question", async () => {
    await withServer({ cacheTtlMs: 0, negativeCacheTtlMs: 0 }, async (rs, entered) => {
      const held = gate();
      env.as.holdIntrospection = held.promise;
      const before = hits();
      const token = opaque(rs);
      const responses = initializeAll(rs, Array<string>(50).fill(token));
      // Every request is at the verifier while the first question is out.
      await until(() => entered.count === 50 && env.as.introspecting.now >= 1);
      held.open();
      const statuses = await statusesOf(responses);
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(hits() - before).toBe(1);
    });
  });

  it("past the bound and the wait, 503 with Retry-After (not the token's fault), reported; the others are answered", async () => {
    await withServer({ maxConcurrentIntrospections: 1, maxQueuedIntrospections: 1 }, async (rs, entered) => {
      const held = gate();
      env.as.holdIntrospection = held.promise;
      const responses = initializeAll(
        rs,
        ["a", "b", "c"].map((name) => `${name}-${Math.random()}`),
      );
      const done: Response[] = [];
      for (const r of responses) void r.then((res) => done.push(res));
      // One asking, one waiting, and the third turned away before anything was answered.
      await until(() => entered.count === 3 && done.length === 1);
      expect(env.as.introspecting.now).toBe(1);
      const busy = done[0]!;
      expect(busy.status).toBe(503);
      expect(busy.headers.get("retry-after")).toBe("5");
      expect(rs.errors.map((e) => e.message)).toEqual([
        "Cannot verify access tokens: Token introspection is busy: 1 running and 1 waiting (maxConcurrentIntrospections, maxQueuedIntrospections)",
      ]);
      held.open();
      expect((await statusesOf(responses)).sort()).toEqual([401, 401, 503]);
    });
  });

  it("a token waits for a slot at most timeoutMs, then 503", async () => {
    await withServer({ maxConcurrentIntrospections: 1, timeoutMs: 300 }, async (rs) => {
      // The AS never answers in time: each question is given up after 300 ms.
      env.as.holdIntrospection = new Promise(() => undefined);
      const statuses = await statusesOf(
        initializeAll(
          rs,
          ["a", "b", "c"].map((name) => `${name}-${Math.random()}`),
        ),
      );
      expect(statuses).toEqual([503, 503, 503]);
      // The last waited behind two questions of 300 ms each: its wait ran out first.
      expect(rs.errors.map((e) => e.message)).toContain(
        "Cannot verify access tokens: Token introspection is busy: no turn within 300 ms",
      );
    });
  });
});
