// The interactive OAuth client: registration, the authorization code flow with PKCE and state, and the redirect callback.
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { OAuthAuthorizer } from "./authorizer.js";
import { clientAuthentication } from "./client-auth.js";
import { OAuthEngine, union, type Acquisition, type Grant } from "./engine.js";
import { isAssumedMetadata } from "./discovery.js";
import { OAuthError } from "./errors.js";
import type { SigningKeyInput } from "./keys.js";
import { oauthLibrary, type AuthorizationServer, type ClientAuth, type OAuthLibrary, type Step } from "./library.js";
import type { OAuthClientInformation, OAuthStore, PendingAuthorization } from "./store.js";
import { applicationTypeOf, checkClientMetadataUrl, checkRedirectUri, oauthUrl } from "./urls.js";
import { DEFAULT_AUTHORIZATION_TIMEOUT_MS, type OAuthCommonOptions, type TokenEndpointAuthMethod } from "./options.js";

/** The client's metadata (RFC 7591): sent with dynamic registration, and what a client ID metadata document holds. */
export interface OAuthClientMetadata {
  /**
   * Where the authorization server sends the user back: https, http on a loopback host, or a private-use scheme
   * (`com.example.app:/callback`, RFC 8252). The first is used.
   */
  redirect_uris: string[];
  /**
   * The OIDC application type sent with dynamic registration (SEP-837): "native" or "web". Default: "native" when
   * every redirect URI is http on a loopback host or a private-use scheme, else "web". Anything else is OAuthError
   * "invalid_options" when the client is made.
   */
  application_type?: "native" | "web";
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  /** Default ["authorization_code", "refresh_token"]. */
  grant_types?: string[];
  /** Default ["code"]. */
  response_types?: string[];
  /** Default: "none" when the server supports it (a public client), else client_secret_basic or _post. */
  token_endpoint_auth_method?: TokenEndpointAuthMethod;
  scope?: string;
  contacts?: string[];
  tos_uri?: string;
  policy_uri?: string;
  software_id?: string;
  software_version?: string;
  /** Other RFC 7591 members, sent as given. */
  [member: string]: unknown;
}

/** What the app supplies: who the client is, how to send the user to authorize, where to keep state. */
export interface OAuthClientProvider {
  readonly clientMetadata: OAuthClientMetadata;
  /**
   * The https URL (with a path) where this client's metadata document is published; used as the client_id with
   * servers that support client ID metadata documents, before dynamic registration.
   */
  readonly clientMetadataUrl?: string;
  /**
   * Pre-registered credentials: one client, or per issuer (a function returning undefined for issuers it has none
   * for). One client with a `client_secret`, or used with `privateKey`, belongs to one authorization server: the
   * `issuer` option must then name it, and no other is used.
   */
  readonly clientInformation?: OAuthClientInformation | ((issuer: string) => OAuthClientInformation | undefined);
  /**
   * Sends the user to `url` (opens a browser, prints it, redirects the page). The authorization server then
   * redirects to the redirect URI with `code` and `state`: hand those to {@link OAuthClient.finishAuthorization}.
   */
  redirectToAuthorization(url: URL): void | Promise<void>;
  /** Overrides the `store` option. */
  readonly store?: OAuthStore;
}

export interface OAuthClientOptions extends OAuthCommonOptions {
  /**
   * How long a request waits for the user to come back through finishAuthorization, ms; default 300 000 (5 min).
   * Also how long a pending authorization's state and verifier are kept.
   */
  authorizationTimeoutMs?: number;
  /**
   * true (default): the request that needed authorization waits for finishAuthorization and then goes on. false:
   * it fails at once with OAuthError "authorization_required"; retry it after finishAuthorization (a web app
   * whose page navigates away to the authorization server).
   */
  awaitAuthorization?: boolean;
  /** Ask for `offline_access` (so a refresh token) when the authorization server lists it; default true. */
  offlineAccess?: boolean;
  /** A key for private_key_jwt at the token endpoint (with a metadata document URL or pre-registered client). */
  privateKey?: SigningKeyInput;
}

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * An OAuth 2.1 client for MCP servers acting for a user: give it to StreamableHttpClientTransport's
 * `authorization` option. On a 401 it discovers the authorization server, registers (pre-registered credentials,
 * else a client ID metadata document, else dynamic registration), sends the user to authorize with PKCE S256,
 * `state` and `resource`, and, once {@link finishAuthorization} has the code, exchanges it and retries.
 */
export class OAuthClient extends OAuthAuthorizer {
  private readonly flow: AuthorizationCodeGrant;
  private readonly oauth: OAuthEngine;

  constructor(provider: OAuthClientProvider, options: OAuthClientOptions = {}) {
    const flow = new AuthorizationCodeGrant(provider, options);
    const engine = new OAuthEngine({ ...options, store: provider.store ?? options.store }, flow);
    super(engine);
    this.flow = flow;
    this.oauth = engine;
  }

  /**
   * The redirect callback: `code` and `state` from the redirect URI's query (or the whole callback URL or its
   * query, which also carries an error and `iss` when there are). Exchanges the code for tokens, stores them and
   * lets the waiting request go on. Rejects with OAuthError: unknown_state (not issued here, or expired),
   * authorization_denied (the server sent an error), invalid_callback (no code), token_request_failed...
   */
  finishAuthorization(codeOrCallback: string | URL | URLSearchParams, state?: string): Promise<void> {
    return this.flow.finish(this.oauth, codeOrCallback, state);
  }
}

/** The authorization code grant with PKCE: registration, the user's trip to the authorization server, the exchange. */
class AuthorizationCodeGrant implements Grant {
  readonly unattended = false;
  private readonly provider: OAuthClientProvider;
  private readonly redirectUri: string;
  private readonly authorizationTimeoutMs: number;
  private readonly awaitAuthorization: boolean;
  private readonly offlineAccess: boolean;
  private readonly privateKey: SigningKeyInput | undefined;
  private readonly waiters = new Map<string, Waiter>();

  constructor(provider: OAuthClientProvider, options: OAuthClientOptions) {
    const uris = provider.clientMetadata.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0)
      throw new OAuthError("invalid_redirect_uri", "clientMetadata.redirect_uris must list at least one redirect URI");
    for (const uri of uris) checkRedirectUri(uri);
    const applicationType = provider.clientMetadata.application_type;
    if (applicationType !== undefined && applicationType !== "native" && applicationType !== "web")
      throw new OAuthError("invalid_options", 'clientMetadata.application_type must be "native" or "web"');
    if (provider.clientMetadataUrl !== undefined) checkClientMetadataUrl(provider.clientMetadataUrl);
    const configured = provider.clientInformation;
    const confidential =
      typeof configured === "object" &&
      configured !== null &&
      (configured.client_secret !== undefined || options.privateKey !== undefined);
    if (confidential && options.issuer === undefined) {
      throw new OAuthError(
        "invalid_options",
        "pre-registered confidential credentials (clientInformation with a client_secret or a privateKey) need issuer: the issuer identifier of the authorization server they belong to (they are sent to no other); or give clientInformation as a function of the issuer",
      );
    }
    this.provider = provider;
    this.redirectUri = uris[0]!;
    this.authorizationTimeoutMs = limitOption(
      "authorizationTimeoutMs",
      options.authorizationTimeoutMs,
      DEFAULT_AUTHORIZATION_TIMEOUT_MS,
      MAX_TIMER_MS,
    );
    this.awaitAuthorization = options.awaitAuthorization ?? true;
    this.offlineAccess = options.offlineAccess ?? true;
    this.privateKey = options.privateKey;
  }

  async finish(engine: OAuthEngine, codeOrCallback: string | URL | URLSearchParams, state?: string): Promise<void> {
    const params =
      typeof codeOrCallback === "string"
        ? new URLSearchParams({ code: codeOrCallback, ...(state === undefined ? {} : { state }) })
        : new URLSearchParams(codeOrCallback instanceof URL ? codeOrCallback.searchParams : codeOrCallback);
    const issued = params.get("state");
    const pending = issued === null ? undefined : await engine.store.getPending(issued);
    if (issued === null || pending === undefined) {
      throw new OAuthError(
        "unknown_state",
        issued === null
          ? "the authorization callback has no state"
          : "the authorization callback's state was not issued by this client, was used already or has expired",
      );
    }
    await engine.store.setPending(issued, undefined);
    const waiter = this.waiters.get(issued);
    this.waiters.delete(issued);
    engine.secrets.add(params.get("code") ?? undefined, pending.code_verifier);
    try {
      await this.exchange(engine, params, issued, pending);
      waiter?.resolve();
    } catch (error) {
      const clean = engine.secrets.scrub(error);
      waiter?.reject(clean);
      throw clean;
    }
  }

  private async exchange(
    engine: OAuthEngine,
    params: URLSearchParams,
    state: string,
    pending: PendingAuthorization,
  ): Promise<void> {
    const lib = await oauthLibrary();
    const info =
      pending.legacy_origin === undefined
        ? { resource: pending.resource, issuer: pending.issuer }
        : { resource: pending.resource, issuer: pending.issuer, legacyOrigin: pending.legacy_origin };
    const as = await engine.authorizationServer(lib, info);
    const { client, auth } = await this.clientFor(engine, lib, as);
    if (client.client_id !== pending.client_id) {
      throw new OAuthError(
        "unknown_state",
        "the client registration changed while the user was authorizing; authorize again",
      );
    }
    const callback: Step = { kind: "callback", what: "the authorization response" };
    const validated = await engine.call(lib, callback, async () => lib.validateAuthResponse(as, client, params, state));
    if (!validated.get("code")) throw new OAuthError("invalid_callback", "the authorization callback has no code");
    const token: Step = { kind: "token", what: "the token endpoint", url: as.token_endpoint };
    const response = await engine.tokenRequest(lib, token, async (options) => {
      const sent = await lib.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        validated,
        pending.redirect_uri,
        pending.code_verifier,
        { ...options, additionalParameters: { resource: pending.resource } },
      );
      return lib.processAuthorizationCodeResponse(as, client, sent);
    });
    await engine.saveTokens(pending.server_url, info, as, response, pending.scope);
  }

  async acquire(engine: OAuthEngine, { lib, serverKey, info, as, scope }: Acquisition): Promise<void> {
    if (as.authorization_endpoint === undefined) {
      throw new OAuthError(
        "invalid_authorization_server_metadata",
        `the authorization server ${as.issuer} has no authorization_endpoint`,
      );
    }
    // Spec: refuse to go on unless the metadata advertises S256. Only the 2025-03-26 default endpoints, which
    // come with no metadata at all, are taken on trust (PKCE is still used with them).
    if (!isAssumedMetadata(as) && !(as.code_challenge_methods_supported ?? []).includes("S256")) {
      throw new OAuthError(
        "pkce_not_supported",
        `the authorization server ${as.issuer} does not advertise PKCE with S256 (code_challenge_methods_supported); refusing to authorize`,
      );
    }
    // SEP-2207: a refresh token is asked for with offline_access, and only where the server lists that scope.
    const requested =
      this.offlineAccess && scope !== undefined && (as.scopes_supported ?? []).includes("offline_access")
        ? union(scope, "offline_access")
        : scope;
    const registration = await this.registration(engine, lib, as);
    const verifier = lib.generateRandomCodeVerifier();
    const state = lib.generateRandomState();
    engine.secrets.add(verifier);
    const url = oauthUrl(as.authorization_endpoint, "the authorization endpoint", engine.allowInsecureHttp);
    const query = url.searchParams;
    query.set("response_type", "code");
    query.set("client_id", registration.client_id);
    query.set("redirect_uri", this.redirectUri);
    query.set("code_challenge", await lib.calculatePKCECodeChallenge(verifier));
    query.set("code_challenge_method", "S256");
    query.set("state", state);
    query.set("resource", info.resource);
    if (requested !== undefined) query.set("scope", requested);

    const pending: PendingAuthorization = {
      code_verifier: verifier,
      redirect_uri: this.redirectUri,
      client_id: registration.client_id,
      server_url: serverKey,
      issuer: info.issuer,
      resource: info.resource,
      expires_at: Date.now() + this.authorizationTimeoutMs,
    };
    if (requested !== undefined) pending.scope = requested;
    if (info.legacyOrigin !== undefined) pending.legacy_origin = info.legacyOrigin;
    await engine.store.setPending(state, pending);

    const done = this.awaitAuthorization ? this.wait(engine, state) : undefined;
    try {
      await this.provider.redirectToAuthorization(url);
    } catch (error) {
      this.abandon(engine, state);
      throw error;
    }
    if (done === undefined) {
      throw new OAuthError(
        "authorization_required",
        `the user was sent to ${url.origin} to authorize; call finishAuthorization with the callback, then retry`,
      );
    }
    await done;
  }

  /** Settles when finishAuthorization completes for `state`, or fails after the timeout. */
  private wait(engine: OAuthEngine, state: string): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.abandon(engine, state);
        reject(
          new OAuthError(
            "authorization_timeout",
            `the user did not complete the authorization within ${this.authorizationTimeoutMs} ms`,
          ),
        );
      }, this.authorizationTimeoutMs);
      // A pending authorization must not keep a process alive that has nothing else to do.
      (timer as { unref?: () => void }).unref?.();
      this.waiters.set(state, {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
    // The redirect callback may settle it before anyone awaits it.
    done.catch(() => undefined);
    return done;
  }

  private abandon(engine: OAuthEngine, state: string): void {
    this.waiters.delete(state);
    void Promise.resolve(engine.store.setPending(state, undefined)).catch(() => undefined);
  }

  async clientFor(
    engine: OAuthEngine,
    lib: OAuthLibrary,
    as: AuthorizationServer,
  ): Promise<{ client: { client_id: string }; auth: ClientAuth }> {
    const registration = await this.registration(engine, lib, as);
    engine.secrets.add(registration.client_secret);
    return {
      client: { client_id: registration.client_id },
      auth: await clientAuthentication(lib, as, registration, this.privateKey),
    };
  }

  /** The spec's order: pre-registered, then a client ID metadata document where supported, then dynamic registration. */
  private async registration(
    engine: OAuthEngine,
    lib: OAuthLibrary,
    as: AuthorizationServer,
  ): Promise<OAuthClientInformation> {
    const configured = this.provider.clientInformation;
    const preRegistered = typeof configured === "function" ? configured(as.issuer) : configured;
    if (preRegistered !== undefined) return preRegistered;
    const documentUrl = this.provider.clientMetadataUrl;
    if (documentUrl !== undefined && as.client_id_metadata_document_supported === true) {
      return {
        client_id: documentUrl,
        token_endpoint_auth_method: this.privateKey === undefined ? "none" : "private_key_jwt",
      };
    }
    const stored = await engine.store.getClient(as.issuer);
    const expired =
      stored?.client_secret_expires_at !== undefined &&
      stored.client_secret_expires_at !== 0 &&
      stored.client_secret_expires_at * 1000 <= Date.now();
    if (stored !== undefined && !expired) return stored;
    if (as.registration_endpoint === undefined) {
      throw new OAuthError(
        "registration_unavailable",
        `the authorization server ${as.issuer} offers no dynamic client registration${documentUrl === undefined ? "" : " and no client ID metadata documents"}; configure pre-registered client credentials (clientInformation)`,
      );
    }
    return this.register(engine, lib, as);
  }

  private async register(
    engine: OAuthEngine,
    lib: OAuthLibrary,
    as: AuthorizationServer,
  ): Promise<OAuthClientInformation> {
    const wanted = this.provider.clientMetadata;
    const supported = as.token_endpoint_auth_methods_supported;
    const method =
      wanted.token_endpoint_auth_method ??
      (supported === undefined || supported.includes("none")
        ? "none"
        : supported.includes("client_secret_basic")
          ? "client_secret_basic"
          : supported.includes("client_secret_post")
            ? "client_secret_post"
            : "none");
    const metadata = {
      ...wanted,
      // OIDC servers default to "web", which they may refuse with loopback or private-use redirect URIs (SEP-837).
      application_type: wanted.application_type ?? applicationTypeOf(wanted.redirect_uris),
      redirect_uris: wanted.redirect_uris,
      grant_types: wanted.grant_types ?? ["authorization_code", "refresh_token"],
      response_types: wanted.response_types ?? ["code"],
      token_endpoint_auth_method: method,
    };
    const step: Step = { kind: "registration", what: "the registration endpoint", url: as.registration_endpoint };
    const registered = await engine.call(lib, step, async () => {
      const sent = await lib.dynamicClientRegistrationRequest(
        as,
        metadata as Parameters<OAuthLibrary["dynamicClientRegistrationRequest"]>[1],
        engine.requestOptions(lib),
      );
      return lib.processDynamicClientRegistrationResponse(await withSecretExpiry(sent));
    });
    const information: OAuthClientInformation = { client_id: registered.client_id };
    if (typeof registered.client_secret === "string") information.client_secret = registered.client_secret;
    information.token_endpoint_auth_method =
      typeof registered.token_endpoint_auth_method === "string" ? registered.token_endpoint_auth_method : method;
    if (typeof registered.client_secret_expires_at === "number")
      information.client_secret_expires_at = registered.client_secret_expires_at;
    engine.secrets.add(information.client_secret);
    await engine.store.setClient(as.issuer, information);
    return information;
  }
}

/**
 * RFC 7591 requires client_secret_expires_at beside an issued client_secret, and the library holds servers to
 * it; many servers leave it out. Read as 0 (the secret does not expire), so their registrations stay usable.
 */
async function withSecretExpiry(response: Response): Promise<Response> {
  if (response.status !== 201) return response;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  if (typeof body !== "object" || body === null || Array.isArray(body)) return response;
  const record = body as Record<string, unknown>;
  if (typeof record.client_secret !== "string" || record.client_secret_expires_at !== undefined) return response;
  return new Response(JSON.stringify({ ...record, client_secret_expires_at: 0 }), {
    status: response.status,
    headers: response.headers,
  });
}
