// The OAuth client's typed error: one class, a code naming what was wrong, and no secret in any of its text.

/** What went wrong, one code per kind of bad input or failed step. */
export type OAuthErrorCode =
  /** oauth4webapi (an optional peer dependency of mcpgen) is not installed. */
  | "missing_dependency"
  /** An option is invalid (e.g. a client secret that is empty, a key that cannot be imported). */
  | "invalid_options"
  /** An OAuth URL is plain http on a host that is not loopback (see `allowInsecureHttp`), or not http(s) at all. */
  | "insecure_url"
  /** A redirect URI is neither https, http on a loopback host nor a private-use scheme (RFC 8252). */
  | "invalid_redirect_uri"
  /** The client ID metadata document URL is not an https URL with a path. */
  | "invalid_client_metadata_url"
  /** A `WWW-Authenticate` header could not be parsed, or its `resource_metadata` is not a URL. */
  | "invalid_challenge"
  /** No protected resource metadata was found (and the 2025-03-26 fallback is off). */
  | "resource_metadata_not_found"
  /** The protected resource metadata is malformed (not JSON, no `authorization_servers`, ...). */
  | "invalid_resource_metadata"
  /** The metadata's `resource` is not the MCP server the client connects to. */
  | "resource_mismatch"
  /** No authorization server metadata at any of the well-known URIs. */
  | "authorization_server_metadata_not_found"
  /** The authorization server metadata is malformed or lacks an endpoint the flow needs. */
  | "invalid_authorization_server_metadata"
  /** The metadata's `issuer` is not the issuer it was fetched for. */
  | "issuer_mismatch"
  /**
   * The MCP server named an authorization server that is not among the issuers this client trusts with its
   * credentials (the `issuer` option): nothing carrying them was sent to it.
   */
  | "untrusted_issuer"
  /** The authorization server does not advertise PKCE with S256 (`code_challenge_methods_supported`). */
  | "pkce_not_supported"
  /** No way to obtain a client id: no pre-registered client, no client ID metadata document support, no registration endpoint. */
  | "registration_unavailable"
  /** Dynamic client registration was refused or answered with something unusable. */
  | "registration_failed"
  /** The user was sent to authorize and the app asked not to wait (`awaitAuthorization: false`): finish, then retry. */
  | "authorization_required"
  /** The user did not complete the authorization within `authorizationTimeoutMs`. */
  | "authorization_timeout"
  /** The authorization server redirected back with an error (e.g. access_denied). */
  | "authorization_denied"
  /** A callback whose `state` this client did not issue, or issued too long ago. */
  | "unknown_state"
  /** A callback without an authorization code, or with an `iss` other than the authorization server's (RFC 9207). */
  | "invalid_callback"
  /** The token endpoint refused the request (invalid_grant, invalid_client, ...). */
  | "token_request_failed"
  /** The token endpoint's answer is unusable: no `access_token`, an unsupported `token_type`, not JSON, ... */
  | "invalid_token_response"
  /** A metadata, registration or token response is larger than `maxResponseBytes`; the rest of it was not read. */
  | "response_too_large"
  /** An OAuth endpoint could not be reached, timed out, or answered with an unexpected HTTP status. */
  | "http_error";

export interface OAuthErrorDetails {
  /** The URL involved (a metadata document, an endpoint); never carries a credential. */
  url?: string;
  /** The HTTP status, when a response was the problem. */
  status?: number;
  /** The OAuth `error` code the server sent (e.g. `invalid_grant`, `insufficient_scope`). */
  oauthError?: string;
  /** The authorization server's issuer involved (for untrusted_issuer: the one the client was offered). */
  issuer?: string;
  cause?: unknown;
}

/**
 * Every failure of mcpgen/auth's OAuth clients. Messages name what was wrong and where; access tokens, refresh
 * tokens, authorization codes, PKCE verifiers, client secrets and assertions never appear in them, nor in `cause`.
 */
export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly url?: string;
  readonly status?: number;
  readonly oauthError?: string;
  readonly issuer?: string;

  constructor(code: OAuthErrorCode, message: string, details: OAuthErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "OAuthError";
    this.code = code;
    if (details.url !== undefined) this.url = details.url;
    if (details.status !== undefined) this.status = details.status;
    if (details.oauthError !== undefined) this.oauthError = details.oauthError;
    if (details.issuer !== undefined) this.issuer = details.issuer;
  }
}

/** Keeps the most recent secrets a client handled, to strip them from any text that leaves it. */
export class SecretSet {
  private readonly values: string[] = [];
  constructor(private readonly max = 64) {}

  add(...secrets: (string | undefined)[]): void {
    for (const secret of secrets) {
      // Very short values cannot be told from ordinary words; credentials are never that short.
      if (secret === undefined || secret.length < 8 || this.values.includes(secret)) continue;
      this.values.push(secret);
      if (this.values.length > this.max) this.values.shift();
    }
  }

  /** `text` with every known secret (and its URL-encoded form) replaced. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.values) {
      for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join("[redacted]");
    }
    return out;
  }

  /**
   * The error as it may leave the client, its message and stack redacted. Library failures were turned into
   * OAuthError where they happened; what else arrives here is the app's own (a redirect or store callback).
   */
  scrub(error: unknown): Error {
    const out = error instanceof Error ? error : new Error(String(error));
    for (const field of ["message", "stack"] as const) {
      const text = out[field];
      if (text !== undefined && this.redact(text) !== text) {
        Object.defineProperty(out, field, { value: this.redact(text), configurable: true, writable: true });
      }
    }
    return out;
  }
}
