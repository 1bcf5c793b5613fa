// A 2026-07-28 client's cache of cacheable results: kept for their ttlMs, keyed by method and canonical params, dropped by the change notifications that make them stale.
import { isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import { limitOption } from "../../rpc/limits.js";
import { DISCOVER } from "./wire.js";

/** The requests whose complete results carry cache hints (the specification's list), the only ones kept. */
export const CACHEABLE_METHODS = Object.freeze([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  DISCOVER,
] as const);

const CACHEABLE: ReadonlySet<string> = new Set(CACHEABLE_METHODS);

const READ = "resources/read";

/** What each change notification makes stale, by notification method (resources/updated is handled per URI). */
const STALE_AFTER: { readonly [notification: string]: readonly string[] } = {
  "notifications/tools/list_changed": ["tools/list"],
  "notifications/prompts/list_changed": ["prompts/list"],
  "notifications/resources/list_changed": ["resources/list", "resources/templates/list"],
};
const UPDATED = "notifications/resources/updated";

export interface ResponseCacheOptions {
  /** Results kept at most; the least recently used goes first. Default 500; 0 keeps nothing; Infinity, no bound. */
  maxEntries?: number;
  /** The clock, ms (for tests); default Date.now. */
  now?: () => number;
}

interface Entry {
  readonly method: string;
  /** resources/read's `uri`, for resources/updated. */
  readonly uri: unknown;
  readonly result: JsonObject;
  /** Fresh while now() is below it. */
  readonly expires: number;
}

/**
 * The client's cache of cacheable results. Both scopes are kept: the cache belongs to one client, so one
 * authorization context, which is what "private" allows. A result is fresh for its `ttlMs` after it was stored, and
 * dropped sooner by the notification that says it changed; pages of a list are entries of their own (their cursor is
 * part of the key).
 *
 * Results are not copied: `store` deep-freezes the object it is given, in place, and `get` returns that same object,
 * so what the app was given first and every later hit are one immutable value (nothing can change a cached answer).
 */
export class ResponseCache {
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** By key; a Map iterates in insertion order, and a hit re-inserts, so the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();

  constructor(options: ResponseCacheOptions = {}) {
    this.maxEntries = limitOption("maxEntries", options.maxEntries, 500);
    const now = options.now ?? Date.now;
    if (typeof now !== "function") throw new TypeError("now must be a function");
    this.now = now;
  }

  /** How many results are held (fresh or not yet found stale). */
  get size(): number {
    return this.entries.size;
  }

  /** A fresh cached result for method+params (params' _meta ignored), or undefined. */
  get(method: string, params: JsonObject | undefined): JsonObject | undefined {
    const key = cacheKey(method, params);
    if (key === undefined) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (!(this.now() < entry.expires)) return undefined;
    this.entries.set(key, entry);
    return entry.result;
  }

  /**
   * Keeps a complete result per its ttlMs (integer ms; absent, 0 or negative or non-number: not kept) — callers never
   * store input_required results or results of retries that carried inputResponses. The result is deep-frozen in place.
   */
  store(method: string, params: JsonObject | undefined, result: JsonObject): void {
    if (this.maxEntries === 0 || !isPlainObject(result)) return;
    // The caller's promise, checked anyway: an interim round or a retry's answer would be served for the wrong request.
    if (result.resultType !== undefined && result.resultType !== "complete") return;
    const ttl = result.ttlMs;
    if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0) return;
    const key = cacheKey(method, params);
    if (key === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, { method, uri: params?.uri, result: deepFreeze(result), expires: this.now() + ttl });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  /**
   * Drops what a notification makes stale: tools/list_changed -> tools/list; prompts/list_changed -> prompts/list;
   * resources/list_changed -> resources/list and resources/templates/list; resources/updated {uri} -> resources/read of
   * that uri (every read when the notification has no string uri: it still says something changed). Methods are the
   * notifications' own (`notifications/tools/list_changed`...); any other method: nothing.
   */
  invalidate(notificationMethod: string, params: JsonObject | undefined): void {
    if (notificationMethod === UPDATED) {
      const uri = params?.uri;
      this.drop((e) => e.method === READ && (typeof uri !== "string" || e.uri === uri));
      return;
    }
    const stale = Object.hasOwn(STALE_AFTER, notificationMethod) ? STALE_AFTER[notificationMethod] : undefined;
    if (stale !== undefined) this.drop((e) => stale.includes(e.method));
  }

  clear(): void {
    this.entries.clear();
  }

  private drop(which: (entry: Entry) => boolean): void {
    for (const [key, entry] of this.entries) if (which(entry)) this.entries.delete(key);
  }
}

/**
 * Method and the params that pick the result: `_meta` left out (the envelope differs per request, never the answer),
 * object keys sorted at every depth, so the same request hits whatever order its keys came in. Undefined when the
 * method is not cacheable, when the request is an input-required retry (`inputResponses`, `requestState`: its answer
 * depends on more than the key), or when the params are no JSON.
 */
export function cacheKey(method: string, params: JsonObject | undefined): string | undefined {
  if (!CACHEABLE.has(method)) return undefined;
  const rest: JsonObject = {};
  if (params !== undefined) {
    if (!isPlainObject(params)) return undefined;
    for (const [name, value] of Object.entries(params)) if (name !== "_meta") rest[name] = value;
  }
  if (rest.inputResponses !== undefined || rest.requestState !== undefined) return undefined;
  try {
    return `${method}\n${JSON.stringify(rest, sortKeys)}`;
  } catch {
    // A cycle or a BigInt: no request the wire could carry, so nothing to key.
    return undefined;
  }
}

function sortKeys(_key: string, value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const sorted: JsonObject = {};
  for (const name of Object.keys(value).sort()) sorted[name] = value[name];
  return sorted;
}

function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  // `seen`, not Object.isFrozen: a shallowly frozen object may still hold unfrozen members; a cycle stops here too.
  if (typeof value !== "object" || value === null || seen.has(value)) return value;
  seen.add(value);
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member, seen);
  return value;
}
