// A small authorization server and protected MCP server on 127.0.0.1 for the OAuth client's tests, with knobs for every misbehaviour.
import { createHash, randomBytes, webcrypto } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenHttp, type ListeningHttpServer } from "../../../runtime/transports/http/server/listen.js";
import { StreamableHttpClientTransport } from "../../../runtime/transports/http/client/transport.js";
import { Client } from "../../../generated/sdk.js";
import type { OAuthAuthorizer, OAuthClient, OAuthStore } from "../../../runtime/auth/index.js";

export interface Recorded {
  server: "as" | "rs";
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The parsed body: form fields, JSON, or undefined. */
  body: Record<string, unknown> | undefined;
}

export interface Registered {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  metadata: Record<string, unknown>;
}

interface Issued {
  scope: string;
  resource: string | undefined;
  client: string;
  expiresAt: number;
}

export interface WorldOptions {
  /** Where protected resource metadata is: advertised in WWW-Authenticate, only at the path or root well-known URI, or nowhere (2025-03-26). */
  prm?: "header" | "path" | "root" | "none";
  /** The `resource` the metadata names; default the MCP endpoint (the origin for "root"). */
  prmResource?: (rs: string) => string;
  prmScopes?: string[];
  /** More members of the protected resource metadata (or a replacement of authorization_servers). */
  prmExtra?: (as: string) => Record<string, unknown>;
  /** The scope the 401's challenge names. */
  challengeScope?: string;
  /** The whole WWW-Authenticate header of a 401, replacing the usual one. */
  wwwAuthenticate?: (rs: string) => string;
  /** The issuer's path ("/tenant1"); default none. */
  issuerPath?: string;
  /** Which well-known URI serves the AS metadata: RFC 8414 insertion (default), OIDC insertion, OIDC appended, or none. */
  metadataAt?: "oauth" | "oidc-inserted" | "oidc-appended" | "none";
  /** Changes the AS metadata served. */
  metadata?: (defaults: Record<string, unknown>, as: string) => Record<string, unknown>;
  /** Replaces the token endpoint's answer for a grant; return undefined to answer normally. */
  tokenResponse?: (grant: string, body: Record<string, string>) => { status: number; body: unknown } | undefined;
  /** The expires_in of access tokens, s (default 3600). */
  tokenTtl?: number;
  /** Whether the RS treats an access token as expired (e.g. revoked) regardless of its TTL. */
  revoked?: (token: string) => boolean;
  /** Scopes each JSON-RPC method needs beyond a valid token (403 insufficient_scope otherwise). */
  required?: Record<string, string[]>;
  /** Answer the authorization request with this error instead of a code. */
  authorizeError?: string;
  /** Refuse refresh tokens with invalid_grant. */
  refuseRefresh?: boolean;
  /** Pre-registered clients (client_id -> secret, undefined for a public one). */
  clients?: Record<string, string | undefined>;
  /** A private key JWT client's public key (verifies client_assertion). */
  assertionKey?: webcrypto.CryptoKey;
  /** Serve the authorization server on the MCP server's origin (a 2025-03-26 deployment). */
  sameOrigin?: boolean;
  /** The scope granted for a requested one (default: as requested). */
  grantedScope?: (requested: string) => string;
  /** Put into every token, code and secret the server makes, so a test can look for them anywhere. */
  marker?: string;
  /** Answers a request in place of the world (it is still recorded); returns true when it did. */
  intercept?: (server: "as" | "rs", req: IncomingMessage, res: ServerResponse, url: URL) => boolean;
}

export interface World {
  /** The MCP endpoint. */
  rs: string;
  /** The authorization server's issuer. */
  as: string;
  requests: Recorded[];
  registered: Registered[];
  /** Tokens the AS issued, by value. */
  issued: Map<string, Issued>;
  /** Authorization requests' query parameters, in order. */
  authorizations: Record<string, string>[];
  /**
   * Every secret this world saw or made: tokens, codes, client secrets, and what clients sent (verifiers,
   * assertions, secrets, subject tokens).
   */
  secrets(): string[];
  stop(): Promise<void>;
}

const b64url = (data: Buffer) => data.toString("base64url");

/** Answers with `body` as JSON (none when undefined) and the given headers. */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers });
  res.end(text);
}

/** The request body as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

/** Starts a protected MCP server and its authorization server, both on 127.0.0.1. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const requests: Recorded[] = [];
  const registered: Registered[] = [];
  const issued = new Map<string, Issued>();
  const refreshTokens = new Map<string, Issued>();
  const codes = new Map<string, { query: Record<string, string> }>();
  const authorizations: Record<string, string>[] = [];
  for (const [client_id, client_secret] of Object.entries(options.clients ?? {})) {
    registered.push({
      client_id,
      client_secret,
      token_endpoint_auth_method: client_secret === undefined ? "none" : "client_secret_basic",
      metadata: {},
    });
  }
  let rsUrl = "";
  let asOrigin = "";
  const issuerPath = options.issuerPath ?? "";
  const issuer = () => `${asOrigin}${issuerPath}`;
  const prm = options.prm ?? "header";
  const minted = new Set<string>(Object.values(options.clients ?? {}).filter((v): v is string => v !== undefined));
  const random = (prefix: string) => {
    const value = `${prefix}-${options.marker ?? ""}${b64url(randomBytes(12))}`;
    minted.add(value);
    return value;
  };

  function record(
    server: "as" | "rs",
    req: IncomingMessage,
    url: URL,
    body: Record<string, unknown> | undefined,
  ): void {
    requests.push({
      server,
      method: req.method ?? "",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: headersOf(req),
      body,
    });
  }

  function metadataDocument(): Record<string, unknown> {
    const defaults: Record<string, unknown> = {
      issuer: issuer(),
      authorization_endpoint: `${asOrigin}/authorize`,
      token_endpoint: `${asOrigin}/token`,
      registration_endpoint: `${asOrigin}/register`,
      response_types_supported: ["code"],
      grant_types_supported: [
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
      ],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
    };
    return options.metadata ? options.metadata(defaults, issuer()) : defaults;
  }

  function metadataPath(): string | undefined {
    switch (options.metadataAt ?? "oauth") {
      case "oauth":
        return `/.well-known/oauth-authorization-server${issuerPath}`;
      case "oidc-inserted":
        return `/.well-known/openid-configuration${issuerPath}`;
      case "oidc-appended":
        return `${issuerPath}/.well-known/openid-configuration`;
      case "none":
        return undefined;
    }
  }

  async function clientOf(req: IncomingMessage, form: Record<string, string>): Promise<Registered | string> {
    const basic = req.headers.authorization;
    let id: string | undefined;
    let secret: string | undefined;
    if (basic?.startsWith("Basic ")) {
      const [user, password] = Buffer.from(basic.slice(6), "base64").toString().split(":");
      id = decodeURIComponent(user ?? "");
      secret = decodeURIComponent(password ?? "");
    } else {
      id = form.client_id;
      secret = form.client_secret;
    }
    const client = registered.find((c) => c.client_id === id);
    if (form.client_assertion !== undefined) {
      const [header, payload, signature] = form.client_assertion.split(".");
      if (!options.assertionKey || header === undefined || payload === undefined || signature === undefined)
        return "bad assertion";
      const ok = await crypto.subtle.verify(
        { name: "ECDSA", hash: "SHA-256" },
        options.assertionKey,
        Buffer.from(signature, "base64url"),
        Buffer.from(`${header}.${payload}`),
      );
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as {
        iss?: string;
        sub?: string;
        aud?: string;
      };
      if (!ok || claims.iss !== form.client_id || claims.sub !== form.client_id || claims.aud !== issuer())
        return "assertion not verified";
      return client ?? { client_id: form.client_id!, token_endpoint_auth_method: "private_key_jwt", metadata: {} };
    }
    if (!client) return `unknown client ${id}`;
    if (client.client_secret !== undefined && client.client_secret !== secret) return "wrong secret";
    return client;
  }

  function issue(
    res: ServerResponse,
    client: string,
    scope: string,
    resource: string | undefined,
    withRefresh: boolean,
  ): void {
    const access = random("at");
    const ttl = options.tokenTtl ?? 3600;
    const grant: Issued = { scope, resource, client, expiresAt: Date.now() + ttl * 1000 };
    issued.set(access, grant);
    const body: Record<string, unknown> = { access_token: access, token_type: "Bearer", expires_in: ttl };
    if (scope !== "") body.scope = scope;
    if (withRefresh) {
      const refresh = random("rt");
      refreshTokens.set(refresh, grant);
      body.refresh_token = refresh;
    }
    send(res, 200, body, { "cache-control": "no-store" });
  }

  const asListener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", asOrigin);
    const text = await readBody(req);
    const form = (req.headers["content-type"] ?? "").includes("application/x-www-form-urlencoded")
      ? Object.fromEntries(new URLSearchParams(text))
      : undefined;
    const json =
      (req.headers["content-type"] ?? "").includes("application/json") && text !== ""
        ? (JSON.parse(text) as Record<string, unknown>)
        : undefined;
    record("as", req, url, form ?? json);
    if (options.intercept?.("as", req, res, url)) return;
    const path = metadataPath();
    if (req.method === "GET" && path !== undefined && url.pathname === path) return send(res, 200, metadataDocument());
    if (req.method === "POST" && url.pathname === "/register") {
      const metadata = json ?? {};
      const method =
        typeof metadata.token_endpoint_auth_method === "string"
          ? metadata.token_endpoint_auth_method
          : "client_secret_basic";
      const client: Registered = {
        client_id: `client-${registered.length + 1}`,
        token_endpoint_auth_method: method,
        metadata,
      };
      if (method !== "none") client.client_secret = random("secret");
      registered.push(client);
      const answer: Record<string, unknown> = {
        ...metadata,
        client_id: client.client_id,
        token_endpoint_auth_method: method,
      };
      if (client.client_secret !== undefined)
        Object.assign(answer, { client_secret: client.client_secret, client_secret_expires_at: 0 });
      return send(res, 201, answer);
    }
    if (req.method === "GET" && url.pathname === "/authorize") {
      const query = Object.fromEntries(url.searchParams);
      authorizations.push(query);
      const back = new URL(query.redirect_uri ?? "http://127.0.0.1:1/");
      if (options.authorizeError !== undefined) {
        back.searchParams.set("error", options.authorizeError);
        // A careless server that says too much: the client's own secret, as registered here.
        const secret = registered.find((c) => c.client_id === query.client_id)?.client_secret;
        if (secret !== undefined) back.searchParams.set("error_description", `denied for client secret ${secret}`);
      } else {
        const code = random("code");
        codes.set(code, { query });
        back.searchParams.set("code", code);
      }
      if (query.state !== undefined) back.searchParams.set("state", query.state);
      res.writeHead(302, { location: back.href });
      return void res.end();
    }
    if (req.method === "POST" && url.pathname === "/token" && form !== undefined) {
      const grant = form.grant_type ?? "";
      const override = options.tokenResponse?.(grant, form);
      if (override !== undefined) return send(res, override.status, override.body);
      const client = await clientOf(req, form);
      if (typeof client === "string") return send(res, 401, { error: "invalid_client", error_description: client });
      if (grant === "authorization_code") {
        const entry = codes.get(form.code ?? "");
        codes.delete(form.code ?? "");
        if (!entry) return send(res, 400, { error: "invalid_grant", error_description: "unknown code" });
        const { query } = entry;
        const challenge = b64url(
          createHash("sha256")
            .update(form.code_verifier ?? "")
            .digest(),
        );
        if (challenge !== query.code_challenge || query.code_challenge_method !== "S256")
          return send(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
        if (
          form.redirect_uri !== query.redirect_uri ||
          form.resource !== query.resource ||
          client.client_id !== query.client_id
        ) {
          return send(res, 400, {
            error: "invalid_grant",
            error_description: "redirect_uri, resource or client differ from the authorization request",
          });
        }
        return issue(
          res,
          client.client_id,
          options.grantedScope?.(query.scope ?? "") ?? query.scope ?? "",
          form.resource,
          true,
        );
      }
      if (grant === "refresh_token") {
        const entry = refreshTokens.get(form.refresh_token ?? "");
        if (!entry || options.refuseRefresh)
          return send(res, 400, { error: "invalid_grant", error_description: "refresh token refused" });
        refreshTokens.delete(form.refresh_token!);
        return issue(res, client.client_id, entry.scope, form.resource, true);
      }
      if (grant === "urn:ietf:params:oauth:grant-type:token-exchange") {
        if (
          form.subject_token_type !== "urn:ietf:params:oauth:token-type:id_token" ||
          form.requested_token_type !== "urn:ietf:params:oauth:token-type:id-jag" ||
          !form.subject_token ||
          !form.audience ||
          !form.resource
        ) {
          return send(res, 400, { error: "invalid_request", error_description: "not an ID-JAG token exchange" });
        }
        return send(res, 200, {
          access_token: random("jag"),
          issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
          token_type: "N_A",
        });
      }
      if (grant === "client_credentials" || grant === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        if (grant !== "client_credentials" && !form.assertion)
          return send(res, 400, { error: "invalid_request", error_description: "no assertion" });
        return issue(res, client.client_id, form.scope ?? "", form.resource, false);
      }
      return send(res, 400, { error: "unsupported_grant_type" });
    }
    send(res, 404, { error: "not_found" });
  };

  const prmPaths: Record<string, string> = {
    header: "/meta/resource.json",
    path: "/.well-known/oauth-protected-resource/mcp",
    root: "/.well-known/oauth-protected-resource",
  };

  const rsListener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", rsUrl);
    const text = await readBody(req);
    const message =
      text === "" ? undefined : (JSON.parse(text) as { id?: unknown; method?: string; params?: { name?: string } });
    record("rs", req, url, message as Record<string, unknown> | undefined);
    if (options.intercept?.("rs", req, res, url)) return;
    const origin = new URL(rsUrl).origin;
    if (req.method === "GET" && prm !== "none" && url.pathname === prmPaths[prm]) {
      const resource = options.prmResource ? options.prmResource(rsUrl) : prm === "root" ? origin : rsUrl;
      const document: Record<string, unknown> = { resource, authorization_servers: [issuer()] };
      if (options.prmScopes !== undefined) document.scopes_supported = options.prmScopes;
      return send(res, 200, { ...document, ...options.prmExtra?.(issuer()) });
    }
    if (url.pathname !== "/mcp") return send(res, 404, { error: "not_found" });
    const challenge = (error: string, scope?: string): string => {
      if (options.wwwAuthenticate) return options.wwwAuthenticate(rsUrl);
      const parts = [`error="${error}"`];
      if (scope !== undefined) parts.push(`scope="${scope}"`);
      if (prm === "header") parts.push(`resource_metadata="${origin}${prmPaths.header}"`);
      return `Bearer ${parts.join(", ")}`;
    };
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    const grant = bearer === undefined ? undefined : issued.get(bearer);
    if (bearer === undefined || grant === undefined || grant.expiresAt <= Date.now() || options.revoked?.(bearer)) {
      return send(
        res,
        401,
        { error: "invalid_token" },
        { "www-authenticate": challenge("invalid_token", options.challengeScope) },
      );
    }
    if (req.method === "GET") return send(res, 405, undefined);
    if (req.method === "DELETE") return send(res, 200, undefined);
    const method = message?.method ?? "";
    const needs =
      options.required?.[method === "tools/call" ? `tools/call:${message?.params?.name ?? ""}` : method] ?? [];
    const has = grant.scope.split(" ");
    if (!needs.every((s) => has.includes(s))) {
      return send(
        res,
        403,
        { error: "insufficient_scope" },
        { "www-authenticate": challenge("insufficient_scope", needs.join(" ")) },
      );
    }
    if (message?.id === undefined) return send(res, 202, undefined);
    // A 2025-11-25 server: a method it does not have (server/discover, the 2026-07-28 probe) is method-not-found.
    if (!["initialize", "ping", "tools/list", "tools/call"].includes(method))
      return send(res, 200, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
    const result =
      method === "initialize"
        ? {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "protected", version: "0" },
          }
        : method === "tools/list"
          ? {
              tools: [
                { name: "read", inputSchema: { type: "object" } },
                { name: "write", inputSchema: { type: "object" } },
              ],
            }
          : method === "tools/call"
            ? {
                content: [
                  {
                    type: "text",
                    text: `${message.params?.name} by ${grant.client} with ${grant.scope || "no scope"}`,
                  },
                ],
              }
            : {};
    send(res, 200, { jsonrpc: "2.0", id: message.id, result });
  };

  const wrap =
    (listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
    (req: IncomingMessage, res: ServerResponse) => {
      listener(req, res).catch((error: unknown) =>
        send(res, 500, { error: "server_error", error_description: String(error) }),
      );
    };
  const rsPaths = new Set(["/mcp", ...(prm === "none" ? [] : [prmPaths[prm]!])]);
  const both = (req: IncomingMessage, res: ServerResponse) =>
    rsPaths.has(new URL(req.url ?? "/", rsUrl).pathname) ? rsListener(req, res) : asListener(req, res);
  const rsServer: ListeningHttpServer = await listenHttp(wrap(options.sameOrigin ? both : rsListener), {
    host: "127.0.0.1",
    port: 0,
  });
  const asServer: ListeningHttpServer | undefined = options.sameOrigin
    ? undefined
    : await listenHttp(wrap(asListener), { host: "127.0.0.1", port: 0 });
  asOrigin = asServer?.origin ?? rsServer.origin;
  rsUrl = `${rsServer.origin}/mcp`;
  return {
    rs: rsUrl,
    as: issuer(),
    requests,
    registered,
    issued,
    authorizations,
    secrets() {
      const sent = requests.flatMap((r) =>
        ["code", "code_verifier", "client_secret", "client_assertion", "assertion", "subject_token", "refresh_token"]
          .map((name) => r.body?.[name])
          .filter((v): v is string => typeof v === "string"),
      );
      return [...new Set([...minted, ...sent])];
    },
    async stop() {
      await asServer?.close();
      await rsServer.close();
    },
  };
}

/** An ES256 key pair: the private key as PKCS#8 PEM, JWK and CryptoKey, and the public key the server verifies with. */
export async function signingKeyPair(): Promise<{
  pem: string;
  jwk: webcrypto.JsonWebKey;
  publicKey: webcrypto.CryptoKey;
  privateKey: webcrypto.CryptoKey;
}> {
  const { publicKey, privateKey } = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const der = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", privateKey));
  const pem = `-----BEGIN PRIVATE KEY-----\n${der.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END PRIVATE KEY-----\n`;
  return { pem, jwk: await webcrypto.subtle.exportKey("jwk", privateKey), publicKey, privateKey };
}

/** The user, played by the test: follows the authorization URL to its redirect and hands the callback over. */
export function headlessUser(getClient: () => OAuthClient): (url: URL) => Promise<void> {
  return async (url) => {
    const response = await fetch(url, { redirect: "manual" });
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (location === null) throw new Error(`no redirect from ${url.origin}: ${response.status}`);
    await getClient().finishAuthorization(new URL(location));
  };
}

/** An MCP client over Streamable HTTP with the authorizer; closed by the caller. */
export async function connectWith(
  url: string,
  authorization: OAuthAuthorizer,
  errors: Error[] = [],
): Promise<Awaited<ReturnType<typeof Client.connect>>> {
  const transport = new StreamableHttpClientTransport({
    url,
    authorization,
    standaloneStream: "manual",
    terminateOnClose: false,
  });
  return Client.connect(transport, {
    clientInfo: { name: "auth-test", version: "0" },
    onerror: (error) => errors.push(error),
  });
}

export const REDIRECT = "http://127.0.0.1:8976/callback";

/** Makes the stored token for `serverUrl` one that expires in `msLeft` and was obtained an hour ago (so it is due for renewal). */
export async function expireSoon(store: OAuthStore, serverUrl: string, msLeft: number): Promise<void> {
  const tokens = await store.getTokens(serverUrl);
  if (tokens === undefined) throw new Error(`no tokens stored for ${serverUrl}`);
  await store.setTokens(serverUrl, { ...tokens, expires_at: Date.now() + msLeft, obtained_at: Date.now() - 3_600_000 });
}
