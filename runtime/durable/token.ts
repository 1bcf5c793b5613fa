// The one token scheme of durable operations: mint a token, derive its store key, match a presented one in constant time.
import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { tokenKey } from "../store/key.js";

// 24 random bytes (192 bits) as 32 base64url characters, drawn and encoded 170 at a time: one randomBytes and one
// encoding per block instead of one each (24 bytes encode to exactly 32 characters, so the tokens of a block are
// independent slices of its text).
const POOL_TOKENS = 170;
const TOKEN_BYTES = 24;
const TOKEN_CHARS = 32;
/** Longer presented tokens are refused unread: no token this runtime mints is near it. */
const MAX_PRESENTED_CHARS = 256;
/**
 * With an in-process store an operation is found by the first 16 characters of its token (96 bits) and the whole
 * token is then compared in constant time, so the token never leaves the process. A store shared between nodes is
 * keyed by the token's SHA-256, so no other node, nor the store itself, ever holds a token.
 */
const LOCAL_KEY_CHARS = 16;

let poolText = "";
let poolIndex = 0;

/** A fresh unguessable token (the secret a client presents to find its operation again). */
export function mintToken(): string {
  if (poolIndex >= poolText.length) {
    poolText = randomBytes(POOL_TOKENS * TOKEN_BYTES).toString("base64url");
    poolIndex = 0;
  }
  const token = poolText.slice(poolIndex, poolIndex + TOKEN_CHARS);
  poolIndex += TOKEN_CHARS;
  return token;
}

/** Whether a value a peer sent could be a token at all (anything else is refused as unknown, unread). */
export function isPresentedToken(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_PRESENTED_CHARS;
}

/** Compares two tokens in time that depends only on their length. */
export function sameToken(issued: string, presented: string): boolean {
  if (issued.length !== presented.length) return false;
  return timingSafeEqual(Buffer.from(issued, "latin1"), Buffer.from(presented, "latin1"));
}

/**
 * How an engine keys its operations: `local` (an in-process store) by a prefix, the token kept in memory and
 * matched in constant time; otherwise by SHA-256, the token itself kept nowhere.
 */
export class TokenScheme {
  constructor(readonly local: boolean) {}

  /** The store key of a token. */
  keyOf(token: string): string {
    return this.local ? token.slice(0, LOCAL_KEY_CHARS) : tokenKey(token);
  }

  /** What to keep of a token next to its operation: the token with a local store, "" otherwise (the key is its hash). */
  kept(token: string): string {
    return this.local ? token : "";
  }

  /** Whether `presented` is the token an operation kept as `kept` (always true by key when keyed by hash). */
  matches(kept: string, presented: string): boolean {
    return !this.local || sameToken(kept, presented);
  }
}
