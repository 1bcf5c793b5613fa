// Every bad input the OAuth client meets becomes an OAuthError naming what was wrong, and no secret appears in any error.
import { describe, expect, it } from "vitest";
import {
  ClientCredentialsClient,
  JwtBearerClient,
  OAuthClient,
  OAuthError,
  requestIdJag,
  type OAuthAuthorizer,
  type OAuthClientProvider,
  type OAuthErrorCode,
} from "../../../runtime/auth/index.js";
import { deadOrigin } from "../../kit/net.js";
import { REDIRECT, connectWith, headlessUser, startWorld, type World, type WorldOptions } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

function userClient(provider: Partial<OAuthClientProvider> = {}): OAuthClient {
  const oauth: OAuthClient = new OAuthClient({
    clientMetadata: { client_name: "test", redirect_uris: [REDIRECT] },
    redirectToAuthorization: headlessUser(() => oauth),
    ...provider,
  });
  return oauth;
}

/** Connects and lists tools; resolves with the error it failed with and everything onerror reported. */
async function failure(authorizer: OAuthAuthorizer): Promise<{ error: unknown; reported: Error[] }> {
  const reported: Error[] = [];
  try {
    const client = await connectWith(world!.rs, authorizer, reported);
    cleanup(() => client.peer.close());
    await client.listTools();
  } catch (error) {
    return { error, reported };
  }
  throw new Error("expected a failure");
}

const omit = (record: Record<string, unknown>, name: string) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => key !== name));

interface Case {
  name: string;
  world: (dead: string) => WorldOptions;
  code: OAuthErrorCode;
  /** Text the message must contain, naming what was wrong. */
  names: RegExp;
  /** The client must have stopped before sending the user anywhere. */
  beforeAuthorizing?: boolean;
}

const CASES: Case[] = [
  {
    name: "authorization server metadata whose issuer is not the issuer asked for",
    world: () => ({ metadata: (d) => ({ ...d, issuer: "http://127.0.0.1:9/elsewhere" }) }),
    code: "issuer_mismatch",
    names: /issuer/,
    beforeAuthorizing: true,
  },
  {
    name: "protected resource metadata for a resource on another origin",
    world: () => ({ prmResource: () => "https://evil.example/mcp" }),
    code: "resource_mismatch",
    names: /evil\.example.*not for the MCP server/,
    beforeAuthorizing: true,
  },
  {
    name: "protected resource metadata for another path on the same origin",
    world: () => ({ prmResource: (rs) => rs.replace(/\/mcp$/, "/other") }),
    code: "resource_mismatch",
    names: /\/other/,
    beforeAuthorizing: true,
  },
  {
    name: "a WWW-Authenticate header that does not parse",
    world: () => ({ wwwAuthenticate: () => 'Bearer resource_metadata="unterminated' }),
    code: "invalid_challenge",
    names: /WWW-Authenticate header is malformed/,
    beforeAuthorizing: true,
  },
  {
    name: "a resource_metadata that is not a URL",
    world: () => ({ wwwAuthenticate: () => 'Bearer resource_metadata="not a url"' }),
    code: "invalid_challenge",
    names: /resource_metadata .* not an absolute URL/,
    beforeAuthorizing: true,
  },
  {
    name: "a token response without access_token",
    world: () => ({
      tokenResponse: (grant) =>
        grant === "authorization_code" ? { status: 200, body: { token_type: "Bearer", expires_in: 60 } } : undefined,
    }),
    code: "invalid_token_response",
    names: /token endpoint.*access_token/,
  },
  {
    name: "a token that is not a Bearer token",
    world: () => ({
      tokenResponse: (grant) =>
        grant === "authorization_code"
          ? { status: 200, body: { access_token: "mac-token-value-1234", token_type: "mac" } }
          : undefined,
    }),
    code: "invalid_token_response",
    names: /token_type/,
  },
  {
    name: "a token endpoint refusing the code",
    world: () => ({ tokenResponse: () => ({ status: 400, body: { error: "invalid_grant" } }) }),
    code: "token_request_failed",
    names: /token endpoint refused the request with HTTP 400: invalid_grant/,
  },
  {
    name: "metadata without code_challenge_methods_supported",
    world: () => ({ metadata: (d) => omit(d, "code_challenge_methods_supported") }),
    code: "pkce_not_supported",
    names: /S256/,
    beforeAuthorizing: true,
  },
  {
    name: "metadata offering only plain PKCE",
    world: () => ({ metadata: (d) => ({ ...d, code_challenge_methods_supported: ["plain"] }) }),
    code: "pkce_not_supported",
    names: /S256/,
    beforeAuthorizing: true,
  },
  {
    name: "no way to register (no endpoint, no metadata documents, nothing pre-registered)",
    world: () => ({ metadata: (d) => omit(d, "registration_endpoint") }),
    code: "registration_unavailable",
    names: /dynamic client registration/,
    beforeAuthorizing: true,
  },
  {
    name: "a registration endpoint that refuses",
    world: () => ({ metadata: (d, as) => ({ ...d, registration_endpoint: `${new URL(as).origin}/nowhere` }) }),
    code: "registration_failed",
    names: /registration endpoint refused the request with HTTP 404/,
    beforeAuthorizing: true,
  },
  {
    name: "an authorization server on plain http away from loopback",
    world: () => ({ prmExtra: () => ({ authorization_servers: ["http://auth.example.com"] }) }),
    code: "insecure_url",
    names: /must use https.*auth\.example\.com/,
    beforeAuthorizing: true,
  },
  {
    name: "an endpoint on plain http away from loopback",
    world: () => ({ metadata: (d) => ({ ...d, token_endpoint: "http://auth.example.com/token" }) }),
    code: "insecure_url",
    names: /token_endpoint must use https/,
    beforeAuthorizing: true,
  },
  {
    name: "protected resource metadata naming no authorization server",
    world: () => ({ prmExtra: () => ({ authorization_servers: [] }) }),
    code: "invalid_resource_metadata",
    names: /authorization_servers/,
    beforeAuthorizing: true,
  },
  {
    name: "no authorization server metadata at any well-known URI",
    world: () => ({ metadataAt: "none" }),
    code: "authorization_server_metadata_not_found",
    names: /oauth-authorization-server.*openid-configuration/,
    beforeAuthorizing: true,
  },
  {
    name: "an authorization server that cannot be reached",
    world: (dead) => ({ prmExtra: () => ({ authorization_servers: [dead] }) }),
    code: "http_error",
    names: /could not be reached/,
    beforeAuthorizing: true,
  },
  {
    name: "the user (or the server) denying the authorization",
    world: () => ({ authorizeError: "access_denied" }),
    code: "authorization_denied",
    names: /access_denied/,
  },
];

describe("bad input from servers: a typed error naming what was wrong", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    world = await startWorld(c.world(await deadOrigin()));
    const { error } = await failure(userClient());
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).code).toBe(c.code);
    expect((error as OAuthError).message).toMatch(c.names);
    if (c.beforeAuthorizing) expect(world.authorizations).toHaveLength(0);
  });
});

describe("bad configuration: refused when the client is made", () => {
  it.each([
    "http://example.com/callback",
    "ftp://127.0.0.1/callback",
    "javascript:alert(1)",
    "https://app.example/callback#fragment",
    "not a url",
  ])("redirect URI %s: invalid_redirect_uri", (uri) => {
    expect(
      () => new OAuthClient({ clientMetadata: { redirect_uris: [uri] }, redirectToAuthorization: () => undefined }),
    ).toThrow(expect.objectContaining({ code: "invalid_redirect_uri" }));
  });

  it.each([
    "https://app.example/callback",
    "http://localhost:3000/callback",
    "http://127.0.0.1/callback",
    "http://[::1]:8080/callback",
  ])("redirect URI %s is accepted", (uri) => {
    expect(
      () => new OAuthClient({ clientMetadata: { redirect_uris: [uri] }, redirectToAuthorization: () => undefined }),
    ).not.toThrow();
  });

  it("no redirect URI at all: invalid_redirect_uri", () => {
    expect(
      () => new OAuthClient({ clientMetadata: { redirect_uris: [] }, redirectToAuthorization: () => undefined }),
    ).toThrow(expect.objectContaining({ code: "invalid_redirect_uri" }));
  });

  it.each([
    "http://client.example/metadata.json",
    "https://client.example",
    "https://client.example/",
    "https://client.example/m.json#x",
  ])("client ID metadata document URL %s: invalid_client_metadata_url", (url) => {
    expect(
      () =>
        new OAuthClient({
          clientMetadata: { redirect_uris: [REDIRECT] },
          clientMetadataUrl: url,
          redirectToAuthorization: () => undefined,
        }),
    ).toThrow(expect.objectContaining({ code: "invalid_client_metadata_url" }));
  });

  it.each([
    ["no credentials", { issuer: "https://as.example", clientId: "machine" }],
    ["an empty client id", { issuer: "https://as.example", clientId: "", clientSecret: "secret-value-1234" }],
  ])("a machine client with %s: invalid_options", (_name, options) => {
    expect(() => new ClientCredentialsClient(options)).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it("a limit out of range is a RangeError naming the option", () => {
    expect(
      () =>
        new ClientCredentialsClient({
          issuer: "https://as.example",
          clientId: "m",
          clientSecret: "secret-value-1234",
          maxAuthorizationAttempts: -1,
        }),
    ).toThrow(/maxAuthorizationAttempts/);
  });

  it.each([
    [
      "not PEM at all",
      { key: "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----", algorithm: "ES256" },
      /PKCS#8/,
    ],
    [
      "PEM without an algorithm",
      { key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----" },
      /algorithm is required/,
    ],
    [
      "an unknown algorithm",
      { key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", algorithm: "XX256" },
      /unsupported signing algorithm/,
    ],
    [
      "key material that does not import",
      { key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", algorithm: "ES256" },
      /could not be imported as a ES256 private key/,
    ],
  ])("a private key that is %s: invalid_options at the first token request", async (_name, privateKey, message) => {
    world = await startWorld();
    const { error } = await failure(new ClientCredentialsClient({ issuer: world.as, clientId: "signer", privateKey }));
    expect(error).toMatchObject({ code: "invalid_options" });
    expect((error as Error).message).toMatch(message);
  });
});

/** Everything an error shows: message, stack, own fields and its cause chain. */
function textOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof Error) {
      parts.push(current.message, current.stack ?? "", JSON.stringify({ ...current }));
      current = (current as { cause?: unknown }).cause;
    } else {
      parts.push(typeof current === "string" ? current : JSON.stringify(current));
      current = undefined;
    }
  }
  return parts.join("\n");
}

describe("no secret in any error", () => {
  const echo = (body: Record<string, string>) => Object.values(body).join(" ");
  const paths: [string, WorldOptions, (w: World) => OAuthAuthorizer][] = [
    [
      "a token endpoint echoing the code, verifier and client secret in error_description",
      {
        metadata: (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_post"] }),
        tokenResponse: (grant, body) =>
          grant === "authorization_code"
            ? { status: 400, body: { error: "invalid_grant", error_description: `refused ${echo(body)}` } }
            : undefined,
      },
      () => userClient(),
    ],
    [
      "a token response with a refresh token but no access token",
      {
        tokenResponse: (grant) =>
          grant === "authorization_code"
            ? { status: 200, body: { token_type: "Bearer", refresh_token: "rt-MARK-leaked-refresh-token-value" } }
            : undefined,
      },
      () => userClient(),
    ],
    [
      "a refused authorization whose error_description echoes the client secret",
      {
        authorizeError: "access_denied",
        metadata: (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_basic"] }),
      },
      () => userClient(),
    ],
    [
      "client_credentials refused with the secret echoed",
      {
        clients: { machine: "MARK-machine-secret-value" },
        tokenResponse: (grant, body) =>
          grant === "client_credentials"
            ? { status: 401, body: { error: "invalid_client", error_description: `bad ${echo(body)}` } }
            : undefined,
      },
      (w) =>
        new ClientCredentialsClient({
          issuer: w.as,
          clientId: "machine",
          clientSecret: "MARK-machine-secret-value",
          tokenEndpointAuthMethod: "client_secret_post",
        }),
    ],
    [
      "a JWT bearer grant refused with the assertion echoed",
      {
        clients: { xaa: "MARK-xaa-secret-value" },
        tokenResponse: (grant, body) =>
          grant.endsWith("jwt-bearer")
            ? { status: 400, body: { error: "invalid_grant", error_description: `bad ${echo(body)}` } }
            : undefined,
      },
      (w) =>
        new JwtBearerClient({
          issuer: w.as,
          clientId: "xaa",
          clientSecret: "MARK-xaa-secret-value",
          assertion: () => "eyJMARK.assertion-value.signature",
        }),
    ],
    [
      "a token exchange refused with the ID token echoed",
      {
        clients: { xaa: "MARK-xaa-secret-value", idp: undefined },
        tokenResponse: (grant, body) =>
          grant.endsWith("token-exchange")
            ? { status: 400, body: { error: "invalid_grant", error_description: `bad ${echo(body)}` } }
            : undefined,
      },
      (w) =>
        new JwtBearerClient({
          issuer: w.as,
          clientId: "xaa",
          clientSecret: "MARK-xaa-secret-value",
          assertion: ({ issuer, resource }) =>
            requestIdJag({
              tokenEndpoint: `${w.as}/token`,
              clientId: "idp",
              idToken: "eyJMARK.id-token-value.sig",
              audience: issuer,
              resource,
            }),
        }),
    ],
  ];

  it.each(paths)("%s", async (_name, options, make) => {
    world = await startWorld({ marker: "MARK", ...options });
    const { error, reported } = await failure(make(world));
    const secrets = [
      ...world.secrets(),
      "rt-MARK-leaked-refresh-token-value",
      "eyJMARK.assertion-value.signature",
      "eyJMARK.id-token-value.sig",
    ].filter((s) => s.length >= 8);
    // The world really saw secrets on this path: the sweep would catch a leak.
    expect(world.secrets().length).toBeGreaterThan(0);
    const texts = [textOf(error), ...reported.map(textOf)].join("\n");
    expect(texts.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(texts.includes(secret), `an error shows ${secret}`).toBe(false);
      expect(texts.includes(encodeURIComponent(secret)), `an error shows ${secret}, encoded`).toBe(false);
    }
  });
});
