// End to end with opaque access tokens: oidc-provider issues them, our protected server checks them by introspection (RFC 7662), our client obtains them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { introspectionVerifier, type TokenVerifier } from "../../../runtime/auth/index.js";
import { HttpStatusError } from "../../../runtime/transports/http/client/transport.js";
import { deadOrigin } from "../../kit/net.js";
import { startAuthorizationServer, type AuthorizationServer } from "../oidc/helpers.js";
import { Sweep, connectClient, protectedServer, textOf, userClient } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

const RESOURCE_SERVER = {
  client_id: "e2e-resource-server",
  client_secret: "e2e-resource-server-secret",
  grant_types: [],
  redirect_uris: [],
  response_types: [],
};

const sweep = new Sweep();
let as: AuthorizationServer;
let introspectionEndpoint: string;
let restoreConsole: () => void;
beforeAll(async () => {
  restoreConsole = sweep.captureConsole();
  as = await startAuthorizationServer({ accessTokenFormat: "opaque", clients: [RESOURCE_SERVER] });
  const metadata = (await (await fetch(`${as.issuer}/.well-known/oauth-authorization-server`)).json()) as {
    introspection_endpoint?: unknown;
  };
  if (typeof metadata.introspection_endpoint !== "string")
    throw new Error("the provider advertises no introspection endpoint");
  introspectionEndpoint = metadata.introspection_endpoint;
});
afterAll(async () => {
  restoreConsole?.();
  await as?.stop();
});

/** How our resource server authenticates to the provider's introspection endpoint. */
const resourceServerCredentials = { clientId: RESOURCE_SERVER.client_id, clientSecret: RESOURCE_SERVER.client_secret };
/** Introspection at the provider, for tokens it issued. */
const providerIntrospection = () =>
  introspectionVerifier({ ...resourceServerCredentials, endpoint: introspectionEndpoint, issuer: as.issuer });

const cleanup = closeAfterEach();

describe("our client -> our protected server with introspectionVerifier, oidc-provider issuing opaque tokens", () => {
  it("authorizes, and a tool call is served with the introspected subject and scope; a step-up works the same way", async () => {
    const verifier = providerIntrospection();
    const rs = await protectedServer(as.issuer, verifier, sweep);
    cleanup(() => rs.stop());
    const user = userClient(as, sweep, [{ login: "mallory" }]);
    const client = await connectClient(rs.url, user.oauth, sweep);
    cleanup(() => client.peer.close());

    expect(JSON.parse(textOf(await client.callTool({ name: "whoami", arguments: {} })))).toEqual({
      principal: "sub:mallory",
      scopes: ["mcp:tools"],
      sub: "mallory",
    });
    const token = (await user.store.getTokens(rs.url))!.access_token;
    expect(token.split(".")).toHaveLength(1);
    expect(textOf(await client.callTool({ name: "admin", arguments: {} }))).toBe("admin done");
    expect(user.authorizations).toHaveLength(2);
    expect(rs.errors).toEqual([]);
  });

  it("a token the provider does not know is refused 401 invalid_token, naming our metadata", async () => {
    const verifier = providerIntrospection();
    const rs = await protectedServer(as.issuer, verifier, sweep);
    cleanup(() => rs.stop());
    const response = await fetch(rs.url, {
      method: "POST",
      headers: {
        authorization: "Bearer not-issued-by-anyone",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(
      /^Bearer .*error="invalid_token".*resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    await response.body?.cancel();
  });

  it("while introspection is unreachable (nothing listening) calls fail 503 and the server reports it; then the session goes on", async () => {
    const live = providerIntrospection();
    const dead = introspectionVerifier({ ...resourceServerCredentials, endpoint: `${await deadOrigin()}/introspect` });
    let current: TokenVerifier = live;
    const rs = await protectedServer(as.issuer, { verify: (token, context) => current.verify(token, context) }, sweep);
    cleanup(() => rs.stop());
    const user = userClient(as, sweep, [{ login: "niaj" }]);
    const client = await connectClient(rs.url, user.oauth, sweep);
    cleanup(() => client.peer.close());
    await client.callTool({ name: "whoami", arguments: {} });

    current = dead;
    const error = await sweep.rejection(client.callTool({ name: "whoami", arguments: {} }));
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 503 });
    expect(rs.errors.map((e) => e.message)).toEqual([expect.stringContaining("Cannot verify access tokens")]);

    current = live;
    expect(JSON.parse(textOf(await client.callTool({ name: "whoami", arguments: {} })))).toMatchObject({
      principal: "sub:niaj",
    });
    expect(user.authorizations).toHaveLength(1);
  });

  it("sweep: no access or refresh token appears in any error, onerror output or console line of ours", () => {
    const leaks = sweep.leaks();
    expect(sweep.tokens.size).toBeGreaterThanOrEqual(5);
    expect(sweep.texts.join("\n")).toContain("Cannot verify access tokens");
    expect(leaks).toEqual([]);
  });
});
