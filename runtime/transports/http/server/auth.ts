// The server's auth hooks, their answers checked: a principal or grant, or a challenge the request is answered with.
import { ErrorCode, isPlainObject, type RequestId } from "../../../rpc/jsonrpc.js";
import type { AuthGrant } from "../../../rpc/transport.js";
import type { HttpExchange } from "./exchange.js";
import { JSON_HEADERS } from "./replies.js";
import { errorBody } from "../wire.js";
import type { HttpAuthResult, HttpChallenge, HttpRequestInfo, StreamableHttpServerOptions } from "./options.js";

/** The app's authenticate hook, its answer checked: a grant, a challenge, or undefined for none. */
export async function authenticate(
  options: StreamableHttpServerOptions,
  ex: HttpExchange,
): Promise<AuthGrant | HttpChallenge | undefined> {
  let result: HttpAuthResult;
  try {
    result = await options.authenticate!(requestInfo(ex));
  } catch {
    // The hook's error is not reported: it may quote the credential it failed on.
    return undefined;
  }
  if (result === null || result === undefined) return undefined;
  if (typeof result === "string") return { principal: result };
  const checked = isChallenge(result) ? result : isGrant(result) ? grantOf(result) : undefined;
  if (checked === undefined)
    options.onerror?.(new TypeError("authenticate returned neither a principal, a grant nor a challenge"));
  return checked;
}

export function requestInfo(ex: HttpExchange): HttpRequestInfo {
  return { method: ex.method, url: ex.url.toString(), headers: ex.headers };
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  503: "Service Unavailable",
};

/** Answers with an auth hook's challenge; `id`: the refused request's, so the client's call gets its error. */
export function challenge(ex: HttpExchange, c: HttpChallenge, id?: RequestId): void {
  const headers: Record<string, string> = { ...c.headers, ...JSON_HEADERS };
  if (c.wwwAuthenticate !== undefined) headers["www-authenticate"] = c.wwwAuthenticate;
  // Not fail(): here the JSON content type wins over the hook's headers.
  ex.respond(
    c.status,
    headers,
    errorBody(ErrorCode.InvalidRequest, c.message ?? REASONS[c.status] ?? "Request refused", id, c.data),
  );
}

export function isChallenge(value: unknown): value is HttpChallenge {
  if (!isPlainObject(value)) return false;
  const { status, wwwAuthenticate, message } = value;
  return (
    typeof status === "number" &&
    Number.isInteger(status) &&
    status >= 400 &&
    status <= 599 &&
    (wwwAuthenticate === undefined || typeof wwwAuthenticate === "string") &&
    (message === undefined || typeof message === "string") &&
    (value.headers === undefined || isPlainObject(value.headers))
  );
}

export function isGrant(value: unknown): value is AuthGrant {
  if (!isPlainObject(value) || typeof value.principal !== "string") return false;
  const { scopes, claims, expiresAt, whenRevoked } = value;
  return (
    (scopes === undefined || (Array.isArray(scopes) && scopes.every((s) => typeof s === "string"))) &&
    (claims === undefined || isPlainObject(claims)) &&
    (expiresAt === undefined || (typeof expiresAt === "number" && !Number.isNaN(expiresAt))) &&
    (whenRevoked === undefined || typeof whenRevoked === "function")
  );
}

/** A frozen copy: handlers of many requests share it, and none may change what another sees. */
export function grantOf(value: AuthGrant): AuthGrant {
  const grant: { -readonly [K in keyof AuthGrant]: AuthGrant[K] } = { principal: value.principal };
  if (value.scopes !== undefined) grant.scopes = Object.freeze([...value.scopes]);
  if (value.claims !== undefined) grant.claims = Object.freeze({ ...value.claims });
  // Infinity is no expiry at all.
  if (value.expiresAt !== undefined && Number.isFinite(value.expiresAt)) grant.expiresAt = value.expiresAt;
  if (value.whenRevoked !== undefined) grant.whenRevoked = value.whenRevoked;
  return Object.freeze(grant);
}
