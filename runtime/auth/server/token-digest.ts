// The name a token is known by inside the resource server (caches, revocation): its SHA-256, never the token.
import { nodeBuiltin } from "../../node-builtin.js";

/** Node's hash where there is one: a digest per authenticated request costs ~2 µs there against ~20 µs through WebCrypto. */
const nodeCrypto = nodeBuiltin("node:crypto");
/** crypto.hash (Node >= 20.12), the one-shot form: cheaper than a Hash object per token (as runtime/store/key.ts). */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string } | undefined)
  ?.hash;

/** The lower-case hex SHA-256 of a token: a key that identifies it and cannot be used as it. */
export async function tokenDigest(token: string): Promise<string> {
  if (oneShot !== undefined) return oneShot("sha256", token, "hex");
  if (nodeCrypto !== undefined) return nodeCrypto.createHash("sha256").update(token, "utf8").digest("hex");
  const bytes = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
