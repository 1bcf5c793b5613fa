// Sealed requestState for input-required rounds: what the server needs back, HMAC-signed with a key ring (WebCrypto).
import { ErrorCode, RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import { limitOption } from "../../rpc/limits.js";

/** One signing key: an id carried in every state it seals, and at least 32 bytes of secret. */
export interface RequestStateKey {
  readonly id: string;
  readonly secret: Uint8Array | string;
}

/** How requestState is sealed; see McpServer's `requestState` option. */
export interface RequestStateOptions {
  /**
   * Signing keys, newest first: the first seals, every one opens (so a key can be rotated out while states it sealed
   * are still in flight). Servers behind one load balancer share them. Default: one random key made at start, which
   * only that process can open.
   */
  readonly keys?: readonly RequestStateKey[];
  /** How long a sealed state may be presented, ms; default 600,000 (10 minutes). */
  readonly ttlMs?: number;
  /** Largest requestState accepted, in characters; default 262,144. */
  readonly maxBytes?: number;
}

/** What a state holds: who may present it, for which request, until when, and what was asked and answered. */
export interface StatePayload {
  /** The principal the round was served to, or null. */
  readonly p: string | null;
  /** Digest of the request's method and salient params. */
  readonly r: string;
  /** Expiry, ms since the epoch. */
  readonly e: number;
  /** Digest of each ask (method + params), by key. */
  readonly q: { readonly [key: string]: string };
  /** The answers received so far, by key. */
  readonly a: { readonly [key: string]: JsonObject };
}

const encoder = new TextEncoder();

/** WebCrypto's key type, named without the DOM library (the runtime runs on Node, browsers and workers alike). */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A ring of HMAC-SHA-256 keys that seals and opens states. */
export class RequestStateSealer {
  readonly ttlMs: number;
  readonly maxBytes: number;
  private readonly given: RequestStateOptions["keys"];
  private ring: Promise<{ id: string; key: HmacKey }[]> | undefined = undefined;

  constructor(options: RequestStateOptions = {}) {
    this.ttlMs = limitOption("requestState.ttlMs", options.ttlMs, 600_000);
    this.maxBytes = limitOption("requestState.maxBytes", options.maxBytes, 262_144);
    const given = options.keys;
    if (given !== undefined && given.length === 0) throw new RangeError("requestState.keys must hold at least one key");
    for (const k of given ?? []) {
      const bytes = typeof k.secret === "string" ? encoder.encode(k.secret) : k.secret;
      if (bytes.byteLength < 32) throw new RangeError(`requestState key ${k.id}: the secret must be at least 32 bytes`);
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(k.id))
        throw new RangeError(`requestState key id must match [A-Za-z0-9_-]{1,64}`);
    }
    // Copied now: the keys are imported on first use, and the app may clear its own buffers once it handed them over.
    this.given = given?.map((k) => ({ id: k.id, secret: typeof k.secret === "string" ? k.secret : k.secret.slice() }));
  }

  /**
   * The keys, imported on the first seal or open: a session built per request (HTTP on 2026-07-28) whose handler
   * never asks draws no random key and imports nothing.
   */
  private get keys(): Promise<{ id: string; key: HmacKey }[]> {
    if (this.ring === undefined) {
      const given = this.given ?? [{ id: "local", secret: crypto.getRandomValues(new Uint8Array(32)) }];
      this.ring = Promise.all(
        given.map(async (k) => ({
          id: k.id,
          key: await crypto.subtle.importKey(
            "raw",
            ownBuffer(typeof k.secret === "string" ? encoder.encode(k.secret) : k.secret),
            { name: "HMAC", hash: "SHA-256" },
            false,
            ["sign", "verify"],
          ),
        })),
      );
    }
    return this.ring;
  }

  /** `<key id>.<payload, base64url JSON>.<HMAC, base64url>` */
  async seal(payload: StatePayload): Promise<string> {
    const [first] = await this.keys;
    const body = `${first!.id}.${toBase64Url(encoder.encode(JSON.stringify(payload)))}`;
    const mac = await crypto.subtle.sign("HMAC", first!.key, encoder.encode(body));
    return `${body}.${toBase64Url(new Uint8Array(mac))}`;
  }

  /** The payload of a state this ring sealed, unexpired; else -32602 (the same for every failure, which says little). */
  async open(state: string, now = Date.now()): Promise<StatePayload> {
    if (state.length > this.maxBytes) throw invalidState("it is too large");
    const parts = state.split(".");
    if (parts.length !== 3) throw invalidState("it was not issued by this server");
    const [id, body, mac] = parts as [string, string, string];
    const entry = (await this.keys).find((k) => k.id === id);
    const signature = entry === undefined ? undefined : fromBase64Url(mac);
    const valid =
      entry !== undefined &&
      signature !== undefined &&
      (await crypto.subtle.verify("HMAC", entry.key, ownBuffer(signature), encoder.encode(`${id}.${body}`)));
    if (!valid) throw invalidState("it was not issued by this server, or was changed");
    const bytes = fromBase64Url(body);
    let payload: unknown;
    try {
      payload = bytes === undefined ? undefined : JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      payload = undefined;
    }
    if (!isPayload(payload)) throw invalidState("it was not issued by this server");
    if (payload.e <= now) throw invalidState("it expired");
    return payload;
  }
}

function invalidState(why: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid params: requestState refused (${why}); send the request anew`);
}

function isPayload(value: unknown): value is StatePayload {
  return (
    isPlainObject(value) &&
    (value.p === null || typeof value.p === "string") &&
    typeof value.r === "string" &&
    typeof value.e === "number" &&
    isPlainObject(value.q) &&
    isPlainObject(value.a)
  );
}

/** SHA-256 of a string, base64url. */
export async function digest(text: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}

/** JSON with object keys sorted, so equal values digest alike whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The bytes in an ArrayBuffer of their own (WebCrypto's types take no view of a shared or foreign buffer). */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}
