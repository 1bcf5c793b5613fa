// RFC 7662 token introspection: the authorization server says whether a token is active; answers are cached briefly.
import { isPlainObject } from "../../jsonrpc.js";
import { MAX_TIMER_MS, limitOption } from "../../limits.js";
import {
  InvalidTokenError,
  acceptClaims,
  type TokenVerificationContext,
  type TokenVerifier,
  type VerifiedToken,
} from "./verifier.js";

export interface IntrospectionVerifierOptions {
  /** The authorization server's introspection endpoint (its metadata's `introspection_endpoint`). */
  endpoint: string;
  /** This resource server's client credentials at the authorization server. */
  clientId: string;
  clientSecret: string;
  /** How they are sent; default `client_secret_basic` (HTTP Basic, RFC 6749 2.3.1). */
  authMethod?: "client_secret_basic" | "client_secret_post";
  /** The audiences an active token must name (`aud`); default this resource's URL. `false` turns the check off. */
  audience?: string | readonly string[] | false;
  /** When set, the answer's `iss` must equal it. */
  issuer?: string;
  /**
   * How long an active answer is reused for the same token, ms (never past the token's `exp`); default 30,000.
   * A revoked token stays accepted for at most this long. 0 asks every time. Inactive answers are not kept.
   */
  cacheTtlMs?: number;
  /** Most answers kept; the oldest go first. Default 10,000. */
  maxCacheEntries?: number;
  /** Per introspection request, ms; default 5,000. */
  timeoutMs?: number;
  /** Leeway for `exp` and `nbf`, seconds; default 5. */
  clockToleranceSeconds?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_INTROSPECTION_CACHE_TTL_MS = 30_000;
export const DEFAULT_INTROSPECTION_CACHE_ENTRIES = 10_000;

interface Cached {
  readonly token: VerifiedToken;
  /** Date.now() after which the answer is asked again. */
  readonly until: number;
}

/** A TokenVerifier asking the authorization server (RFC 7662) about each token it has not seen recently. */
export function introspectionVerifier(options: IntrospectionVerifierOptions): TokenVerifier {
  for (const key of ["endpoint", "clientId", "clientSecret"] as const) {
    if (typeof options?.[key] !== "string" || options[key] === "")
      throw new TypeError(`introspectionVerifier needs ${key}`);
  }
  const endpoint = new URL(options.endpoint).href;
  const method = options.authMethod ?? "client_secret_basic";
  if (method !== "client_secret_basic" && method !== "client_secret_post")
    throw new TypeError(`introspectionVerifier: unknown authMethod ${String(method)}`);
  const ttl = limitOption("cacheTtlMs", options.cacheTtlMs, DEFAULT_INTROSPECTION_CACHE_TTL_MS, MAX_TIMER_MS);
  const maxEntries = limitOption("maxCacheEntries", options.maxCacheEntries, DEFAULT_INTROSPECTION_CACHE_ENTRIES);
  const timeoutMs = limitOption("timeoutMs", options.timeoutMs, 5_000, MAX_TIMER_MS);
  const tolerance = limitOption("clockToleranceSeconds", options.clockToleranceSeconds, 5, 86_400);
  const fetchImpl = options.fetch ?? fetch;
  const cache = new Map<string, Cached>();

  const ask = async (token: string): Promise<Record<string, unknown>> => {
    const form = new URLSearchParams({ token, token_type_hint: "access_token" });
    const headers: Record<string, string> = {
      accept: "application/json",
      "content-type": "application/x-www-form-urlencoded",
    };
    if (method === "client_secret_basic") {
      headers.authorization = `Basic ${btoa(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`)}`;
    } else {
      form.set("client_id", options.clientId);
      form.set("client_secret", options.clientSecret);
    }
    let response: Response;
    try {
      response = await fetchImpl(endpoint, {
        method: "POST",
        headers,
        body: form.toString(),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new Error(
        `Token introspection at ${endpoint} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`Token introspection at ${endpoint} answered HTTP ${response.status}`);
    }
    const answer: unknown = await response.json().catch(() => undefined);
    if (!isPlainObject(answer) || typeof answer.active !== "boolean")
      throw new Error(`Token introspection at ${endpoint} answered something other than an introspection response`);
    return answer;
  };

  return {
    async verify(token: string, context: TokenVerificationContext): Promise<VerifiedToken> {
      const key = ttl > 0 && maxEntries > 0 ? await digest(token) : undefined;
      const now = Date.now();
      const hit = key === undefined ? undefined : cache.get(key);
      if (hit !== undefined) {
        if (hit.until > now) return hit.token;
        cache.delete(key!);
      }
      const answer = await ask(token);
      if (answer.active !== true) throw new InvalidTokenError("The access token is not active");
      const seconds = Math.floor(now / 1000);
      if (typeof answer.exp === "number" && answer.exp + tolerance <= seconds)
        throw new InvalidTokenError("The access token expired");
      if (typeof answer.nbf === "number" && answer.nbf - tolerance > seconds)
        throw new InvalidTokenError("The access token is not valid yet");
      if (options.issuer !== undefined && answer.iss !== options.issuer)
        throw new InvalidTokenError("The access token was issued by an untrusted issuer");
      const type = answer.token_type;
      if (type !== undefined && !(typeof type === "string" && /^(bearer|access_token)$/i.test(type))) {
        throw new InvalidTokenError("The token is not a bearer access token");
      }
      const verified = acceptClaims(answer, options.audience, context);
      if (key !== undefined && maxEntries > 0) {
        const expires = typeof answer.exp === "number" ? answer.exp * 1000 : Infinity;
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(key, { token: verified, until: Math.min(now + ttl, expires) });
      }
      return verified;
    },
  };
}

/** RFC 6749 2.3.1: the client id and secret are form-encoded before they go into the Basic credentials. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** The cache key of a token: its SHA-256, so the cache never holds a usable token. */
async function digest(token: string): Promise<string> {
  const bytes = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
