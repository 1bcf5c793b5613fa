// Options and defaults every OAuth client of mcpgen/auth shares (declarations only: the public types import no peer).
import type { OAuthStore } from "./store.js";

/** Options every OAuth client takes. */
export interface OAuthCommonOptions {
  /**
   * The authorization server(s) this client trusts with its credentials, as issuer identifiers (RFC 8414), e.g.
   * "https://auth.example.com". Set, the client uses no other: an MCP server naming another one (in its protected
   * resource metadata, or by having none under the 2025-03-26 rules, which make its own origin the authorization
   * server) is refused with OAuthError "untrusted_issuer" before any credential, assertion or refresh token is
   * sent, and the metadata's `issuer` must equal one of these. Required by ClientCredentialsClient and
   * JwtBearerClient, and by OAuthClient with pre-registered confidential credentials given as one object;
   * optional otherwise (dynamically registered credentials are kept per issuer and never shown to another).
   */
  issuer?: string | readonly string[];
  /** Where tokens, registrations and pending authorizations are kept; default an InMemoryOAuthStore. */
  store?: OAuthStore;
  /** The fetch for every OAuth request (metadata, registration, token); default the platform's. */
  fetch?: typeof fetch;
  /**
   * Allow plain http to authorization servers and metadata on any host. Default false: http only on loopback
   * hosts (localhost, 127.0.0.0/8, [::1]), https everywhere else, as OAuth 2.1 requires. For tests only.
   */
  allowInsecureHttp?: boolean;
  /**
   * Authorizations (interactive flows, grants, refreshes) one request may go through before it fails with the
   * server's 401/403; default 3. Bounds step-up loops with a server that keeps asking for more.
   */
  maxAuthorizationAttempts?: number;
  /**
   * Refresh (or re-obtain) an access token this long before it expires, ms; default 60 000. Capped at half the
   * token's lifetime, so a token valid for 30 s is renewed 15 s before it expires rather than before every request.
   */
  refreshSkewMs?: number;
  /** Each OAuth HTTP request (metadata, registration, token) must answer within this, ms; default 30 000. */
  requestTimeoutMs?: number;
  /**
   * The largest metadata, registration or token response read, bytes; default 262 144 (256 KiB). A larger one is
   * refused with OAuthError "response_too_large" and the rest of it is not read.
   */
  maxResponseBytes?: number;
  /**
   * When the MCP server has no protected resource metadata, treat it as a 2025-03-26 server: its own origin is
   * the authorization server (metadata there, else /authorize, /token, /register). Default true.
   */
  legacyDiscovery?: boolean;
  /** Scopes always requested besides those the server asks for (space-separated). */
  scope?: string;
  /**
   * Picks one of the authorization servers protected resource metadata lists (of those among `issuer`, when that
   * is set); default the first.
   */
  selectAuthorizationServer?: (issuers: readonly string[]) => string;
}

/** The token endpoint authentication methods these clients implement. */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

export const DEFAULT_MAX_AUTHORIZATION_ATTEMPTS = 3;
export const DEFAULT_REFRESH_SKEW_MS = 60_000;
export const DEFAULT_OAUTH_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_AUTHORIZATION_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_OAUTH_RESPONSE_BYTES = 256 * 1024;
