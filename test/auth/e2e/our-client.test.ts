// End to end: our OAuth client and our protected MCP server (jwtVerifier) against oidc-provider on 127.0.0.1, the user played by the test.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ClientCredentialsClient, OAuthError, jwtVerifier } from "../../../runtime/auth/index.js";
import { startAuthorizationServer, untilExpired, type AuthorizationServer } from "../oidc/helpers.js";
import type { ProtectedServer } from "../server/helpers.js";
import { RecordingStore, Sweep, connectClient, protectedServer, textOf, userClient } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

const MACHINE = {
  client_id: "e2e-machine",
  client_secret: "e2e-machine-secret-value",
  grant_types: ["client_credentials"],
  redirect_uris: [],
  response_types: [],
};
// Tokens live 3 s: long enough for a flow, short enough to wait out.
const TTL = 3;

const sweep = new Sweep();
let as: AuthorizationServer;
let restoreConsole: () => void;
beforeAll(async () => {
  restoreConsole = sweep.captureConsole();
  as = await startAuthorizationServer({ accessTokenTtl: TTL, clients: [MACHINE] });
});
afterAll(async () => {
  restoreConsole?.();
  await as?.stop();
});

const cleanup = closeAfterEach();

/** Our protected server trusting the provider's JWTs: no clock tolerance, so an expired token is refused at once. */
async function server(): Promise<ProtectedServer> {
  const s = await protectedServer(as.issuer, jwtVerifier({ issuer: as.issuer, clockToleranceSeconds: 0 }), sweep);
  cleanup(() => s.stop());
  return s;
}

async function connect(url: string, oauth: Parameters<typeof connectClient>[1]) {
  const client = await connectClient(url, oauth, sweep);
  cleanup(() => client.peer.close());
  return client;
}

type Who = { principal: string | null; scopes: string[] | null; sub: string | null };
const whoami = async (client: Awaited<ReturnType<typeof connect>>): Promise<Who> =>
  JSON.parse(textOf(await client.callTool({ name: "whoami", arguments: {} }))) as Who;

/** The provider's events for one client, as [event, grant type] pairs. */
async function eventsOf(clientId: string) {
  return (await as.events()).filter((e) => e.clientId === clientId);
}

async function clientIdOf(store: { getClient(issuer: string): unknown }): Promise<string> {
  const info = (await store.getClient(as.issuer)) as { client_id?: string } | undefined;
  if (info?.client_id === undefined) throw new Error("the client has not registered");
  return info.client_id;
}

describe("our client -> our protected server, oidc-provider issuing JWT access tokens", () => {
  it("discovers from the 401, registers, sends the user with PKCE and resource, exchanges the code; the tool sees the login as principal", async () => {
    const rs = await server();
    const user = userClient(as, sweep, [{ login: "erin" }]);
    const client = await connect(rs.url, user.oauth);
    expect(await whoami(client)).toEqual({ principal: "sub:erin", scopes: ["mcp:tools"], sub: "erin" });

    // One trip to the user, asking for the challenge's scope, for this resource, with S256.
    expect(user.authorizations).toHaveLength(1);
    expect(Object.fromEntries(user.authorizations[0]!.searchParams)).toMatchObject({
      response_type: "code",
      scope: "mcp:tools offline_access",
      resource: rs.url,
      code_challenge_method: "S256",
    });
    expect(as.consents.at(-1)).toMatchObject({ login: "erin" });
    const clientId = await clientIdOf(user.store);
    const events = await eventsOf(clientId);
    expect(events.map((e) => e.event)).toEqual(["registration", "authorization", "grant"]);
    expect(events[0]).toMatchObject({
      tokenEndpointAuthMethod: "none",
      grantTypes: ["authorization_code", "refresh_token"],
    });
    expect(events[2]).toMatchObject({ grantType: "authorization_code", resource: rs.url, clientAuthMethod: "none" });
    const tokens = await user.store.getTokens(rs.url);
    expect(tokens).toMatchObject({ issuer: as.issuer, resource: rs.url, refresh_token: expect.any(String) });
  });

  it("refreshes once the access token has expired, without sending the user again; the expired token never goes out", async () => {
    const rs = await server();
    const user = userClient(as, sweep, [{ login: "frank" }]);
    const client = await connect(rs.url, user.oauth);
    await whoami(client);
    const first = (await user.store.getTokens(rs.url))!.access_token;
    await untilExpired(first);
    const before = sweep.presented.length;

    expect(await whoami(client)).toMatchObject({ principal: "sub:frank" });
    expect((await user.store.getTokens(rs.url))!.access_token).not.toBe(first);
    expect(user.authorizations).toHaveLength(1);
    const grants = (await eventsOf(await clientIdOf(user.store))).filter((e) => e.event === "grant");
    expect(grants.map((e) => [e.grantType, e.resource])).toEqual([
      ["authorization_code", rs.url],
      ["refresh_token", rs.url],
    ]);
    // The client knows the expiry from expires_in, so it renews before sending rather than after a 401.
    expect(sweep.presented.slice(before)).not.toContain(first);
  });

  it("steps up on 403 insufficient_scope: one more approval with the union of scopes, then the admin tool runs", async () => {
    const rs = await server();
    const user = userClient(as, sweep, [{ login: "grace" }]);
    const client = await connect(rs.url, user.oauth);
    expect(await whoami(client)).toMatchObject({ scopes: ["mcp:tools"] });

    expect(textOf(await client.callTool({ name: "admin", arguments: {} }))).toBe("admin done");
    expect(user.authorizations.map((u) => u.searchParams.get("scope"))).toEqual([
      "mcp:tools offline_access",
      "mcp:tools mcp:admin offline_access",
    ]);
    // oidc-provider offers offline_access only to OpenID requests; the refresh token comes regardless.
    expect(as.consents.slice(-2).map((c) => [c.login, c.granted.sort()])).toEqual([
      ["grace", ["mcp:tools"]],
      ["grace", ["mcp:admin", "mcp:tools"]],
    ]);
    expect(await whoami(client)).toMatchObject({ principal: "sub:grace", scopes: ["mcp:tools", "mcp:admin"] });
  });

  it("a user who denies the step-up: the call fails with authorization_denied, the session goes on for other calls", async () => {
    const rs = await server();
    const user = userClient(as, sweep, [{ login: "heidi" }, { login: "heidi", deny: true }]);
    const client = await connect(rs.url, user.oauth);
    await whoami(client);

    const error = await sweep.rejection(client.callTool({ name: "admin", arguments: {} }));
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ code: "authorization_denied", oauthError: "access_denied" });
    expect((error as Error).message).toMatch(/access_denied/);
    expect(user.authorizations).toHaveLength(2);

    expect(await whoami(client)).toMatchObject({ principal: "sub:heidi", scopes: ["mcp:tools"] });
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["admin", "whoami"]);
  });

  it("a machine client (client_credentials, pre-registered, client_secret_basic): the principal is its subject, which the provider sets to the client id", async () => {
    const rs = await server();
    const machine = new ClientCredentialsClient({
      issuer: as.issuer,
      clientId: MACHINE.client_id,
      clientSecret: MACHINE.client_secret,
      store: new RecordingStore(sweep),
    });
    const client = await connect(rs.url, machine);
    expect(await whoami(client)).toEqual({
      principal: `sub:${MACHINE.client_id}`,
      scopes: ["mcp:tools"],
      sub: MACHINE.client_id,
    });
    const grants = (await eventsOf(MACHINE.client_id)).filter((e) => e.event === "grant");
    expect(grants).toEqual([
      expect.objectContaining({
        grantType: "client_credentials",
        resource: rs.url,
        scope: "mcp:tools",
        clientAuthMethod: "client_secret_basic",
      }),
    ]);
  });

  it("sweep: no access or refresh token of these flows appears in any error, onerror output or console line", () => {
    const leaks = sweep.leaks();
    expect(sweep.tokens.size).toBeGreaterThanOrEqual(8);
    expect(sweep.texts.length).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
    // The sweep itself finds a token in an error's cause.
    const probe = new Sweep();
    probe.tokens.add("planted-token-value");
    probe.error(new Error("outer", { cause: new Error("inner planted-token-value") }));
    expect(probe.leaks()).toHaveLength(1);
  });
});
