// The store key of a secret token: its SHA-256, so no store, log or metric ever holds the token itself.
import { createHash } from "node:crypto";

export function tokenKey(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
