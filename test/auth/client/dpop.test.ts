// DPoP (RFC 9449, SEP-1932) end to end: oidc-provider requiring nonces issues DPoP-bound tokens, and a resource server verifies every proof with jose.
import { webcrypto } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from "jose";
import {
  ClientCredentialsClient,
  InMemoryOAuthStore,
  OAuthClient,
  OAuthError,
  type DPoPOptions,
} from "../../../runtime/auth/index.js";
import type { AuthorizationServer } from "../oidc/helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";
import { REDIRECT, connectWith, expireSoon, headlessUser, signingKeyPair, startWorld, type World } from "./helpers.js";
import { startResource, type Resource } from "./oidc-resource.js";
import { jsonOf, recordingFetch, startDPoPAuthorizationServer, userClient, type Exchange } from "./oidc-helpers.js";

const MACHINE = {
  client_id: "dpop-machine",
  client_secret: "dpop-machine-secret-value",
  grant_types: ["client_credentials"],
  redirect_uris: [],
  response_types: [],
};

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startDPoPAuthorizationServer({ clients: [MACHINE] }, { requireNonce: true });
});
afterAll(async () => {
  await as?.stop();
});

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function resource(options: Partial<Parameters<typeof startResource>[0]> = {}): Promise<Resource> {
  const rs = await startResource({
    authorizationServers: () => [as.issuer],
    scheme: "dpop",
    requireNonce: true,
    ...options,
  });
  cleanup(() => rs.stop());
  return rs;
}

async function connect(url: string, oauth: Parameters<typeof connectWith>[1]) {
  const client = await connectWith(url, oauth);
  cleanup(() => client.peer.close());
  return client;
}

const whoami = async (client: Awaited<ReturnType<typeof connect>>) =>
  jsonOf(await client.callTool({ name: "whoami", arguments: {} }));

const tokenExchanges = (log: Exchange[]) => log.filter((e) => e.method === "POST" && e.url.endsWith("/token"));
const bodyOf = (exchange: Exchange) => JSON.parse(exchange.responseBody) as Record<string, unknown>;

/** The thumbprint of the key a proof names in its `jwk` header. */
const keyOf = (proof: string) => calculateJwkThumbprint(decodeProtectedHeader(proof).jwk as JWK);

describe("the authorization code client with dpop: true", () => {
  it("proves possession at the token endpoint (retrying once with the server's nonce) and at the MCP server, with every proof verified", async () => {
    const rs = await resource({ rotateNonceEvery: 2 });
    const log: Exchange[] = [];
    const user = userClient(as, { dpop: true, fetch: recordingFetch(log) });
    const client = await connect(rs.url, user.oauth);
    expect(await whoami(client)).toMatchObject({ sub: "alice", iss: as.issuer, scheme: "DPoP" });
    await client.listTools();
    await client.listTools();

    // The token endpoint refused the first proof for want of a nonce; the second carried the one it gave (the same
    // exchange: the user authorized once).
    expect(user.authorizations).toHaveLength(1);
    const [refused, issued, ...more] = tokenExchanges(log);
    expect(more).toEqual([]);
    expect(refused!.status).toBe(400);
    expect(bodyOf(refused!).error).toBe("use_dpop_nonce");
    const nonce = refused!.responseHeaders["dpop-nonce"];
    expect(nonce).toBeTruthy();
    expect(decodeJwt(refused!.headers.dpop!).nonce).toBeUndefined();
    expect(issued!.status).toBe(200);
    expect(decodeProtectedHeader(issued!.headers.dpop!)).toMatchObject({ typ: "dpop+jwt", alg: "ES256" });
    expect(decodeJwt(issued!.headers.dpop!)).toMatchObject({
      htm: "POST",
      htu: `${as.issuer}/token`,
      nonce,
    });
    expect(bodyOf(issued!).token_type).toBe("DPoP");
    const accessToken = String(bodyOf(issued!).access_token);
    const jkt = await keyOf(issued!.headers.dpop!);
    expect((decodeJwt(accessToken).cnf as { jkt?: string }).jkt).toBe(jkt);

    // At the MCP server: the DPoP scheme, a proof per request (each verified: htm, htu, iat, jti, ath, and the
    // token's key), the server's nonce asked for once and then carried, its rotations picked up from responses.
    const presented = rs.seen.filter((s) => s.authorization !== undefined);
    expect(presented.length).toBeGreaterThanOrEqual(6);
    expect(presented.every((s) => s.authorization === `DPoP ${accessToken}` && s.dpop !== undefined)).toBe(true);
    expect(rs.seen.filter((s) => s.challenge?.includes('error="use_dpop_nonce"'))).toHaveLength(1);
    expect(rs.proofs.length).toBe(rs.accepted.length);
    expect(rs.proofs.every((p) => p.jkt === jkt && p.htm === "POST" && p.htu === rs.url)).toBe(true);
    expect(new Set(rs.proofs.map((p) => p.jti)).size).toBe(rs.proofs.length);
    expect(rs.nonces.length).toBeGreaterThanOrEqual(3);
    expect(rs.proofs.map((p) => p.nonce)).toEqual(
      rs.proofs.map((_, i) => rs.nonces[Math.floor(i / 2)]), // a new nonce after every second request
    );
    // The stored tokens say what they are bound to.
    const stored = await user.store.getTokens(rs.url);
    expect(stored).toMatchObject({ token_type: "dpop", dpop_jkt: jkt });
  });

  it("refreshes with a proof from the same key, and the new token is bound to it", async () => {
    const rs = await resource();
    const log: Exchange[] = [];
    const user = userClient(as, { dpop: true, fetch: recordingFetch(log) });
    const client = await connect(rs.url, user.oauth);
    await whoami(client);
    await expireSoon(user.store, rs.url, 10_000);
    expect(await whoami(client)).toMatchObject({ scheme: "DPoP" });

    const refresh = tokenExchanges(log).filter((e) => e.body.includes("grant_type=refresh_token"));
    const done = refresh.at(-1)!;
    expect(done.status).toBe(200);
    expect(bodyOf(done).token_type).toBe("DPoP");
    const jkt = (await user.store.getTokens(rs.url))!.dpop_jkt;
    expect(await keyOf(done.headers.dpop!)).toBe(jkt);
    expect((decodeJwt(String(bodyOf(done).access_token)).cnf as { jkt?: string }).jkt).toBe(jkt);
    expect(rs.accepted.at(-1)!.token).toBe(bodyOf(done).access_token);
    expect(user.authorizations).toHaveLength(1);
  });

  it("signs with the key given (a private JWK); stored tokens bound to another key are never presented", async () => {
    const rs = await resource();
    const { jwk } = await signingKeyPair();
    const dpop: DPoPOptions = { privateKey: { ...(jwk as { kty: string }), alg: "ES256" } };
    const store = new InMemoryOAuthStore();
    const first = userClient(as, { dpop, store });
    await whoami(await connect(rs.url, first.oauth));
    const { d: _private, ...publicJwk } = jwk;
    const expected = await calculateJwkThumbprint(publicJwk as JWK);
    const token = (await store.getTokens(rs.url))!;
    expect(token.dpop_jkt).toBe(expected);
    expect((decodeJwt(token.access_token).cnf as { jkt?: string }).jkt).toBe(expected);

    // The same key in another client: the stored token serves it, no new authorization.
    const same = userClient(as, { dpop, store });
    await whoami(await connect(rs.url, same.oauth));
    expect(same.authorizations).toHaveLength(0);

    // A client with a key of its own: the token it cannot prove possession of is dropped, never sent.
    const other = userClient(as, { dpop: true, store });
    const seenBefore = rs.seen.length;
    expect(await whoami(await connect(rs.url, other.oauth))).toMatchObject({ scheme: "DPoP" });
    expect(other.authorizations).toHaveLength(1);
    const later = rs.seen.slice(seenBefore);
    expect(later.some((s) => s.authorization?.includes(token.access_token))).toBe(false);
    expect((await store.getTokens(rs.url))!.dpop_jkt).not.toBe(expected);
  });
});

describe("the machine clients with dpop", () => {
  it("client_credentials: proofs signed with a PEM key at the token endpoint and the MCP server", async () => {
    const rs = await resource();
    const { pem, jwk } = await signingKeyPair();
    const log: Exchange[] = [];
    const machine = new ClientCredentialsClient({
      issuer: as.issuer,
      clientId: MACHINE.client_id,
      clientSecret: MACHINE.client_secret,
      dpop: { privateKey: pem, algorithm: "ES256" },
      fetch: recordingFetch(log),
    });
    // The first challenge is answered with one token request, sent again with the nonce the server asked for.
    const challenge = await machine.challenge({
      status: 401,
      headers: { "www-authenticate": `Bearer resource_metadata="${new URL(rs.url).origin}/meta/prm.json"` },
      url: new URL(rs.url),
      method: "POST",
      attempt: 1,
    });
    expect(challenge).toBe(true);
    expect(tokenExchanges(log).map((e) => [e.status, bodyOf(e).error ?? bodyOf(e).token_type])).toEqual([
      [400, "use_dpop_nonce"],
      [200, "DPoP"],
    ]);
    expect(await whoami(await connect(rs.url, machine))).toMatchObject({ scheme: "DPoP", iss: as.issuer });
    const issued = tokenExchanges(log).filter((e) => e.status === 200);
    expect(issued).toHaveLength(1);
    expect(bodyOf(issued[0]!).token_type).toBe("DPoP");
    const { d: _private, ...publicJwk } = jwk;
    const jkt = await calculateJwkThumbprint(publicJwk as JWK);
    expect((decodeJwt(String(bodyOf(issued[0]!).access_token)).cnf as { jkt?: string }).jkt).toBe(jkt);
    expect(rs.proofs.length).toBeGreaterThan(0);
    expect(rs.proofs.every((p) => p.jkt === jkt)).toBe(true);
  });
});

describe("a server that issues Bearer tokens anyway", () => {
  it("gets proofs at its token endpoint, and its Bearer token is sent as one, without proofs", async () => {
    world = await startWorld();
    const oauth: OAuthClient = new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: headlessUser(() => oauth) },
      { dpop: true },
    );
    const client = await connect(world.rs, oauth);
    await client.listTools();
    const token = world.requests.find((r) => r.path === "/token")!;
    expect(decodeJwt(token.headers.dpop!)).toMatchObject({ htm: "POST", htu: `${world.as}/token` });
    const posts = world.requests.filter((r) => r.server === "rs" && r.headers.authorization !== undefined);
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((r) => /^Bearer at-/.test(r.headers.authorization!) && r.headers.dpop === undefined)).toBe(true);
  });

  it("without the dpop option no proof is sent, and a DPoP token is refused", async () => {
    world = await startWorld({
      tokenResponse: (grant) =>
        grant === "authorization_code"
          ? { status: 200, body: { access_token: "at-dpop", token_type: "DPoP", expires_in: 60 } }
          : undefined,
    });
    const oauth: OAuthClient = new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: headlessUser(() => oauth) },
      { awaitAuthorization: true },
    );
    const error = await connect(world.rs, oauth).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ code: "invalid_token_response" });
    expect(world.requests.find((r) => r.path === "/token")!.headers.dpop).toBeUndefined();
  });
});

describe("the dpop option is checked when the client is made", () => {
  const make = (dpop: unknown) => () =>
    new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: () => undefined },
      { dpop: dpop as DPoPOptions },
    );

  it.each<[string, unknown]>([
    ["an unknown algorithm", { algorithm: "HS256" }],
    ["a PEM without algorithm", { privateKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----" }],
    ["a string that is not a PEM", { privateKey: "secret" }],
    ["a public JWK", { privateKey: { kty: "EC", crv: "P-256", x: "x", y: "y" }, algorithm: "ES256" }],
    ["a JWK without any algorithm", { privateKey: { kty: "EC", crv: "P-256", x: "x", y: "y", d: "d" } }],
    ["a bare private CryptoKey", { privateKey: { type: "private", algorithm: { name: "ECDSA" }, usages: ["sign"] } }],
    ["a number", 1],
  ])("refuses %s with invalid_options", (_name, dpop) => {
    expect(make(dpop)).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it.each<[string, unknown]>([
    ["true", true],
    ["false", false],
    ["an algorithm", { algorithm: "ES384" }],
  ])("accepts %s", (_name, dpop) => {
    expect(make(dpop)).not.toThrow();
  });

  it("a WebCrypto key pair of another algorithm than the one named fails the first request with invalid_options", async () => {
    world = await startWorld();
    const pair = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, false, ["sign", "verify"]);
    const oauth: OAuthClient = new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: headlessUser(() => oauth) },
      { dpop: { privateKey: pair, algorithm: "ES256" } },
    );
    const error = await connect(world.rs, oauth).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "invalid_options", message: expect.stringContaining("ES384") });
  });
});
