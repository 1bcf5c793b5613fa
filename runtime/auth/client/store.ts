// What an OAuth client keeps between requests (tokens, client registrations, pending authorizations) and the in-memory default.

type Awaitable<T> = T | Promise<T>;

/** Tokens for one MCP server, as the client stores them. */
export interface StoredTokens {
  access_token: string;
  /** Lower-case: "bearer", or "dpop" for a token bound to the client's DPoP key (the `dpop` option). */
  token_type: string;
  /** For a "dpop" token: the JWK SHA-256 thumbprint of the key it is bound to (a client with another key drops it). */
  dpop_jkt?: string;
  refresh_token?: string;
  /** When the access token expires, ms since the epoch; absent when the server did not say. */
  expires_at?: number;
  /** When it was obtained, ms since the epoch (bounds the refresh skew to half the token's lifetime). */
  obtained_at?: number;
  /** The scope granted (or, when the server did not say, the scope requested). */
  scope?: string;
  /** The authorization server that issued them. */
  issuer: string;
  /** The resource they were requested for (the `resource` parameter). */
  resource: string;
  /** Set when the server has no metadata (2025-03-26): the origin its authorization server lives at. */
  legacy_origin?: string;
}

/** A client's identity at one authorization server: pre-registered, a metadata document URL, or dynamically registered. */
export interface OAuthClientInformation {
  client_id: string;
  client_secret?: string;
  /** client_secret_basic, client_secret_post, private_key_jwt or none; chosen from the server's metadata when absent. */
  token_endpoint_auth_method?: string;
  /** When a registered secret expires, seconds since the epoch; 0 or absent for never. */
  client_secret_expires_at?: number;
}

/** An authorization the user was sent to and has not come back from. */
export interface PendingAuthorization {
  /** The PKCE code verifier. */
  code_verifier: string;
  redirect_uri: string;
  client_id: string;
  /** The MCP endpoint the tokens are for. */
  server_url: string;
  issuer: string;
  resource: string;
  scope?: string;
  /** When the server has no metadata (2025-03-26 fallback): the origin its default endpoints live at. */
  legacy_origin?: string;
  /** ms since the epoch; a callback after this is refused. */
  expires_at: number;
}

/**
 * Where an OAuth client keeps its state. Tokens are keyed by the MCP endpoint URL and name the issuer that issued
 * them (refreshed there only); client registrations are keyed by the authorization server's issuer (as its metadata
 * spells it; a registration is presented to that issuer only, and another issuer, e.g. after the MCP server's
 * protected resource metadata moved to one, gets one of its own), pending authorizations by their `state`. Setting undefined deletes.
 * Implement it over the platform's secure storage (a keychain, an encrypted database) in production apps.
 */
export interface OAuthStore {
  getTokens(serverUrl: string): Awaitable<StoredTokens | undefined>;
  setTokens(serverUrl: string, tokens: StoredTokens | undefined): Awaitable<void>;
  getClient(issuer: string): Awaitable<OAuthClientInformation | undefined>;
  setClient(issuer: string, client: OAuthClientInformation | undefined): Awaitable<void>;
  getPending(state: string): Awaitable<PendingAuthorization | undefined>;
  setPending(state: string, pending: PendingAuthorization | undefined): Awaitable<void>;
}

/** Pending authorizations kept at most, oldest dropped first: each is one trip to the authorization server. */
export const MAX_PENDING_AUTHORIZATIONS = 100;

/** Keeps everything in this process (the default): a restart means authorizing again. */
export class InMemoryOAuthStore implements OAuthStore {
  private readonly tokens = new Map<string, StoredTokens>();
  private readonly clients = new Map<string, OAuthClientInformation>();
  private readonly pending = new Map<string, PendingAuthorization>();

  getTokens(serverUrl: string): StoredTokens | undefined {
    return this.tokens.get(serverUrl);
  }
  setTokens(serverUrl: string, tokens: StoredTokens | undefined): void {
    setOrDelete(this.tokens, serverUrl, tokens);
  }
  getClient(issuer: string): OAuthClientInformation | undefined {
    return this.clients.get(issuer);
  }
  setClient(issuer: string, client: OAuthClientInformation | undefined): void {
    setOrDelete(this.clients, issuer, client);
  }
  getPending(state: string): PendingAuthorization | undefined {
    const pending = this.pending.get(state);
    return pending !== undefined && pending.expires_at > Date.now() ? pending : undefined;
  }
  setPending(state: string, pending: PendingAuthorization | undefined): void {
    setOrDelete(this.pending, state, pending);
    prunePending(this.pending);
  }
}

function setOrDelete<V>(map: Map<string, V>, key: string, value: V | undefined): void {
  if (value === undefined) map.delete(key);
  else map.set(key, value);
}

/** Drops expired pending authorizations, then the oldest beyond the cap. */
export function prunePending(pending: Map<string, PendingAuthorization> | Record<string, PendingAuthorization>): void {
  const now = Date.now();
  if (pending instanceof Map) {
    for (const [state, entry] of pending) if (entry.expires_at <= now) pending.delete(state);
    for (const state of pending.keys()) {
      if (pending.size <= MAX_PENDING_AUTHORIZATIONS) break;
      pending.delete(state);
    }
    return;
  }
  for (const [state, entry] of Object.entries(pending)) if (entry.expires_at <= now) delete pending[state];
  const states = Object.keys(pending);
  for (const state of states.slice(0, Math.max(0, states.length - MAX_PENDING_AUTHORIZATIONS))) delete pending[state];
}
