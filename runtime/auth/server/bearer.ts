// RFC 6750 on the wire: reading the bearer token from a request, and the WWW-Authenticate challenges that answer it.
import type { HttpChallenge } from "../../transports/http/server/server.js";

/** What a request presents: a token, nothing usable (no header, another scheme), or something malformed. */
export type PresentedToken = { readonly token: string } | { readonly missing: true } | { readonly malformed: string };

/** RFC 6750 2.1: `Bearer` (any case), one or more spaces, a b64token. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The bearer token of a request. A token in the URL query (`access_token`) is refused outright (the MCP spec allows
 * the header only); an Authorization header of another scheme counts as no credentials (RFC 6750 3.1).
 */
export function presentedToken(url: string, authorization: string | undefined): PresentedToken {
  if (new URL(url).searchParams.has("access_token"))
    return { malformed: "Access tokens must be sent in the Authorization header, not in the URL" };
  if (authorization === undefined) return { missing: true };
  const value = authorization.trim();
  const scheme = /^\S+/.exec(value)?.[0] ?? "";
  if (scheme.toLowerCase() !== "bearer") return { missing: true };
  const match = BEARER.exec(value);
  if (match === null) return { malformed: "The Authorization header is not of the form Bearer <token>" };
  return { token: match[1]! };
}

/** The members of a Bearer challenge (RFC 6750 3, RFC 9728 5.1). */
export interface BearerChallengeParams {
  error?: "invalid_request" | "invalid_token" | "insufficient_scope";
  errorDescription?: string;
  scopes?: readonly string[];
  resourceMetadata: string;
}

/** `Bearer error="...", error_description="...", scope="...", resource_metadata="..."`, members in that order. */
export function bearerChallenge(params: BearerChallengeParams): string {
  const members: string[] = [];
  if (params.error !== undefined) members.push(`error="${params.error}"`);
  if (params.errorDescription !== undefined) members.push(`error_description="${quotable(params.errorDescription)}"`);
  if (params.scopes !== undefined && params.scopes.length > 0) members.push(`scope="${params.scopes.join(" ")}"`);
  members.push(`resource_metadata="${quotable(params.resourceMetadata)}"`);
  return `Bearer ${members.join(", ")}`;
}

/** RFC 6750 limits error_description (and we the other quoted values) to visible ASCII without `"` and `\`. */
function quotable(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "?");
}

const STATUS = { invalid_request: 400, invalid_token: 401, insufficient_scope: 403 } as const;

/** The HTTP refusal carrying a Bearer challenge; the JSON-RPC error says the same in its message and data. */
export function bearerRefusal(params: BearerChallengeParams & { message: string }): HttpChallenge {
  const status = params.error === undefined ? 401 : STATUS[params.error];
  const data: Record<string, unknown> = {};
  if (params.error !== undefined) data.error = params.error;
  if (params.errorDescription !== undefined) data.error_description = params.errorDescription;
  if (params.scopes !== undefined && params.scopes.length > 0) data.scope = params.scopes.join(" ");
  return {
    status,
    wwwAuthenticate: bearerChallenge(params),
    message: params.message,
    ...(Object.keys(data).length > 0 ? { data } : {}),
  };
}
