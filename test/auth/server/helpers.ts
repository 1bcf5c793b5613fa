// Fixtures for the resource-server tests: a tiny authorization server (metadata, JWKS, introspection) and a protected MCP server, both on 127.0.0.1.
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { afterAll, beforeAll } from "vitest";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose";
import {
  protectResource,
  type ProtectedResource,
  type ProtectedResourceOptions,
  type TokenVerifier,
} from "../../../runtime/auth/server/index.js";
import type { McpServer, McpServerInit } from "../../../runtime/server/mcp-server.js";
import { listenHttp, type ListeningHttpServer } from "../../../runtime/transports/http/server/listen.js";
import {
  createStreamableHttpServer,
  type StreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../../runtime/transports/http/server/server.js";
import { initializeMessage, post, readSse, sessionHeaders } from "../../http/helpers.js";
import { makeServer } from "../../server/helpers.js";

/** Reads a request body as text. */
function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}

export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function signingKey(kid: string, alg = "ES256"): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

export interface MintOptions {
  /** Signs with this key instead of the server's own (same kid unless given). */
  key?: SigningKey;
  /** JOSE header overrides (alg, typ, kid). */
  header?: Record<string, unknown>;
  /** Drop these claims from the defaults. */
  without?: readonly string[];
}

export interface AuthorizationServerOptions {
  /** Which discovery document is served: RFC 8414 (default), OpenID Connect only, or none. */
  discovery?: "oauth" | "oidc" | "none";
  /** The issuer the metadata names, when it should lie. */
  metadataIssuer?: string;
  /** The resource server's credentials at the introspection endpoint. */
  client?: { id: string; secret: string };
}

export interface TestAuthorizationServer {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly introspectionEndpoint: string;
  readonly key: SigningKey;
  /** Requests per path, to see caches work. */
  readonly hits: Map<string, number>;
  /** What the introspection endpoint answers for a token (active: false for any other). */
  readonly introspection: Map<string, Record<string, unknown>>;
  /** Introspection requests being answered now, and the most there were at once. */
  readonly introspecting: { now: number; most: number };
  /** While set, every introspection request waits for it before it is answered. */
  holdIntrospection?: Promise<void>;
  /** A JWT access token for `resource`, with the usual claims, signed by this server. */
  mint(resource: string, claims?: Record<string, unknown>, options?: MintOptions): Promise<string>;
  stop(): Promise<void>;
}

/** An authorization server as far as a resource server sees one: metadata, a JWKS with one ES256 key, introspection. */
export async function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): Promise<TestAuthorizationServer> {
  const key = await signingKey("key-1");
  const hits = new Map<string, number>();
  const introspection = new Map<string, Record<string, unknown>>();
  const introspecting = { now: 0, most: 0 };
  const client = options.client ?? { id: "mcp-server", secret: "s3cret:with/odd chars" };
  let issuer = "";
  // Assigned below; the listener reads its holdIntrospection.
  let server: TestAuthorizationServer;
  const listener: RequestListener = (req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const metadata = {
        issuer: options.metadataIssuer ?? issuer,
        jwks_uri: `${issuer}/jwks`,
        introspection_endpoint: `${issuer}/introspect`,
      };
      if (path === "/.well-known/oauth-authorization-server" && (options.discovery ?? "oauth") === "oauth")
        return json(res, 200, metadata);
      if (path === "/.well-known/openid-configuration" && options.discovery === "oidc") return json(res, 200, metadata);
      if (path === "/jwks") return json(res, 200, { keys: [key.publicJwk] });
      if (path === "/introspect" && req.method === "POST") {
        introspecting.most = Math.max(introspecting.most, ++introspecting.now);
        try {
          const form = new URLSearchParams(await bodyOf(req));
          const expected = `Basic ${Buffer.from(`${encodeForm(client.id)}:${encodeForm(client.secret)}`).toString("base64")}`;
          const viaPost = form.get("client_id") === client.id && form.get("client_secret") === client.secret;
          if (req.headers.authorization !== expected && !viaPost) return json(res, 401, { error: "invalid_client" });
          await server.holdIntrospection;
          return json(res, 200, introspection.get(form.get("token") ?? "") ?? { active: false });
        } finally {
          introspecting.now--;
        }
      }
      json(res, 404, { error: "not_found" });
    })().catch(() => res.destroy());
  };
  const listening = await listenHttp(listener);
  issuer = listening.origin;
  server = {
    issuer,
    jwksUri: `${issuer}/jwks`,
    introspectionEndpoint: `${issuer}/introspect`,
    key,
    hits,
    introspection,
    introspecting,
    async mint(resource, claims = {}, mintOptions = {}) {
      const now = Math.floor(Date.now() / 1000);
      const defaults: Record<string, unknown> = {
        iss: issuer,
        aud: resource,
        sub: "alice",
        client_id: "client-1",
        scope: "mcp:tools",
        iat: now,
        exp: now + 300,
        jti: `jti-${now}-${Math.random()}`,
      };
      for (const name of mintOptions.without ?? []) delete defaults[name];
      const signer = mintOptions.key ?? key;
      const header = { alg: signer.alg, kid: key.kid, typ: "at+jwt", ...mintOptions.header };
      return new SignJWT({ ...defaults, ...claims })
        .setProtectedHeader(header as { alg: string })
        .sign(signer.privateKey);
    },
    stop: () => listening.close(),
  };
  return server;
}

function encodeForm(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** A server listening before its handler exists: the resource URL (with the port) is known when the handler is built. */
export async function listenFirst(): Promise<{
  listening: ListeningHttpServer;
  url: string;
  use(listener: RequestListener): void;
}> {
  let handler: RequestListener | undefined;
  const listening = await listenHttp((req, res) => (handler ? handler(req, res) : res.writeHead(503).end()));
  return { listening, url: `${listening.origin}/mcp`, use: (listener) => (handler = listener) };
}

export interface ProtectedServer {
  /** The MCP endpoint (= the resource). */
  readonly url: string;
  readonly origin: string;
  readonly server: McpServer;
  readonly mcp: StreamableHttpServer;
  readonly resource: ProtectedResource;
  /** What onerror of the resource and the transport received. */
  readonly errors: Error[];
  stop(): Promise<void>;
}

/** Options of startProtectedServer: protectResource's, the McpServer's (init) and the transport's. */
export type ProtectedServerOptions = Partial<ProtectedResourceOptions> & {
  init?: Partial<McpServerInit>;
  transport?: Partial<StreamableHttpServerOptions>;
};

/**
 * An McpServer with tools `whoami` (no scope; answers with ctx.auth) and `admin` (scope mcp:admin), behind
 * protectResource with the given verifier, at http://127.0.0.1:<port>/mcp.
 */
export async function startProtectedServer(
  issuer: string,
  verifier: TokenVerifier,
  options: ProtectedServerOptions = {},
): Promise<ProtectedServer> {
  const { init, transport, ...resourceOptions } = options;
  const errors: Error[] = [];
  const server = makeServer(init);
  server.tool("whoami", {}, (_args, ctx) =>
    JSON.stringify({
      principal: ctx.principal ?? null,
      scopes: ctx.auth?.scopes ?? null,
      sub: ctx.auth?.claims?.sub ?? null,
    }),
  );
  server.tool("admin", { scopes: ["mcp:admin"] }, () => "admin done");
  const late = await listenFirst();
  const resource = protectResource({
    resource: late.url,
    authorizationServers: [issuer],
    verifier,
    server,
    onerror: (e) => errors.push(e),
    ...resourceOptions,
  });
  const mcp = createStreamableHttpServer({
    path: "/mcp",
    onSession: async (t) => void (await server.connect(t)),
    onerror: (e) => errors.push(e),
    ...resource.http,
    ...transport,
  });
  late.use(mcp.nodeListener);
  return {
    url: late.url,
    origin: late.listening.origin,
    server,
    mcp,
    resource,
    errors,
    async stop() {
      await mcp.close();
      await server.close();
      await late.listening.close();
    },
  };
}

/** The servers a test file shares; set once its tests run. */
export interface AuthServers {
  as: TestAuthorizationServer;
  rs: ProtectedServer;
}

/**
 * Starts an authorization server before the calling file's tests and, given a verifier, a resource server that
 * trusts it (with `options`); stops both after them. Read the fields inside tests, not at module load.
 */
export function useAuthServers(
  verifier?: (as: TestAuthorizationServer) => TokenVerifier,
  options?: ProtectedServerOptions,
): AuthServers {
  const servers = {} as AuthServers;
  beforeAll(async () => {
    servers.as = await startAuthorizationServer();
    if (verifier !== undefined)
      servers.rs = await startProtectedServer(servers.as.issuer, verifier(servers.as), options);
  });
  afterAll(async () => {
    await servers.rs?.stop();
    await servers.as?.stop();
  });
  return servers;
}

/** The members of a `Bearer k="v", ...` challenge. */
export function parseChallenge(header: string | null): Record<string, string> {
  if (header === null) throw new Error("no WWW-Authenticate header");
  if (!/^Bearer\b/.test(header)) throw new Error(`not a Bearer challenge: ${header}`);
  const out: Record<string, string> = {};
  for (const m of header.slice(6).matchAll(/([a-z_]+)="([^"]*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Opens a session with the token; returns its id. */
export async function openSession(url: string, token: string): Promise<string> {
  const res = await post(url, initializeMessage(), bearer(token));
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  await readSse(res);
  const sid = res.headers.get("mcp-session-id")!;
  const ack = await post(
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { ...sessionHeaders(sid), ...bearer(token) },
  );
  if (ack.status !== 202) throw new Error(`initialized: ${ack.status}`);
  return sid;
}

/** tools/call over raw HTTP: the HTTP status, and the JSON-RPC answer when there is one. */
export async function callTool(
  url: string,
  sid: string,
  token: string,
  name: string,
  id: number = 1,
): Promise<{ status: number; challenge: string | null; body: unknown }> {
  const res = await post(
    url,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } },
    { ...sessionHeaders(sid), ...bearer(token) },
  );
  if (res.status === 200) return { status: 200, challenge: null, body: (await readSse(res)).messages.at(-1) };
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.json() };
}
