// JWT access tokens (RFC 9068) checked with jose against the authorization server's keys: signature, issuer, audience, time, type.
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { DEFAULT_DISCOVERY_TIMEOUT_MS, discoverAuthorizationServer } from "./discovery.js";
import { loadPeer } from "../peers.js";
import {
  InvalidTokenError,
  acceptClaims,
  type TokenVerificationContext,
  type TokenVerifier,
  type VerifiedToken,
} from "./verifier.js";

export interface JwtVerifierOptions {
  /** The authorization server's issuer identifier; a token's `iss` must equal it. */
  issuer: string;
  /**
   * The audiences a token may name (`aud`). Default: the resource's canonical URL, as RFC 8707 resource indicators
   * put it there. `false` turns the check off: only for a server that checks the audience by other means.
   */
  audience?: string | readonly string[] | false;
  /** Where the issuer's keys are. Default: the `jwks_uri` of its metadata (RFC 8414, then OpenID Connect discovery). */
  jwksUri?: string;
  /** The keys themselves (a JWK Set, `{ keys: [...] }`), instead of fetching them: offline or pinned keys. */
  jwks?: { readonly keys: readonly Readonly<Record<string, unknown>>[] };
  /** Signing algorithms accepted. Default: the asymmetric ones (RS*, PS*, ES*, EdDSA); HS* and `none` never unless listed (`none` not at all). */
  algorithms?: readonly string[];
  /** Leeway for `exp` and `nbf`, seconds; default 5. */
  clockToleranceSeconds?: number;
  /**
   * The JOSE header `typ` a token must carry; default `at+jwt` (RFC 9068; `application/at+jwt` matches too), which
   * keeps ID tokens and other JWTs out. `false` accepts any, for authorization servers that issue plain `JWT`.
   */
  typ?: string | false;
  /** Timeout of each metadata and key-set request, ms; default 5,000. */
  timeoutMs?: number;
  /** How long fetched keys are used before they are fetched again, ms; default 600,000 (10 minutes). */
  jwksCacheMaxAgeMs?: number;
  /** After a fetch, how long a token with an unknown key id waits before it may trigger another one, ms; default 30,000. */
  jwksCooldownMs?: number;
  /** Default: the global fetch (metadata discovery and keys). */
  fetch?: typeof fetch;
}

export const DEFAULT_JWT_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 5;
export const DEFAULT_JWKS_CACHE_MAX_AGE_MS = 600_000;
export const DEFAULT_JWKS_COOLDOWN_MS = 30_000;

let jose: Promise<typeof import("jose")> | undefined;

/**
 * jose, loaded once; a failed load is tried again on the next call (the package may have been installed since).
 * Not exported, so no declaration file names jose's types: apps without it still typecheck.
 */
function loadJose(): Promise<typeof import("jose")> {
  jose ??= loadPeer("jose", "verifying JWT access tokens", () => import("jose")).catch((error: unknown) => {
    jose = undefined;
    throw error;
  });
  return jose;
}

/** A TokenVerifier for JWTs, which can be asked to find the issuer's keys before the first token arrives. */
export interface JwtVerifier extends TokenVerifier {
  /**
   * Loads jose and locates the keys (discovering the issuer's metadata when no jwksUri or jwks was given); rejects
   * with why not. Optional: the first token does the same. Call it at startup to fail fast on a wrong issuer.
   */
  prepare(): Promise<void>;
}

type KeyResolver = (header: unknown, token: unknown) => Promise<unknown>;

/** The key source failed (unreachable, bad key set): not the token's fault. */
class KeySourceError extends Error {
  constructor(cause: unknown) {
    super(`Cannot get the authorization server's keys: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "KeySourceError";
  }
}

/** What each jose failure about the token says to the client (error_description); anything else is not the token's fault. */
const TOKEN_FAULTS: Readonly<Record<string, string>> = {
  ERR_JWT_EXPIRED: "The access token expired",
  ERR_JOSE_ALG_NOT_ALLOWED: "The access token's signing algorithm is not accepted",
  ERR_JOSE_NOT_SUPPORTED: "The access token's signing algorithm is not supported",
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: "The access token's signature does not verify",
  ERR_JWS_INVALID: "The access token is not a valid signed JWT",
  ERR_JWT_INVALID: "The access token is not a valid JWT",
  ERR_JWKS_NO_MATCHING_KEY: "No key of the authorization server matches the access token",
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: "The access token does not say which key signed it",
};

const CLAIM_FAULTS: Readonly<Record<string, string>> = {
  nbf: "The access token is not valid yet",
  iss: "The access token was issued by an untrusted issuer",
  aud: "The access token was issued for another resource",
  typ: "The token is not an access token (JOSE header typ)",
  exp: "The access token has no valid expiry",
};

/**
 * A TokenVerifier for JWT access tokens. jose is loaded on the first token; keys come from `jwks`, `jwksUri` or
 * the issuer's metadata, and are cached (see the options). Every check is on by default: signature with an
 * allowed algorithm, `iss`, `aud` (this resource), `exp` (required), `nbf`, `typ`.
 */
export function jwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  if (typeof options?.issuer !== "string" || options.issuer === "") throw new TypeError("jwtVerifier needs the issuer");
  const issuer = options.issuer;
  const algorithms = [...(options.algorithms ?? DEFAULT_JWT_ALGORITHMS)];
  if (algorithms.length === 0 || algorithms.some((a) => typeof a !== "string" || a.toLowerCase() === "none")) {
    throw new TypeError("jwtVerifier: algorithms must name signing algorithms, and never none");
  }
  const tolerance = limitOption(
    "clockToleranceSeconds",
    options.clockToleranceSeconds,
    DEFAULT_CLOCK_TOLERANCE_SECONDS,
    86_400,
  );
  const timeoutMs = limitOption("timeoutMs", options.timeoutMs, DEFAULT_DISCOVERY_TIMEOUT_MS, MAX_TIMER_MS);
  const cacheMaxAge = limitOption(
    "jwksCacheMaxAgeMs",
    options.jwksCacheMaxAgeMs,
    DEFAULT_JWKS_CACHE_MAX_AGE_MS,
    Infinity,
  );
  const cooldown = limitOption("jwksCooldownMs", options.jwksCooldownMs, DEFAULT_JWKS_COOLDOWN_MS, Infinity);
  const typ = options.typ === undefined ? "at+jwt" : options.typ;
  const fetchImpl = options.fetch;

  let keys: Promise<KeyResolver> | undefined;
  const keyResolver = (): Promise<KeyResolver> => {
    keys ??= (async (): Promise<KeyResolver> => {
      const jose = await loadJose();
      if (options.jwks !== undefined)
        return jose.createLocalJWKSet(options.jwks as Parameters<typeof jose.createLocalJWKSet>[0]) as KeyResolver;
      const uri =
        options.jwksUri ?? (await discoverAuthorizationServer(issuer, { timeoutMs, fetch: fetchImpl })).jwks_uri;
      if (typeof uri !== "string") throw new Error(`The metadata of ${issuer} has no jwks_uri`);
      const remoteOptions: Parameters<typeof jose.createRemoteJWKSet>[1] = {
        timeoutDuration: timeoutMs,
        cacheMaxAge,
        cooldownDuration: cooldown,
      };
      if (fetchImpl !== undefined) remoteOptions[jose.customFetch] = fetchImpl;
      return jose.createRemoteJWKSet(new URL(uri), remoteOptions) as KeyResolver;
    })();
    // A failed discovery is tried again by the next token rather than remembered.
    keys.catch(() => (keys = undefined));
    return keys;
  };

  return {
    async prepare(): Promise<void> {
      const resolver = await keyResolver();
      // A remote key set is fetched now too, so a wrong jwks_uri shows at startup rather than on the first call.
      await (resolver as { reload?: () => Promise<void> }).reload?.();
    },
    async verify(token: string, context: TokenVerificationContext): Promise<VerifiedToken> {
      const jose = await loadJose();
      let resolve: KeyResolver;
      try {
        resolve = await keyResolver();
      } catch (error) {
        throw new KeySourceError(error);
      }
      const getKey = async (header: unknown, input: unknown): Promise<unknown> => {
        try {
          return await resolve(header, input);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code === "ERR_JWKS_NO_MATCHING_KEY" || code === "ERR_JWKS_MULTIPLE_MATCHING_KEYS") throw error;
          throw new KeySourceError(error);
        }
      };
      let payload: Record<string, unknown>;
      try {
        const verified = await jose.jwtVerify(token, getKey as Parameters<typeof jose.jwtVerify>[1], {
          issuer,
          algorithms,
          clockTolerance: tolerance,
          requiredClaims: ["exp"],
          ...(typ === false ? {} : { typ }),
        });
        payload = verified.payload as Record<string, unknown>;
      } catch (error) {
        if (error instanceof KeySourceError) throw error;
        throw new InvalidTokenError(describeFault(error));
      }
      return acceptClaims(payload, options.audience, context);
    },
  };
}

/** The client-facing reason for a verification failure; never the library's message, which may quote claims. */
function describeFault(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED") {
    const claim = (error as { claim?: unknown }).claim;
    return (
      (typeof claim === "string" ? CLAIM_FAULTS[claim] : undefined) ?? "The access token's claims are not acceptable"
    );
  }
  if (typeof code === "string" && TOKEN_FAULTS[code] !== undefined) return TOKEN_FAULTS[code]!;
  // jose throws TypeError for claims of the wrong type ("exp" a string...).
  return "The access token is malformed";
}
