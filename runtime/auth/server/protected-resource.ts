// The MCP server as an OAuth 2.1 protected resource: bearer tokens checked per request, scope challenges, RFC 9728 metadata.
import type { JsonRpcMessage } from "../../rpc/jsonrpc.js";
import type { AuthGrant } from "../../rpc/transport.js";
import type {
  HttpAuthResult,
  HttpChallenge,
  HttpRequestInfo,
  HttpRoute,
  StreamableHttpServerOptions,
} from "../../transports/http/server/server.js";
import { limitOption } from "../../rpc/limits.js";
import { isLoopbackAddress } from "../../transports/http/server/security.js";
import { bearerRefusal, presentedToken } from "./bearer.js";
import { tokenDigest } from "./token-digest.js";
import { InvalidTokenError, type TokenVerifier, type VerifiedToken } from "./verifier.js";

/** RFC 9728 protected resource metadata, as served. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly [member: string]: unknown;
}

/** Anything that can tell the scopes a JSON-RPC message needs: an McpServer (its tool and method scopes). */
export interface ScopeRequirements {
  requiredScopes(message: unknown): readonly string[];
}

export interface ProtectedResourceOptions {
  /**
   * The canonical URL of the MCP endpoint as clients reach it (`https://mcp.example.com/mcp`): the metadata's
   * `resource`, the audience tokens must name, and where the metadata URLs are derived from. https, or http on a
   * loopback host; no fragment or query.
   */
  resource: string;
  /** Issuer identifiers of the authorization servers whose tokens are accepted (metadata `authorization_servers`). */
  authorizationServers: readonly string[];
  /** Checks each bearer token: `jwtVerifier(...)`, `introspectionVerifier(...)` or your own. */
  verifier: TokenVerifier;
  /** Scopes every request needs (403 insufficient_scope without them); named in the 401 challenge's `scope`. Default none. */
  requiredScopes?: readonly string[];
  /** Whose per-message scopes are enforced (403 insufficient_scope): pass the McpServer, for its tool and method `scopes`. */
  server?: ScopeRequirements;
  /** Metadata `scopes_supported`; default `requiredScopes` when there are any, else left out. */
  scopesSupported?: readonly string[];
  /** More metadata members (`resource_name`, `resource_documentation`...). */
  metadata?: Readonly<Record<string, unknown>>;
  /**
   * The principal of a verified token: what its HTTP session is bound to and what owns its tasks (`ctx.principal`).
   * Default: `sub:<sub>` for a token with a subject, else `client:<client_id>` (a client acting for itself), so a
   * client id never passes for a subject of the same name. With more than one authorization server, the issuer
   * comes first, then `#` (`https://as.example#sub:alice`): equal subjects of two issuers stay apart, and as an
   * issuer has no fragment, the first `#` splits the two. A token that names neither (or, with more than one
   * authorization server, no `iss`) is refused 401 invalid_token. Your function's answer is used as it is; return
   * undefined to refuse the token the same way.
   */
  principal?: (token: VerifiedToken) => string | undefined;
  /** Failures that are not the token's fault (the authorization server unreachable...); never with the token in them. */
  onerror?: (error: Error) => void;
  /** The Retry-After (seconds) of the 503 answered while tokens cannot be verified; default 5. */
  retryAfterSeconds?: number;
}

/** What protectResource gives the HTTP server transport, and the metadata it serves. */
export interface ProtectedResource {
  /** Spread into createStreamableHttpServer's options: `{ ...resource.http, path, onSession }`. */
  readonly http: Required<Pick<StreamableHttpServerOptions, "authenticate" | "authorize" | "routes">>;
  readonly metadata: ProtectedResourceMetadata;
  /** The metadata's URL named in every challenge (`resource_metadata`): the well-known URL with the endpoint's path. */
  readonly metadataUrl: string;
  /**
   * Stops honouring a token at once where this server can: every SSE stream opened with it ends (with `retry`, as
   * at its expiry, so the client comes back and is checked again) and the verifier forgets what it cached about
   * it (TokenVerifier.forget). Whether a later request with it is accepted stays the verifier's call: the
   * authorization server must know of the revocation (introspection asks it again; a JWT stays valid until `exp`
   * unless your verifier refuses it). Streams opened with a token also end when a request presenting it is
   * refused as invalid_token. Resolves with the number of streams ended. Streams are found by the token's
   * SHA-256; the token itself is not kept.
   */
  revoke(token: string): Promise<number>;
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** The canonical form of a resource URL: lower-case scheme and host, no default port, no trailing slash on a bare origin. */
export function canonicalResource(resource: string): string {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    throw new TypeError(`resource must be an absolute URL, got ${JSON.stringify(resource)}`);
  }
  if (url.hash !== "" || resource.includes("#") || url.search !== "")
    throw new TypeError("resource must have no fragment and no query");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackAddress(url.hostname))) {
    throw new TypeError("resource must be an https URL (http only on a loopback host)");
  }
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${url.origin}${path}`;
}

/**
 * The well-known URLs of a resource's metadata, the path-aware one first (RFC 9728 3.1: the endpoint's path after
 * the well-known prefix), then the root one; a resource without a path has just the one.
 */
export function protectedResourceMetadataUrls(resource: string): string[] {
  const url = new URL(canonicalResource(resource));
  const path = url.pathname === "/" ? "" : url.pathname;
  return path === ""
    ? [`${url.origin}${WELL_KNOWN}`]
    : [`${url.origin}${WELL_KNOWN}${path}`, `${url.origin}${WELL_KNOWN}`];
}

/**
 * Makes an MCP HTTP endpoint an OAuth 2.1 protected resource (MCP authorization, 2025-11-25):
 * - every request needs `Authorization: Bearer <token>`: 401 with `WWW-Authenticate: Bearer resource_metadata=...`
 *   without it, 401 `invalid_token` when the verifier refuses it, 400 `invalid_request` when malformed or sent in
 *   the URL, 403 `insufficient_scope` when it lacks `requiredScopes`; 503 when it cannot be checked now;
 * - the token's principal (`sub:<sub>`, else `client:<client_id>`; see the `principal` option) is the session's,
 *   its scopes and claims reach handlers as `ctx.auth`;
 * - an SSE stream ends (with `retry`) when the token it was opened with expires, or is revoked (`revoke`);
 * - a message that needs more scopes (the server's tool and method scopes) gets 403 `insufficient_scope` naming
 *   the scopes granted plus those required, so a step-up keeps what the client had;
 * - the metadata is served at both well-known URLs (path-aware and root).
 */
export function protectResource(options: ProtectedResourceOptions): ProtectedResource {
  const resource = canonicalResource(options.resource);
  const servers = options.authorizationServers;
  if (!Array.isArray(servers) || servers.length === 0 || servers.some((s) => typeof s !== "string" || s === "")) {
    throw new TypeError("authorizationServers must list at least one issuer");
  }
  if (typeof options.verifier?.verify !== "function") throw new TypeError("protectResource needs a verifier");
  const required = scopeTokens("requiredScopes", options.requiredScopes ?? []);
  const supported =
    options.scopesSupported === undefined
      ? required.length > 0
        ? required
        : undefined
      : scopeTokens("scopesSupported", options.scopesSupported);
  const urls = protectedResourceMetadataUrls(resource);
  const metadataUrl = urls[0]!;
  const metadata: ProtectedResourceMetadata = Object.freeze({
    ...options.metadata,
    resource,
    authorization_servers: Object.freeze([...servers]),
    ...(supported === undefined ? {} : { scopes_supported: Object.freeze([...supported]) }),
    bearer_methods_supported: Object.freeze(["header"]),
  });
  const body = JSON.stringify(metadata);
  const routes: HttpRoute[] = urls.map((url) => ({
    path: new URL(url).pathname,
    serve: () => ({ headers: { "content-type": "application/json" }, body }),
  }));
  const verifier = options.verifier;
  const retryAfter = String(limitOption("retryAfterSeconds", options.retryAfterSeconds, 5));
  const report = (error: Error) => options.onerror?.(error);
  const multiIssuer = new Set(servers).size > 1;
  const principalOf = options.principal ?? ((token: VerifiedToken) => defaultPrincipal(token, multiIssuer));
  const streams = new StreamsByToken();

  const authenticate = async (request: HttpRequestInfo): Promise<HttpAuthResult> => {
    const presented = presentedToken(request.url, request.headers["authorization"]);
    if ("missing" in presented) {
      return bearerRefusal({
        scopes: required,
        resourceMetadata: metadataUrl,
        message: "Unauthorized: this server needs a bearer access token",
      });
    }
    if ("malformed" in presented) {
      return bearerRefusal({
        error: "invalid_request",
        errorDescription: presented.malformed,
        resourceMetadata: metadataUrl,
        message: `Bad Request: ${presented.malformed}`,
      });
    }
    const token = presented.token;
    let verified: VerifiedToken;
    try {
      verified = await verifier.verify(token, { resource });
    } catch (error) {
      if (error instanceof InvalidTokenError) {
        // No longer acceptable (revoked at the authorization server, say): nor are the streams opened with it.
        if (streams.size > 0) streams.end(await tokenDigest(token));
        return invalidToken(scrub(error.message, token));
      }
      // The verifier's error may quote the token (a custom one, or a library's): it is scrubbed, and no cause kept.
      report(
        new Error(
          `Cannot verify access tokens: ${scrub(error instanceof Error ? error.message : String(error), token)}`,
        ),
      );
      return {
        status: 503,
        message: "Service Unavailable: the access token cannot be verified now",
        headers: { "retry-after": retryAfter },
      };
    }
    const principal = principalOf(verified);
    if (typeof principal !== "string" || principal === "") {
      const named = verified.subject !== undefined || verified.clientId !== undefined;
      return invalidToken(
        options.principal === undefined && multiIssuer && named
          ? "The access token names no issuer"
          : "The access token names no subject",
      );
    }
    if (!required.every((s) => verified.scopes.includes(s))) return insufficientScope(verified.scopes, required);
    const digest = await tokenDigest(token);
    const grant: { -readonly [K in keyof AuthGrant]: AuthGrant[K] } = {
      principal,
      scopes: verified.scopes,
      claims: verified.claims,
      whenRevoked: (listener) => streams.watch(digest, listener),
    };
    if (typeof verified.expiresAt === "number" && Number.isFinite(verified.expiresAt))
      grant.expiresAt = verified.expiresAt * 1000;
    return grant;
  };

  const revoke = async (token: string): Promise<number> => {
    if (typeof token !== "string" || token === "") throw new TypeError("revoke needs the token");
    const ended = streams.end(await tokenDigest(token));
    try {
      await verifier.forget?.(token);
    } catch (error) {
      report(
        new Error(
          `The verifier could not forget a token: ${scrub(error instanceof Error ? error.message : String(error), token)}`,
        ),
      );
    }
    return ended;
  };

  const invalidToken = (description: string): HttpChallenge =>
    bearerRefusal({
      error: "invalid_token",
      errorDescription: description,
      scopes: required,
      resourceMetadata: metadataUrl,
      message: `Unauthorized: ${description}`,
    });

  const insufficientScope = (granted: readonly string[], needed: readonly string[]): HttpChallenge => {
    // The recommended approach of the spec: what the token has plus what this request needs, so a client that
    // asks for exactly this set loses nothing it had.
    // Granted scopes come from the token: one that could not stand in the header unquoted is left out.
    const scopes = [...new Set([...granted.filter(isScopeToken), ...needed])];
    const lacking = needed.filter((s) => !granted.includes(s));
    const description = `This request needs the scope${lacking.length === 1 ? "" : "s"} ${lacking.join(" ")}`;
    return bearerRefusal({
      error: "insufficient_scope",
      errorDescription: description,
      scopes,
      resourceMetadata: metadataUrl,
      message: `Forbidden: ${description}`,
    });
  };

  const authorize = (message: JsonRpcMessage, grant: AuthGrant | undefined): HttpChallenge | undefined => {
    const needed = options.server?.requiredScopes(message) ?? [];
    if (needed.length === 0) return undefined;
    const granted = grant?.scopes ?? [];
    if (needed.every((s) => granted.includes(s))) return undefined;
    return insufficientScope(granted, [...new Set([...required, ...needed])]);
  };

  return { http: { authenticate, authorize, routes }, metadata, metadataUrl, revoke };
}

/** The default principal (see ProtectedResourceOptions.principal); undefined: the token cannot be placed. */
function defaultPrincipal(token: VerifiedToken, multiIssuer: boolean): string | undefined {
  const local =
    token.subject !== undefined
      ? `sub:${token.subject}`
      : token.clientId !== undefined
        ? `client:${token.clientId}`
        : undefined;
  if (local === undefined || !multiIssuer) return local;
  return token.issuer === undefined || token.issuer === "" ? undefined : `${token.issuer}#${local}`;
}

/**
 * The SSE streams open under each token, by the token's SHA-256: what revocation ends. An entry lives while a
 * stream opened with the token is connected, so the table holds no more than the open streams.
 */
class StreamsByToken {
  private readonly byDigest = new Map<string, Set<() => void>>();

  get size(): number {
    return this.byDigest.size;
  }

  /** Calls `end` if the token is revoked before the returned unsubscribe is. */
  watch(digest: string, end: () => void): () => void {
    let ends = this.byDigest.get(digest);
    if (ends === undefined) this.byDigest.set(digest, (ends = new Set()));
    // Its own entry per subscription: one listener given twice still counts twice.
    const entry = () => end();
    ends.add(entry);
    return () => {
      const current = this.byDigest.get(digest);
      if (current === undefined || !current.delete(entry)) return;
      if (current.size === 0) this.byDigest.delete(digest);
    };
  }

  /** Ends every stream opened with the token; how many there were. */
  end(digest: string): number {
    const ends = this.byDigest.get(digest);
    if (ends === undefined) return 0;
    this.byDigest.delete(digest);
    for (const end of ends) end();
    return ends.size;
  }
}

function isScopeToken(scope: unknown): scope is string {
  return typeof scope === "string" && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope);
}

/** Scope lists go into challenge headers unquoted: each must be an RFC 6749 scope-token. */
function scopeTokens(name: string, scopes: readonly string[]): readonly string[] {
  if (!Array.isArray(scopes) || !scopes.every(isScopeToken)) {
    throw new TypeError(
      `${name} must be a list of OAuth scope tokens (visible ASCII, no spaces, quotes or backslashes)`,
    );
  }
  return Object.freeze([...new Set(scopes)]);
}

/** `text` with every occurrence of the token (and of a JWT's signature, should a library quote only that) blanked out. */
function scrub(text: string, token: string): string {
  let out = text.split(token).join("[token]");
  const parts = token.split(".");
  if (parts.length === 3 && parts[2]!.length >= 16) out = out.split(parts[2]!).join("[token]");
  return out;
}
