// W3C Trace Context (traceparent, tracestate) and W3C Baggage as MCP carries them in `_meta`: parsing, formatting, checks.
import { isPlainObject, type JsonObject } from "../rpc/jsonrpc.js";
import type { TraceContext } from "../rpc/peer.js";
import { limitOption } from "../rpc/limits.js";

export type { TraceContext } from "../rpc/peer.js";

/** The `_meta` keys MCP reserves for trace context (SEP-414), named as the W3C headers are. */
export const TRACEPARENT = "traceparent";
export const TRACESTATE = "tracestate";
export const BAGGAGE = "baggage";

/** The longest tracestate read by default: W3C asks to propagate at least 512 characters of it. */
export const DEFAULT_MAX_TRACESTATE_LENGTH = 512;
/** The largest baggage read by default, in bytes, and its most list-members (W3C: at least 8192 and 64). */
export const DEFAULT_MAX_BAGGAGE_BYTES = 8192;
export const DEFAULT_MAX_BAGGAGE_MEMBERS = 180;
/** W3C Trace Context: a tracestate holds at most 32 list-members. */
const MAX_TRACESTATE_MEMBERS = 32;

/** How much trace context is read from a request; a longer value is ignored as a whole. */
export interface TraceContextLimits {
  /** Characters of `tracestate`; default 512 (0 ignores every tracestate). */
  readonly maxTracestateLength?: number;
  /** Bytes of `baggage` (UTF-8); default 8192 (0 ignores every baggage). */
  readonly maxBaggageBytes?: number;
  /** List-members of `baggage`; default 180. */
  readonly maxBaggageMembers?: number;
}

/** The limits with their defaults filled in, checked once where the app passed them. */
export interface ResolvedTraceLimits {
  readonly maxTracestateLength: number;
  readonly maxBaggageBytes: number;
  readonly maxBaggageMembers: number;
}

export const DEFAULT_TRACE_LIMITS: ResolvedTraceLimits = Object.freeze({
  maxTracestateLength: DEFAULT_MAX_TRACESTATE_LENGTH,
  maxBaggageBytes: DEFAULT_MAX_BAGGAGE_BYTES,
  maxBaggageMembers: DEFAULT_MAX_BAGGAGE_MEMBERS,
});

export function resolveTraceLimits(limits: TraceContextLimits | undefined): ResolvedTraceLimits {
  if (limits === undefined) return DEFAULT_TRACE_LIMITS;
  return {
    maxTracestateLength: limitOption("maxTracestateLength", limits.maxTracestateLength, DEFAULT_MAX_TRACESTATE_LENGTH),
    maxBaggageBytes: limitOption("maxBaggageBytes", limits.maxBaggageBytes, DEFAULT_MAX_BAGGAGE_BYTES),
    maxBaggageMembers: limitOption("maxBaggageMembers", limits.maxBaggageMembers, DEFAULT_MAX_BAGGAGE_MEMBERS),
  };
}

/** A parsed traceparent: the trace, the caller's span (the parent of the receiver's), and the trace flags. */
export interface TraceParent {
  /** Two lowercase hex digits; "00" is the version this module writes. */
  readonly version: string;
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly parentId: string;
  /** The trace-flags byte (bit 0: sampled). */
  readonly flags: number;
}

const HEX2 = /^[0-9a-f]{2}$/;
const TRACEPARENT_V0 = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * A traceparent, or undefined when it is not one (W3C: a malformed traceparent is ignored, not an error). A version
 * above 00 is read by its first four fields, as W3C asks, when what follows them starts with "-".
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== "string" || value.length < 55) return undefined;
  const version = value.slice(0, 2);
  if (!HEX2.test(version) || version === "ff") return undefined;
  let head = value;
  if (version === "00") {
    if (value.length !== 55) return undefined;
  } else if (value.length > 55) {
    if (value[55] !== "-") return undefined;
    head = value.slice(0, 55);
  }
  const m = TRACEPARENT_V0.exec(head);
  if (m === null || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return undefined;
  return { version, traceId: m[2]!, parentId: m[3]!, flags: parseInt(m[4]!, 16) };
}

/** The traceparent of a span: version 00, its trace and span ids, its flags. Ids are checked, not repaired. */
export function formatTraceparent(span: { traceId: string; spanId: string; flags: number }): string {
  if (!/^[0-9a-f]{32}$/.test(span.traceId) || span.traceId === ZERO_TRACE)
    throw new TypeError(`traceId must be 32 lowercase hex digits, not all zero; got ${JSON.stringify(span.traceId)}`);
  if (!/^[0-9a-f]{16}$/.test(span.spanId) || span.spanId === ZERO_SPAN)
    throw new TypeError(`spanId must be 16 lowercase hex digits, not all zero; got ${JSON.stringify(span.spanId)}`);
  if (!Number.isInteger(span.flags) || span.flags < 0 || span.flags > 255)
    throw new TypeError(`flags must be a byte, got ${span.flags}`);
  return `00-${span.traceId}-${span.spanId}-${span.flags.toString(16).padStart(2, "0")}`;
}

// W3C Trace Context, tracestate: simple-key or tenant@system, and a value of printable ASCII without "," or "=".
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * A tracestate's list-members in order, or undefined when it is malformed (a bad key or value, a key twice, more than
 * 32 members, longer than `maxLength`): W3C lets a receiver drop such a tracestate as a whole. Empty members are skipped.
 */
export function parseTracestate(
  value: unknown,
  maxLength = DEFAULT_MAX_TRACESTATE_LENGTH,
): Array<[key: string, value: string]> | undefined {
  if (typeof value !== "string" || value.length > maxLength) return undefined;
  const members: Array<[string, string]> = [];
  const keys = new Set<string>();
  for (const raw of value.split(",")) {
    const member = raw.trim();
    if (member === "") continue;
    const eq = member.indexOf("=");
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const val = member.slice(eq + 1);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(val) || keys.has(key)) return undefined;
    keys.add(key);
    members.push([key, val]);
  }
  if (members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  return members;
}

/** A tracestate from its list-members, each checked as parseTracestate checks them. */
export function formatTracestate(members: ReadonlyArray<readonly [string, string]>): string {
  if (members.length > MAX_TRACESTATE_MEMBERS)
    throw new RangeError(`a tracestate holds at most ${MAX_TRACESTATE_MEMBERS} members, got ${members.length}`);
  for (const [key, value] of members) {
    if (!TRACESTATE_KEY.test(key)) throw new TypeError(`invalid tracestate key ${JSON.stringify(key)}`);
    if (!TRACESTATE_VALUE.test(value)) throw new TypeError(`invalid tracestate value ${JSON.stringify(value)}`);
  }
  return members.map(([key, value]) => `${key}=${value}`).join(",");
}

/** One list-member of a baggage: its key, its value percent-decoded, and its properties as written. */
export interface BaggageEntry {
  readonly key: string;
  readonly value: string;
  /** The member's properties after its value (`;k=v;flag`), as they came; undefined when none. */
  readonly metadata?: string;
}

// RFC 7230 token (the baggage key), and W3C Baggage's baggage-octet (what a value may hold before percent-decoding).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAGGAGE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;

/**
 * A baggage's list-members, or undefined when it is malformed or over the limits (W3C Baggage lets a receiver drop a
 * baggage it cannot parse). Values are percent-decoded.
 */
export function parseBaggage(
  value: unknown,
  limits: Pick<ResolvedTraceLimits, "maxBaggageBytes" | "maxBaggageMembers"> = DEFAULT_TRACE_LIMITS,
): BaggageEntry[] | undefined {
  if (typeof value !== "string" || value.length > limits.maxBaggageBytes) return undefined;
  // Characters beyond ASCII are not baggage-octets: the length in characters is the length in bytes of a valid one.
  const entries: BaggageEntry[] = [];
  for (const raw of value.split(",")) {
    if (entries.length >= limits.maxBaggageMembers) return undefined;
    const parts = raw.split(";");
    const pair = parts[0]!;
    const eq = pair.indexOf("=");
    if (eq < 0) return undefined;
    const key = pair.slice(0, eq).trim();
    const encoded = pair.slice(eq + 1).trim();
    if (!TOKEN.test(key) || !BAGGAGE_VALUE.test(encoded)) return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    const properties = parts.slice(1).map((p) => p.trim());
    for (const property of properties) {
      const peq = property.indexOf("=");
      const pkey = (peq < 0 ? property : property.slice(0, peq)).trim();
      if (!TOKEN.test(pkey)) return undefined;
      if (peq >= 0 && !BAGGAGE_VALUE.test(property.slice(peq + 1).trim())) return undefined;
    }
    entries.push(
      properties.length === 0 ? { key, value: decoded } : { key, value: decoded, metadata: properties.join(";") },
    );
  }
  return entries;
}

/** A baggage from its entries: values percent-encoded, keys checked as tokens. */
export function formatBaggage(entries: readonly BaggageEntry[]): string {
  return entries
    .map((entry) => {
      if (!TOKEN.test(entry.key)) throw new TypeError(`invalid baggage key ${JSON.stringify(entry.key)}`);
      const member = `${entry.key}=${encodeBaggageValue(entry.value)}`;
      return entry.metadata === undefined || entry.metadata === "" ? member : `${member};${entry.metadata}`;
    })
    .join(",");
}

/** Percent-encodes what is not a baggage-octet (and "%" itself), so any string survives the trip. */
function encodeBaggageValue(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The trace context a `_meta` carries, each value checked: a malformed traceparent is dropped with its tracestate
 * (W3C: a tracestate means nothing without its traceparent); a malformed or oversized tracestate or baggage is
 * dropped alone. Undefined when nothing usable is there.
 */
export function readTraceContext(
  meta: unknown,
  limits: ResolvedTraceLimits = DEFAULT_TRACE_LIMITS,
): TraceContext | undefined {
  if (!isPlainObject(meta)) return undefined;
  const parent = meta[TRACEPARENT];
  const baggage = meta[BAGGAGE];
  if (parent === undefined && baggage === undefined) return undefined;
  const out: { traceparent?: string; tracestate?: string; baggage?: string } = {};
  if (parseTraceparent(parent) !== undefined) {
    out.traceparent = parent as string;
    const state = meta[TRACESTATE];
    if (state !== undefined && parseTracestate(state, limits.maxTracestateLength) !== undefined)
      out.tracestate = state as string;
  }
  if (baggage !== undefined && parseBaggage(baggage, limits) !== undefined) out.baggage = baggage as string;
  return out.traceparent === undefined && out.baggage === undefined ? undefined : out;
}

/**
 * `params` with `trace` in its `_meta` (a copy; the caller's other `_meta` members kept). The keys `trace` has replace
 * those of the params; a tracestate without a traceparent is not written.
 */
export function withTraceContext(params: JsonObject | undefined, trace: TraceContext): JsonObject {
  const own = params?._meta;
  const meta: JsonObject = isPlainObject(own) ? Object.assign({}, own) : {};
  if (trace.traceparent !== undefined) {
    meta[TRACEPARENT] = trace.traceparent;
    if (trace.tracestate !== undefined && trace.tracestate !== "") meta[TRACESTATE] = trace.tracestate;
    else delete meta[TRACESTATE];
  }
  if (trace.baggage !== undefined && trace.baggage !== "") meta[BAGGAGE] = trace.baggage;
  return Object.assign({}, params, { _meta: meta });
}
