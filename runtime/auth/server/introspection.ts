// RFC 7662 token introspection: the authorization server says whether a token is active; answers are cached briefly, asks bounded.
import { isPlainObject } from "../../rpc/jsonrpc.js";
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { IntrospectionSlots } from "./introspection-slots.js";
import { tokenDigest } from "./token-digest.js";
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
   * A revoked token stays accepted for at most this long (unless ProtectedResource.revoke drops it). 0 asks every time.
   */
  cacheTtlMs?: number;
  /**
   * How long a refusal (inactive, expired, another issuer...) is reused for the same token, ms; default 5,000.
   * A client retrying with a dead token, or many requests presenting one, then cost one question per this
   * period. A token the authorization server starts to know is refused for at most this long. 0 asks every time.
   */
  negativeCacheTtlMs?: number;
  /** Most answers kept, active and refused together; refused ones go first, then the oldest. Default 10,000. */
  maxCacheEntries?: number;
  /**
   * Introspection requests in flight at once; default 16. Requests for a token already being asked about wait for
   * that answer instead of asking again. Infinity: no bound.
   */
  maxConcurrentIntrospections?: number;
  /**
   * Tokens waiting for a free introspection slot, default 256; each waits at most `timeoutMs`. A token that finds
   * the wait full, or waits longer, is answered 503 with Retry-After (the token may be fine: it was not checked).
   * 0: no waiting; Infinity: no bound on the number.
   */
  maxQueuedIntrospections?: number;
  /** Per introspection request, and the longest wait for a slot, ms; default 5,000. */
  timeoutMs?: number;
  /** Leeway for `exp` and `nbf`, seconds; default 5. */
  clockToleranceSeconds?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_INTROSPECTION_CACHE_TTL_MS = 30_000;
export const DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS = 5_000;
export const DEFAULT_INTROSPECTION_CACHE_ENTRIES = 10_000;
export const DEFAULT_MAX_CONCURRENT_INTROSPECTIONS = 16;
export const DEFAULT_MAX_QUEUED_INTROSPECTIONS = 256;

/** An introspection answer kept for its token. */
interface Cached {
  readonly answer: Readonly<Record<string, unknown>>;
  /** Date.now() after which the answer is asked again. */
  readonly until: number;
  /** An active answer's claims as accepted for a resource, made on its first use (a hit then costs a lookup). */
  accepted?: { readonly resource: string; readonly token: VerifiedToken };
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
  const negativeTtl = limitOption(
    "negativeCacheTtlMs",
    options.negativeCacheTtlMs,
    DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS,
    MAX_TIMER_MS,
  );
  const maxEntries = limitOption("maxCacheEntries", options.maxCacheEntries, DEFAULT_INTROSPECTION_CACHE_ENTRIES);
  const maxConcurrent = limitOption(
    "maxConcurrentIntrospections",
    options.maxConcurrentIntrospections,
    DEFAULT_MAX_CONCURRENT_INTROSPECTIONS,
    Infinity,
    1,
  );
  const maxQueued = limitOption(
    "maxQueuedIntrospections",
    options.maxQueuedIntrospections,
    DEFAULT_MAX_QUEUED_INTROSPECTIONS,
  );
  const timeoutMs = limitOption("timeoutMs", options.timeoutMs, 5_000, MAX_TIMER_MS);
  const tolerance = limitOption("clockToleranceSeconds", options.clockToleranceSeconds, 5, 86_400);
  const fetchImpl = options.fetch ?? fetch;
  const cache = new AnswerCache(maxEntries);
  const slots = new IntrospectionSlots(maxConcurrent, maxQueued, timeoutMs);
  /** The questions out now, by token digest: a second request for the same token waits for the same answer. */
  const asking = new Map<string, Promise<Readonly<Record<string, unknown>>>>();

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

  /** Why an answer does not vouch for its token whatever the resource; undefined when it does. */
  const refusal = (answer: Readonly<Record<string, unknown>>, now: number): string | undefined => {
    if (answer.active !== true) return "The access token is not active";
    const seconds = Math.floor(now / 1000);
    if (typeof answer.exp === "number" && answer.exp + tolerance <= seconds) return "The access token expired";
    if (typeof answer.nbf === "number" && answer.nbf - tolerance > seconds) return "The access token is not valid yet";
    if (options.issuer !== undefined && answer.iss !== options.issuer)
      return "The access token was issued by an untrusted issuer";
    const type = answer.token_type;
    if (type !== undefined && !(typeof type === "string" && /^(bearer|access_token)$/i.test(type)))
      return "The token is not a bearer access token";
    return undefined;
  };

  /** Asks the authorization server (one question per token at a time, within the slots) and keeps the answer. */
  const answerFor = (key: string, token: string): Promise<Readonly<Record<string, unknown>>> => {
    const out = asking.get(key);
    if (out !== undefined) return out;
    const question = slots
      .run(() => ask(token))
      .then((answer) => {
        const now = Date.now();
        if (refusal(answer, now) === undefined) {
          const expires = typeof answer.exp === "number" ? answer.exp * 1000 : Infinity;
          if (ttl > 0) cache.keep(key, { answer, until: Math.min(now + ttl, expires) }, true);
        } else if (negativeTtl > 0) {
          cache.keep(key, { answer, until: now + negativeTtl }, false);
        }
        return answer;
      })
      .finally(() => asking.delete(key));
    asking.set(key, question);
    return question;
  };

  return {
    async verify(token: string, context: TokenVerificationContext): Promise<VerifiedToken> {
      const key = await tokenDigest(token);
      const hit = cache.fresh(key, Date.now());
      // An active answer is kept no longer than its exp and was valid when kept, so only a refused one (whose nbf may
      // have come since) is checked again.
      if (hit?.active === true && hit.entry.accepted?.resource === context.resource) return hit.entry.accepted.token;
      const answer = hit?.entry.answer ?? (await answerFor(key, token));
      if (hit?.active !== true) {
        const refused = refusal(answer, Date.now());
        if (refused !== undefined) throw new InvalidTokenError(refused);
      }
      const verified = acceptClaims(answer, options.audience, context);
      if (hit?.active === true) hit.entry.accepted = { resource: context.resource, token: verified };
      return verified;
    },
    async forget(token: string): Promise<void> {
      cache.drop(await tokenDigest(token));
    },
  };
}

/**
 * Introspection answers by token digest, active and refused ones apart so that a flood of refused tokens pushes
 * out refused ones first: both count against one bound, and when it is reached the oldest refused answer goes,
 * else the oldest active one.
 */
class AnswerCache {
  private readonly active = new Map<string, Cached>();
  private readonly refused = new Map<string, Cached>();

  constructor(private readonly maxEntries: number) {}

  /** The entry kept for the token while it is fresh, and whether its answer was active. */
  fresh(key: string, now: number): { entry: Cached; active: boolean } | undefined {
    for (const map of [this.active, this.refused]) {
      const entry = map.get(key);
      if (entry === undefined) continue;
      if (entry.until > now) return { entry, active: map === this.active };
      map.delete(key);
    }
    return undefined;
  }

  keep(key: string, entry: Cached, active: boolean): void {
    if (this.maxEntries === 0) return;
    this.drop(key);
    if (this.active.size + this.refused.size >= this.maxEntries) {
      const from = this.refused.size > 0 ? this.refused : this.active;
      from.delete(from.keys().next().value!);
    }
    (active ? this.active : this.refused).set(key, entry);
  }

  drop(key: string): void {
    this.active.delete(key);
    this.refused.delete(key);
  }
}

/** RFC 6749 2.3.1: the client id and secret are form-encoded before they go into the Basic credentials. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
