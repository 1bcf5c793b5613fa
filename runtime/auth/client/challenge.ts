// Reads the Bearer and DPoP challenges of a 401/403 (RFC 6750, RFC 9449, RFC 9728 section 5.1): resource_metadata, scope and error.
import { OAuthError } from "./errors.js";
import type { OAuthLibrary } from "./library.js";

/** The parameters MCP reads from a Bearer or DPoP challenge. */
export interface BearerChallenge {
  /** Where the protected resource metadata is (`resource_metadata`). */
  resourceMetadata?: URL;
  /** The scopes the request needs (`scope`), space-separated. */
  scope?: string;
  /** e.g. invalid_token, insufficient_scope, use_dpop_nonce. */
  error?: string;
}

/** A response's challenges of the two schemes an OAuth client answers. */
export interface Challenges {
  bearer?: BearerChallenge;
  /** The DPoP scheme's (RFC 9449 section 7.1), e.g. `DPoP error="use_dpop_nonce"`. */
  dpop?: BearerChallenge;
}

/** Stands in for the resource server's URL in the parse below: no request is made to it. */
const NOWHERE = new URL("https://resource.invalid/");

/**
 * The Bearer and DPoP challenges among a response's `WWW-Authenticate` challenges; neither when there is no
 * header or no such challenge in it. A header that cannot be parsed, or a `resource_metadata` that is not an
 * absolute URL, is an OAuthError "invalid_challenge" (naming the header, not echoing it: it is the server's text).
 *
 * The parsing is oauth4webapi's: its parser is reached through protectedResourceRequest, whose fetch here hands
 * back a response carrying the header exactly as the MCP server sent it.
 */
export async function readChallenges(
  lib: OAuthLibrary,
  headers: Readonly<Record<string, string>>,
): Promise<Challenges> {
  const header = headers["www-authenticate"];
  if (header === undefined || header.trim() === "") return {};
  let challenges: OAuthLibrary["WWWAuthenticateChallengeError"]["prototype"]["cause"] | undefined;
  try {
    const response = new Response(null, { status: 401, headers: { "www-authenticate": header } });
    await lib.protectedResourceRequest("unused", "GET", NOWHERE, undefined, undefined, {
      [lib.customFetch]: async () => response,
      [lib.allowInsecureRequests]: true,
    });
  } catch (error) {
    if (error instanceof lib.WWWAuthenticateChallengeError) challenges = error.cause;
    else if (!(error instanceof TypeError)) throw error;
  }
  if (challenges === undefined)
    throw new OAuthError(
      "invalid_challenge",
      "the MCP server's WWW-Authenticate header is malformed (RFC 9110 section 11.6.1)",
    );
  const out: Challenges = {};
  const bearer = challenges.find((challenge) => challenge.scheme === "bearer");
  if (bearer !== undefined) out.bearer = parametersOf(bearer.parameters);
  const dpop = challenges.find((challenge) => challenge.scheme === "dpop");
  if (dpop !== undefined) out.dpop = parametersOf(dpop.parameters);
  return out;
}

type Parameters = OAuthLibrary["WWWAuthenticateChallengeError"]["prototype"]["cause"][number]["parameters"];

function parametersOf(parameters: Parameters): BearerChallenge {
  const { resource_metadata: metadata, scope, error } = parameters;
  const out: BearerChallenge = {};
  if (metadata !== undefined) {
    try {
      out.resourceMetadata = new URL(metadata);
    } catch {
      throw new OAuthError(
        "invalid_challenge",
        "the resource_metadata of the MCP server's WWW-Authenticate header is not an absolute URL",
      );
    }
  }
  if (scope !== undefined && scope.trim() !== "") out.scope = scope.trim();
  if (error !== undefined) out.error = error;
  return out;
}
