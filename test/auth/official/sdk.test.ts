// The official SDK on both sides of MCP authorization against the test authorization server: its protected server fixture, and its client's OAuth flow.
import * as oauth from "oauth4webapi";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startAuthorizationServer, untilExpired, type AuthorizationServer } from "../oidc/helpers.js";
import { connectSdkClient, type SdkClientSession } from "./sdk-client.js";
import { startSdkProtectedServer, type SdkProtectedServer } from "./sdk-server.js";

const insecure = { [oauth.allowInsecureRequests]: true } as const;

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

async function post(url: string, body: unknown, token?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** A client_credentials token from the authorization server, for raw requests. */
async function machineToken(issuer: string, resource: string, scope: string): Promise<string> {
  const as = await oauth.processDiscoveryResponse(
    new URL(issuer),
    await oauth.discoveryRequest(new URL(issuer), insecure),
  );
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      {
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: "client_secret_basic",
      },
      insecure,
    ),
  );
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    registered,
    oauth.ClientSecretBasic(String(registered.client_secret)),
    { scope, resource },
    insecure,
  );
  return (await oauth.processClientCredentialsResponse(as, registered, response)).access_token;
}

const sessions: SdkClientSession[] = [];
const servers: SdkProtectedServer[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
async function sdkServer(issuer: string): Promise<SdkProtectedServer> {
  const server = await startSdkProtectedServer(issuer);
  servers.push(server);
  return server;
}
async function sdkClient(...args: Parameters<typeof connectSdkClient>): Promise<SdkClientSession> {
  const session = await connectSdkClient(...args);
  sessions.push(session);
  return session;
}

describe("official SDK protected server (requireBearerAuth, mcpAuthMetadataRouter) trusting the authorization server", () => {
  let as: AuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(() => as?.stop());

  it("answers a request without a token 401 with the SDK's challenge, and serves its protected resource metadata", async () => {
    const server = await sdkServer(as.issuer);
    const response = await post(server.url, initialize);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="Missing Authorization header", scope="mcp:tools", resource_metadata="${server.resourceMetadataUrl}"`,
    );
    expect(server.resourceMetadataUrl).toBe(server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"));
    expect(await (await fetch(server.resourceMetadataUrl)).json()).toEqual({
      resource: server.url,
      authorization_servers: [as.issuer],
      scopes_supported: ["mcp:tools", "mcp:admin"],
      resource_name: "SDK fixture",
    });
  });

  it.each([
    {
      case: "another resource's token",
      resource: "http://127.0.0.1:1/elsewhere",
      token: undefined,
      description: "token aud claim invalid",
    },
    { case: "a token that is not a JWT", resource: undefined, token: "opaque-value", description: "invalid token" },
  ])("refuses $case with 401 invalid_token", async ({ resource, token, description }) => {
    const server = await sdkServer(as.issuer);
    const bearer = token ?? (await machineToken(as.issuer, resource!, "mcp:tools"));
    const response = await post(server.url, initialize, bearer);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="${description}", scope="mcp:tools", resource_metadata="${server.resourceMetadataUrl}"`,
    );
  });

  it("serves a token for its resource, and answers a tool needing another scope 403 insufficient_scope", async () => {
    const server = await sdkServer(as.issuer);
    const token = await machineToken(as.issuer, server.url, "mcp:tools");
    const init = await post(server.url, initialize, token);
    expect(init.status).toBe(200);
    const session = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const call = (name: string) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: {} } }),
      });
    const allowed = await call("whoami");
    expect(allowed.status).toBe(200);
    await allowed.text();
    const refused = await call("admin_reset");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="Insufficient scope", scope="mcp:tools mcp:admin", resource_metadata="${server.resourceMetadataUrl}"`,
    );
    expect(server.calls.map((c) => c.tool)).toEqual(["whoami"]);
  });
});

describe("official SDK client (its OAuthClientProvider flow) -> official SDK protected server", () => {
  let as: AuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(() => as?.stop());

  it.each(["none", "client_secret_basic", "client_secret_post"])(
    "%s client: discovers, registers, sends the user to sign in and consent, exchanges the code and calls a tool",
    async (method) => {
      const server = await sdkServer(as.issuer);
      const session = await sdkClient(server.url, as, {
        approval: { login: "carol" },
        clientMetadata: { token_endpoint_auth_method: method },
      });
      expect(JSON.parse(textOf(await session.callTool("whoami")))).toEqual({ subject: "carol", scopes: ["mcp:tools"] });

      const [authorization] = session.provider.authorizations;
      expect(session.provider.authorizations).toHaveLength(1);
      expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
        scope: "mcp:tools",
        resource: server.url,
        code_challenge_method: "S256",
        response_type: "code",
      });
      const clientId = session.provider.client!.client_id;
      const events = (await as.events()).filter((e) => e.clientId === clientId);
      expect(events.map((e) => e.event)).toEqual(["registration", "authorization", "grant"]);
      expect(events[0]).toMatchObject({
        tokenEndpointAuthMethod: method,
        grantTypes: ["authorization_code", "refresh_token"],
      });
      expect(events[2]).toMatchObject({
        grantType: "authorization_code",
        resource: server.url,
        clientAuthMethod: method,
      });
    },
  );

  it("a user who denies: the flow ends with access_denied and the server serves nothing", async () => {
    const server = await sdkServer(as.issuer);
    await expect(connectSdkClient(server.url, as, { approval: { deny: true } })).rejects.toThrow(
      "authorization failed: access_denied",
    );
    expect(server.calls).toEqual([]);
  });
});

describe("official SDK client: refresh after expiry", () => {
  let as: AuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer({ accessTokenTtl: 2 });
  });
  afterAll(() => as?.stop());

  it("refreshes with the resource on the 401 for an expired token, without sending the user again", async () => {
    const server = await sdkServer(as.issuer);
    const session = await sdkClient(server.url, as);
    await session.callTool("whoami");
    const first = session.provider.stored!;
    expect(first.refresh_token).toBeTypeOf("string");
    await untilExpired(first.access_token);
    const refused = await fetch(server.url, {
      headers: { authorization: `Bearer ${first.access_token}`, accept: "text/event-stream" },
    });
    expect([refused.status, refused.headers.get("www-authenticate")]).toEqual([
      401,
      expect.stringContaining('error_description="token expired"'),
    ]);

    expect(JSON.parse(textOf(await session.callTool("whoami")))).toEqual({ subject: "alice", scopes: ["mcp:tools"] });
    expect(session.provider.stored!.access_token).not.toBe(first.access_token);
    expect(session.provider.authorizations).toHaveLength(1);
    const clientId = session.provider.client!.client_id;
    const grants = (await as.events()).filter((e) => e.event === "grant" && e.clientId === clientId);
    expect(grants.map((e) => [e.grantType, e.resource])).toEqual([
      ["authorization_code", server.url],
      ["refresh_token", server.url],
    ]);
  });
});

describe("official SDK client: step-up on 403 insufficient_scope", () => {
  const started: AuthorizationServer[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
  });
  const authorizationServer = async (options: Parameters<typeof startAuthorizationServer>[0]) => {
    const as = await startAuthorizationServer(options);
    started.push(as);
    return as;
  };
  const scopesAsked = (session: SdkClientSession) =>
    session.provider.authorizations.map((url) => url.searchParams.get("scope"));

  it("re-authorizes with the challenged scopes and retries the call, when it holds no refresh token and its registered scope does not bind it", async () => {
    const as = await authorizationServer({ refreshTokens: "offline_access", ignoreRegisteredScope: true });
    const server = await sdkServer(as.issuer);
    const session = await sdkClient(server.url, as, { approval: { login: "dave" } });
    await session.callTool("whoami");
    expect(textOf(await session.callTool("admin_reset"))).toBe("reset by dave");
    expect(scopesAsked(session)).toEqual(["mcp:tools", "mcp:tools mcp:admin"]);
    expect(as.consents.map((c) => c.granted)).toEqual([["mcp:tools"], ["mcp:tools", "mcp:admin"]]);
    expect(server.calls.map((c) => [c.tool, c.scopes.join(" ")])).toEqual([
      ["whoami", "mcp:tools"],
      ["admin_reset", "mcp:tools mcp:admin"],
    ]);
  });

  // Two limits of the SDK's client (1.x) against a standard authorization server, kept here so the end-to-end
  // tests that pair it with other servers know what to configure.
  it("SDK limit: holding a refresh token, it refreshes instead of re-authorizing, gets the same scope and gives up", async () => {
    const as = await authorizationServer({ ignoreRegisteredScope: true });
    const server = await sdkServer(as.issuer);
    const session = await sdkClient(server.url, as);
    await expect(session.callTool("admin_reset")).rejects.toThrow("Server returned 403 after trying upscoping");
    expect(scopesAsked(session)).toEqual(["mcp:tools"]);
    const grants = (await as.events()).filter((e) => e.event === "grant").map((e) => e.grantType);
    expect(grants).toEqual(["authorization_code", "refresh_token"]);
  });

  it("SDK limit: it registers with the scope of the first challenge, so a server that enforces it refuses the step-up (invalid_scope)", async () => {
    const as = await authorizationServer({ refreshTokens: "offline_access" });
    const server = await sdkServer(as.issuer);
    const session = await sdkClient(server.url, as);
    await expect(session.callTool("admin_reset")).rejects.toThrow("authorization failed: invalid_scope");
    const events = await as.events();
    expect(events.find((e) => e.event === "registration")?.scope).toBe("mcp:tools");
    expect(events.at(-1)).toMatchObject({ event: "authorization.error", error: "invalid_scope" });
  });
});
