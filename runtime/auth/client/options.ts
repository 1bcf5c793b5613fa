// Options and defaults every OAuth client of mcpgen/auth shares (declarations only: the public types import no peer).
import type { PrivateJwk, WebCryptoPrivateKey } from "./keys.js";
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
  /**
   * Sender-constrained tokens (DPoP, RFC 9449); default off. On (true, or the key to use): every token request
   * carries a DPoP proof, and a token issued as `DPoP` is sent to the MCP server as `Authorization: DPoP <token>`
   * with a fresh proof bound to each request's method and URL (and the token's hash); the nonces the authorization
   * server and the MCP server ask for (`use_dpop_nonce`) are sent back, once per refusal. A server that issues
   * Bearer tokens anyway gets them as Bearer tokens. Tokens are bound to the key: with the default key (made for
   * this client, never stored), stored DPoP tokens are dropped by a client with another key, and the user asked
   * again; give `privateKey` to keep them usable across restarts. Anything but a boolean or DPoPOptions, and
   * unusable DPoPOptions, are OAuthError "invalid_options" when the client is made.
   */
  dpop?: boolean | DPoPOptions;
}

/** The JWS algorithms DPoP proofs can be signed with here. */
export type DPoPAlgorithm =
  "ES256" | "ES384" | "ES512" | "PS256" | "PS384" | "PS512" | "RS256" | "RS384" | "RS512" | "EdDSA" | "Ed25519";

/**
 * A WebCrypto key pair (CryptoKeyPair) for DPoP: a private key with "sign" usage, and its public key, which must be
 * extractable (it goes into every proof's `jwk` header; WebCrypto makes public keys extractable by default).
 */
export interface DPoPKeyPair {
  readonly privateKey: WebCryptoPrivateKey;
  /** A CryptoKey too (same structural type). */
  readonly publicKey: WebCryptoPrivateKey;
}

/** How DPoP proofs are signed. */
export interface DPoPOptions {
  /**
   * The key proofs are signed with: a WebCrypto key pair, a private JWK, or a PKCS#8 PEM ("-----BEGIN PRIVATE
   * KEY-----"); the public half of a JWK or PEM is derived from it. Default: an `algorithm` key pair generated when
   * first needed, its private half not extractable. A key that cannot be used is OAuthError "invalid_options" on
   * the first request that needs it.
   */
  privateKey?: DPoPKeyPair | PrivateJwk | string;
  /**
   * The proofs' JWS algorithm: one of ES256 (default), ES384, ES512, PS256, PS384, PS512, RS256, RS384, RS512,
   * EdDSA/Ed25519. With `privateKey`, it must fit the key (a JWK's own `alg` is used when this is absent; a PEM
   * needs it). Anything else is OAuthError "invalid_options" when the client is made.
   */
  algorithm?: DPoPAlgorithm;
}

/** The token endpoint authentication methods these clients implement. */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

export const DEFAULT_MAX_AUTHORIZATION_ATTEMPTS = 3;
export const DEFAULT_REFRESH_SKEW_MS = 60_000;
export const DEFAULT_OAUTH_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_AUTHORIZATION_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_OAUTH_RESPONSE_BYTES = 256 * 1024;
