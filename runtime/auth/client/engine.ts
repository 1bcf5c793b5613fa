// The engine under every OAuth client of mcpgen/auth: discovery on a challenge, trusted issuers, storage, refresh, step-up, one flow at a time.
import type {
  HttpAuthChallenge,
  HttpAuthCredentials,
  HttpAuthRequest,
  HttpAuthResponse,
} from "../../transports/http/client/options.js";
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { readChallenges } from "./challenge.js";
import {
  discoverAuthorizationServer,
  discoverResource,
  type DiscoveryOptions,
  type ResourceInfo,
} from "./discovery.js";
import { boundedFetch } from "./bounded-fetch.js";
import { DPoPKeys, nonceOf } from "./dpop.js";
import { OAuthError, SecretSet } from "./errors.js";
import { TrustedIssuers } from "./issuers.js";
import {
  oauthLibrary,
  translate,
  type AuthorizationServer,
  type ClientAuth,
  type OAuthLibrary,
  type Step,
  type TokenEndpointResponse,
} from "./library.js";
import { InMemoryOAuthStore, type OAuthStore, type StoredTokens } from "./store.js";
import { canonicalResource } from "./urls.js";
import {
  DEFAULT_MAX_AUTHORIZATION_ATTEMPTS,
  DEFAULT_MAX_OAUTH_RESPONSE_BYTES,
  DEFAULT_OAUTH_REQUEST_TIMEOUT_MS,
  DEFAULT_REFRESH_SKEW_MS,
  type OAuthCommonOptions,
} from "./options.js";

/** Everything an acquisition needs: where, for what, from whom. */
export interface Acquisition {
  lib: OAuthLibrary;
  /** The key of the MCP endpoint (its URL). */
  serverKey: string;
  info: ResourceInfo;
  as: AuthorizationServer;
  /** The scope to request, space-separated; undefined to omit the parameter. */
  scope: string | undefined;
}

/** How one kind of client obtains tokens: the part the engine leaves to it. */
export interface Grant {
  /** Whether tokens can be obtained again without the user (so an expired one is replaced before sending). */
  readonly unattended: boolean;
  /** Obtains tokens for the acquisition and stores them (with the engine's saveTokens). */
  acquire(engine: OAuthEngine, acquisition: Acquisition): Promise<void>;
  /** The client identity and authentication to use at this authorization server. */
  clientFor(
    engine: OAuthEngine,
    lib: OAuthLibrary,
    as: AuthorizationServer,
  ): Promise<{ client: { client_id: string }; auth: ClientAuth }>;
}

/**
 * Obtains OAuth access tokens for MCP servers on behalf of an HttpAuthorizer. Its grant says how tokens are
 * obtained (the user's authorization, client credentials, an assertion); the engine finds the authorization server
 * on a challenge, stores and refreshes tokens, steps up scopes on insufficient_scope, and lets one authorization
 * run at a time per server while concurrent requests wait for it. Internal: the public clients wrap it, so their
 * declarations name nothing of the optional peer.
 */
export class OAuthEngine {
  readonly maxRetries: number;
  readonly store: OAuthStore;
  readonly secrets = new SecretSet();
  readonly allowInsecureHttp: boolean;
  /** The issuers credentials may go to; undefined when the app named none (any issuer is used). */
  readonly trust: TrustedIssuers | undefined;
  /** The DPoP key and nonces; undefined when the `dpop` option is off. */
  readonly dpop: DPoPKeys | undefined;
  private readonly grant: Grant;
  private readonly fetchImpl: typeof fetch;
  private readonly refreshSkewMs: number;
  private readonly requestTimeoutMs: number;
  private readonly legacyDiscovery: boolean;
  private readonly extraScope: string | undefined;
  private readonly selectAuthorizationServer: ((issuers: readonly string[]) => string) | undefined;
  private readonly resources = new Map<string, ResourceInfo>();
  private readonly servers = new Map<string, Promise<AuthorizationServer>>();
  private readonly flights = new Map<string, Promise<unknown>>();

  constructor(options: OAuthCommonOptions, grant: Grant) {
    this.grant = grant;
    this.store = options.store ?? new InMemoryOAuthStore();
    this.allowInsecureHttp = options.allowInsecureHttp ?? false;
    this.trust = TrustedIssuers.from(options.issuer, this.allowInsecureHttp);
    this.fetchImpl = boundedFetch(
      options.fetch,
      limitOption("maxResponseBytes", options.maxResponseBytes, DEFAULT_MAX_OAUTH_RESPONSE_BYTES),
    );
    this.maxRetries = limitOption(
      "maxAuthorizationAttempts",
      options.maxAuthorizationAttempts,
      DEFAULT_MAX_AUTHORIZATION_ATTEMPTS,
      100,
    );
    this.refreshSkewMs = limitOption("refreshSkewMs", options.refreshSkewMs, DEFAULT_REFRESH_SKEW_MS, MAX_TIMER_MS);
    this.requestTimeoutMs = limitOption(
      "requestTimeoutMs",
      options.requestTimeoutMs,
      DEFAULT_OAUTH_REQUEST_TIMEOUT_MS,
      MAX_TIMER_MS,
    );
    this.legacyDiscovery = options.legacyDiscovery ?? true;
    this.extraScope = options.scope?.trim() || undefined;
    this.selectAuthorizationServer = options.selectAuthorizationServer;
    this.dpop = DPoPKeys.from(options.dpop);
  }

  // ---- HttpAuthorizer ----

  async authorization(url: URL, request?: HttpAuthRequest): Promise<string | HttpAuthCredentials | undefined> {
    const key = serverKey(url);
    try {
      const flight = this.flights.get(key);
      if (flight !== undefined) await flight.catch(() => undefined);
      let tokens = await this.store.getTokens(key);
      if (tokens !== undefined && !(this.trusts(tokens) && (await this.holdsKeyOf(tokens)))) {
        // From an authorization server no longer trusted (the configuration changed): never renewed there. Or
        // bound to a DPoP key this client does not have: no proof it could make would be accepted with them.
        await this.store.setTokens(key, undefined);
        tokens = undefined;
      }
      if (tokens !== undefined && this.expiring(tokens)) tokens = await this.renew(key, tokens);
      if (tokens === undefined) return undefined;
      this.secrets.add(tokens.access_token, tokens.refresh_token);
      if (tokens.token_type !== "dpop" || this.dpop === undefined) return `Bearer ${tokens.access_token}`;
      // The proof is for this request only: its method, its URL, this token (RFC 9449 section 7.1).
      const proof = await this.dpop.proof(url, request?.method ?? "POST", tokens.access_token);
      return { authorization: `DPoP ${tokens.access_token}`, headers: { DPoP: proof } };
    } catch (error) {
      throw this.secrets.scrub(error);
    }
  }

  /** Keeps the DPoP nonce a server sent with any response for the next proof to it. */
  observe(response: HttpAuthResponse): void {
    this.dpop?.remember(response.url, response.headers["dpop-nonce"]);
  }

  async challenge(challenge: HttpAuthChallenge): Promise<boolean> {
    try {
      return await this.answer(challenge);
    } catch (error) {
      throw this.secrets.scrub(error);
    }
  }

  /** Forgets the tokens for an MCP endpoint (e.g. on sign-out); registrations stay. */
  async signOut(serverUrl: string | URL): Promise<void> {
    const key = serverKey(new URL(serverUrl));
    this.resources.delete(key);
    await this.store.setTokens(key, undefined);
  }

  // ---- the flow ----

  private async answer(challenge: HttpAuthChallenge): Promise<boolean> {
    const lib = await oauthLibrary();
    const key = serverKey(challenge.url);
    const challenges = await readChallenges(lib, challenge.headers);
    const proof = challenge.credentialHeaders?.DPoP;
    if (this.dpop !== undefined && proof !== undefined && challenge.status === 401) {
      if (challenges.dpop?.error === "use_dpop_nonce") {
        // The MCP server wants a nonce of its own in the proof (RFC 9449 section 9): sent again with the one it
        // gave, unless the refused proof had that one already (then another proof would fare no better).
        const nonce = challenge.headers["dpop-nonce"];
        if (nonce === undefined || nonce === "") return false;
        this.dpop.remember(challenge.url, nonce);
        return nonce !== nonceOf(proof);
      }
    }
    // A DPoP challenge carries the same parameters as a Bearer one (resource_metadata, scope, error).
    const bearer = challenges.bearer ?? challenges.dpop;
    const stepUp = challenge.status === 403;
    // A 403 is ours only as insufficient_scope with the scope needed; anything else is the server's last word.
    if (stepUp && (bearer?.error !== "insufficient_scope" || bearer.scope === undefined)) return false;
    if (challenge.status !== 401 && !stepUp) return false;

    // Another request's authorization is under way, or already replaced the credentials this one carried.
    const flight = this.flights.get(key);
    if (flight !== undefined) {
      await flight;
      return true;
    }
    const current = await this.store.getTokens(key);
    const carried = challenge.authorization;
    if (current !== undefined && carried !== `${schemeOf(current)} ${current.access_token}`) return true;

    await this.exclusive(key, async () => {
      // Two challenges may both have got here before either started: the second finds the work done.
      if ((await this.store.getTokens(key))?.access_token !== current?.access_token) return;
      if (!stepUp && current?.refresh_token !== undefined && carried !== undefined && challenge.attempt === 1) {
        // The token was refused (expired or revoked): a refresh is cheaper than a new authorization.
        if ((await this.refreshOrDrop(lib, key, current)) !== undefined) return;
      }
      // Read afresh for every new authorization: the authorization server it names may have changed (SEP-2352),
      // and then the client registers there anew and never presents the other's credentials.
      const info = await this.resourceInfo(lib, key, challenge.url, bearer?.resourceMetadata, true);
      const as = await this.authorizationServer(lib, info);
      const previous = current !== undefined && current.issuer === as.issuer ? current.scope : undefined;
      const asked = bearer?.scope ?? info.scopesSupported?.join(" ");
      const scope = union(previous, asked, this.extraScope);
      await this.grant.acquire(this, { lib, serverKey: key, info, as, scope });
    });
    return true;
  }

  /** A valid token for a stored one that is expiring: refreshed, or obtained anew when that needs no user. */
  private renew(key: string, tokens: StoredTokens): Promise<StoredTokens | undefined> {
    return this.exclusive(key, async () => {
      const latest = await this.store.getTokens(key);
      if (latest !== undefined && latest.access_token !== tokens.access_token && !this.expiring(latest)) return latest;
      const lib = await oauthLibrary();
      const usable = tokens.expires_at !== undefined && tokens.expires_at > Date.now();
      if (tokens.refresh_token !== undefined) {
        let refreshed: StoredTokens | undefined;
        try {
          refreshed = await this.refreshOrDrop(lib, key, tokens);
        } catch (error) {
          // The authorization server is unreachable; the token it would replace is still good for a while.
          if (usable) return tokens;
          throw error;
        }
        if (refreshed !== undefined) return refreshed;
      }
      const info = this.resources.get(key) ?? infoOf(tokens);
      if (this.grant.unattended) {
        const as = await this.authorizationServer(lib, info);
        await this.grant.acquire(this, { lib, serverKey: key, info, as, scope: union(tokens.scope, this.extraScope) });
        return this.store.getTokens(key);
      }
      // Still good until it expires; once expired it is of no use, and its absence makes the next 401 authorize.
      if (usable && tokens.refresh_token === undefined) return tokens;
      await this.store.setTokens(key, undefined);
      return undefined;
    });
  }

  /**
   * Refreshes the tokens; undefined (and the tokens dropped) when the server refuses the refresh token, so a new
   * authorization follows. Network failures and server errors are thrown: they are no reason to ask the user again.
   */
  private async refreshOrDrop(lib: OAuthLibrary, key: string, tokens: StoredTokens): Promise<StoredTokens | undefined> {
    // A refresh token is redeemed where it was issued, whatever the server's metadata says today, and only there
    // while that issuer is trusted: else it and the client's credentials stay here, and a new authorization follows.
    if (!this.trusts(tokens)) {
      await this.store.setTokens(key, undefined);
      return undefined;
    }
    const info = infoOf(tokens);
    try {
      const as = await this.authorizationServer(lib, info);
      const client = await this.grant.clientFor(this, lib, as);
      const step: Step = { kind: "token", what: "the token endpoint (refresh)", url: as.token_endpoint };
      this.secrets.add(tokens.refresh_token);
      const response = await this.tokenRequest(lib, step, async (options) => {
        const sent = await lib.refreshTokenGrantRequest(as, client.client, client.auth, tokens.refresh_token!, {
          ...options,
          additionalParameters: { resource: tokens.resource },
        });
        return lib.processRefreshTokenResponse(as, client.client, sent);
      });
      return await this.saveTokens(key, info, as, response, tokens.scope, tokens.refresh_token);
    } catch (error) {
      if (
        error instanceof OAuthError &&
        error.code === "token_request_failed" &&
        error.status !== undefined &&
        error.status < 500
      ) {
        await this.store.setTokens(key, undefined);
        return undefined;
      }
      throw error;
    }
  }

  /** Runs `task` as the one authorization in flight for this server; later callers wait on it. */
  private exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const running = this.flights.get(key);
    const next = (running ?? Promise.resolve()).catch(() => undefined).then(task);
    const tracked = next.finally(() => {
      if (this.flights.get(key) === tracked) this.flights.delete(key);
    });
    tracked.catch(() => undefined);
    this.flights.set(key, tracked);
    return next;
  }

  /**
   * Due for renewal: within the refresh skew of its expiry, the skew capped at half the token's lifetime so that
   * short-lived tokens are not renewed before every request.
   */
  private expiring(tokens: StoredTokens): boolean {
    if (tokens.expires_at === undefined) return false;
    const lifetime = tokens.obtained_at === undefined ? Infinity : tokens.expires_at - tokens.obtained_at;
    return tokens.expires_at - Math.min(this.refreshSkewMs, lifetime / 2) <= Date.now();
  }

  // ---- discovery, cached ----

  /** The server's protected resource metadata: cached, unless `fresh` or the challenge names another document. */
  private async resourceInfo(
    lib: OAuthLibrary,
    key: string,
    server: URL,
    fromChallenge: URL | undefined,
    fresh = false,
  ): Promise<ResourceInfo> {
    const known = this.resources.get(key);
    if (!fresh && known !== undefined && (fromChallenge === undefined || known.metadataUrl === fromChallenge.href))
      return known;
    const info = await discoverResource(this.discoveryOptions(lib), server, fromChallenge);
    this.resources.set(key, info);
    return info;
  }

  /**
   * The authorization server's metadata, fetched once per issuer (a failed fetch is tried again next time). Every
   * metadata a grant gets comes from here, so here is where an untrusted issuer is refused: before its metadata is
   * asked for, and again on the `issuer` the metadata names.
   */
  authorizationServer(
    lib: OAuthLibrary,
    info: Pick<ResourceInfo, "issuer" | "legacyOrigin">,
  ): Promise<AuthorizationServer> {
    const key = info.legacyOrigin === undefined ? info.issuer : `legacy ${info.legacyOrigin}`;
    let metadata = this.servers.get(key);
    if (metadata === undefined) {
      metadata = this.trustedMetadata(lib, info);
      this.servers.set(key, metadata);
      metadata.catch(() => this.servers.delete(key));
    }
    return metadata;
  }

  private async trustedMetadata(
    lib: OAuthLibrary,
    info: Pick<ResourceInfo, "issuer" | "legacyOrigin">,
  ): Promise<AuthorizationServer> {
    const trust = this.trust;
    const redact = (text: string) => this.secrets.redact(text);
    if (trust !== undefined) {
      // A 2025-03-26 server's authorization server is its own origin; its metadata (if any) names the issuer there.
      if (info.legacyOrigin !== undefined && !trust.hasOrigin(info.legacyOrigin)) {
        throw trust.refusal(
          info.legacyOrigin,
          "the MCP server's own origin: it publishes no protected resource metadata, so by the 2025-03-26 rules its authorization server lives there",
          redact,
        );
      }
      if (info.legacyOrigin === undefined && !trust.has(info.issuer))
        throw trust.refusal(info.issuer, "the authorization server chosen for the MCP server", redact);
    }
    const metadata = await discoverAuthorizationServer(this.discoveryOptions(lib), info);
    if (trust !== undefined && !trust.has(metadata.issuer))
      throw trust.refusal(metadata.issuer, "the issuer its metadata names", redact);
    return metadata;
  }

  /** Whether tokens came from an issuer this client may still use. */
  private trusts(tokens: StoredTokens): boolean {
    return this.trust === undefined || this.trust.has(tokens.issuer);
  }

  /** Whether this client can prove possession for the tokens: Bearer ones need nothing, DPoP ones its own key. */
  private async holdsKeyOf(tokens: StoredTokens): Promise<boolean> {
    if (tokens.token_type !== "dpop") return true;
    if (this.dpop === undefined || tokens.dpop_jkt === undefined) return false;
    return tokens.dpop_jkt === (await this.dpop.thumbprint(await oauthLibrary()));
  }

  private discoveryOptions(lib: OAuthLibrary): DiscoveryOptions {
    return {
      lib,
      requestOptions: () => this.requestOptions(lib),
      allowInsecureHttp: this.allowInsecureHttp,
      legacyDiscovery: this.legacyDiscovery,
      selectAuthorizationServer: this.selectAuthorizationServer,
      trust: this.trust,
      redact: (text) => this.secrets.redact(text),
    };
  }

  // ---- for the grants ----

  /** Options for every oauth4webapi request: URLs are checked by this client before, so http is let through. */
  requestOptions(lib: OAuthLibrary): Record<PropertyKey, unknown> & { signal: AbortSignal } {
    return {
      [lib.customFetch]: this.fetchImpl,
      [lib.allowInsecureRequests]: true,
      signal: AbortSignal.timeout(this.requestTimeoutMs),
    };
  }

  /**
   * A token request: `send` makes it with the options given (the DPoP handle among them when DPoP is on) and
   * processes the response. An authorization server that refuses it with use_dpop_nonce has sent the nonce to use,
   * which the handle keeps: it is made once more (RFC 9449 section 8). Failures are OAuthErrors for `step`.
   */
  tokenRequest<T>(lib: OAuthLibrary, step: Step, send: (options: TokenRequestOptions) => Promise<T>): Promise<T> {
    return this.call(lib, step, async () => {
      try {
        return await send(await this.tokenOptions(lib));
      } catch (error) {
        if (this.dpop === undefined || !lib.isDPoPNonceError(error)) throw error;
        return send(await this.tokenOptions(lib));
      }
    });
  }

  private async tokenOptions(lib: OAuthLibrary): Promise<TokenRequestOptions> {
    const options: TokenRequestOptions = this.requestOptions(lib);
    if (this.dpop !== undefined) options.DPoP = await this.dpop.handle(lib);
    return options;
  }

  /** Runs a library call, its failure turned into an OAuthError for `step`. */
  async call<T>(lib: OAuthLibrary, step: Step, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw translate(lib, error, step, (text) => this.secrets.redact(text));
    }
  }

  /** Stores a token endpoint response for the server; `requested` is the scope asked for (kept when none is granted). */
  async saveTokens(
    key: string,
    info: Pick<ResourceInfo, "resource" | "legacyOrigin">,
    as: AuthorizationServer,
    response: TokenEndpointResponse,
    requested: string | undefined,
    previousRefreshToken?: string,
  ): Promise<StoredTokens> {
    this.secrets.add(response.access_token, response.refresh_token);
    // A DPoP client takes the Bearer token a server may issue instead (and sends it as one); DPoP tokens only it.
    const dpop = response.token_type === "dpop" && this.dpop !== undefined;
    if (response.token_type !== "bearer" && !dpop) {
      throw new OAuthError(
        "invalid_token_response",
        `the token endpoint issued a token of type ${JSON.stringify(response.token_type)}; only Bearer tokens${this.dpop === undefined ? " (DPoP ones with the dpop option)" : " and DPoP ones"} are supported`,
        { url: as.token_endpoint },
      );
    }
    const tokens: StoredTokens = {
      access_token: response.access_token,
      token_type: dpop ? "dpop" : "bearer",
      issuer: as.issuer,
      resource: info.resource,
    };
    if (dpop) tokens.dpop_jkt = await this.dpop!.thumbprint(await oauthLibrary());
    if (info.legacyOrigin !== undefined) tokens.legacy_origin = info.legacyOrigin;
    // A refresh response without a new refresh token leaves the old one valid (RFC 6749 section 6).
    const refresh = response.refresh_token ?? previousRefreshToken;
    if (refresh !== undefined) tokens.refresh_token = refresh;
    if (typeof response.expires_in === "number") {
      tokens.obtained_at = Date.now();
      tokens.expires_at = tokens.obtained_at + response.expires_in * 1000;
    }
    const scope = typeof response.scope === "string" && response.scope.trim() !== "" ? response.scope : requested;
    if (scope !== undefined) tokens.scope = scope;
    await this.store.setTokens(key, tokens);
    return tokens;
  }
}

/** Options for a token request of oauth4webapi: the usual ones, and the DPoP handle when DPoP is on. */
export type TokenRequestOptions = Record<PropertyKey, unknown> & {
  signal: AbortSignal;
  DPoP?: Awaited<ReturnType<DPoPKeys["handle"]>>;
};

/** The Authorization scheme stored tokens are sent with. */
function schemeOf(tokens: StoredTokens): string {
  return tokens.token_type === "dpop" ? "DPoP" : "Bearer";
}

/** What stored tokens say about where they came from, for refreshing them in a process that has not discovered it yet. */
function infoOf(tokens: StoredTokens): ResourceInfo {
  const info: ResourceInfo = { resource: tokens.resource, issuer: tokens.issuer };
  if (tokens.legacy_origin !== undefined) info.legacyOrigin = tokens.legacy_origin;
  return info;
}

/** The store key of an MCP endpoint: its URL without fragment. */
export function serverKey(url: URL): string {
  return canonicalResource(url);
}

/** The union of space-separated scope lists, in first-seen order; undefined when empty. */
export function union(...lists: (string | undefined)[]): string | undefined {
  const out: string[] = [];
  for (const list of lists)
    for (const scope of list?.split(/\s+/) ?? []) if (scope !== "" && !out.includes(scope)) out.push(scope);
  return out.length === 0 ? undefined : out.join(" ");
}
