// The token verifier contract of the resource server, its errors, and the claim checks the built-in verifiers share.

/** What a verifier learned from a valid access token. Never the token itself. */
export interface VerifiedToken {
  /** `sub`: the resource owner (or the client itself, for client_credentials tokens). */
  readonly subject?: string;
  /** `client_id`: the OAuth client the token was issued to. */
  readonly clientId?: string;
  /** The granted scopes (`scope`, space-separated, or an `scp` list). */
  readonly scopes: readonly string[];
  readonly issuer?: string;
  /** `aud`, as a list. */
  readonly audience: readonly string[];
  /** `exp`, seconds since the epoch. */
  readonly expiresAt?: number;
  /** Every claim of the token (or of the introspection answer). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** What a verifier is told about the request besides the token. */
export interface TokenVerificationContext {
  /** The canonical URL of this resource (the MCP endpoint): the audience a token must name. */
  readonly resource: string;
}

/**
 * Checks a bearer access token. Implement it for a token format of your own; `jwtVerifier` and
 * `introspectionVerifier` are built in. A verifier must check that the token was issued for this resource
 * (audience = `context.resource`, unless configured otherwise), is within its validity period, and comes from a
 * trusted issuer. It throws InvalidTokenError for a token that is not acceptable (answered 401 invalid_token);
 * any other error means the token could not be checked now (answered 503 and reported to onerror).
 */
export interface TokenVerifier {
  verify(token: string, context: TokenVerificationContext): Promise<VerifiedToken>;
  /**
   * Drops whatever the verifier keeps about the token (a cached answer), so the next request with it is checked
   * afresh. Called by ProtectedResource.revoke; a verifier that keeps nothing per token leaves it out.
   */
  forget?(token: string): void | Promise<void>;
}

/**
 * The token is not acceptable. Its message becomes the challenge's error_description, so it says why in a few
 * words (expired, wrong audience...) and never quotes the token or its claims.
 */
export class InvalidTokenError extends Error {
  constructor(description: string) {
    super(description);
    this.name = "InvalidTokenError";
  }
}

/** The audience a verifier checks: the configured list, else the resource; false only when the app opted out. */
function expectedAudience(
  configured: string | readonly string[] | false | undefined,
  context: TokenVerificationContext,
): readonly string[] | false {
  if (configured === false) return false;
  if (configured === undefined) return [context.resource];
  return typeof configured === "string" ? [configured] : configured;
}

/**
 * Whether `aud` (a string or a list) names one of `expected`. URLs compare in canonical form (scheme and host
 * lower-cased, default port and a lone trailing slash dropped), other identifiers exactly.
 */
function audienceMatches(aud: unknown, expected: readonly string[]): boolean {
  const values =
    typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
  const wanted = new Set(expected.map(comparableUri));
  return values.some((value) => wanted.has(comparableUri(value)));
}

function comparableUri(value: string): string {
  if (!/^https?:\/\//i.test(value)) return value;
  try {
    const url = new URL(value);
    const path = url.pathname === "/" ? "" : url.pathname;
    return `${url.protocol}//${url.host}${path}${url.search}`;
  } catch {
    return value;
  }
}

/** The scopes of a claim set: `scope` (RFC 9068, RFC 7662: space-separated) or `scp` (a list, as some servers issue). */
export function scopesOf(claims: Readonly<Record<string, unknown>>): readonly string[] {
  const scope = claims.scope;
  if (typeof scope === "string") return scope.split(" ").filter((s) => s !== "");
  const scp = claims.scp;
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === "string" && s !== "");
  if (typeof scp === "string") return scp.split(" ").filter((s) => s !== "");
  return [];
}

/** VerifiedToken from checked claims. */
function verifiedToken(claims: Readonly<Record<string, unknown>>): VerifiedToken {
  const aud = claims.aud;
  return {
    subject: typeof claims.sub === "string" && claims.sub !== "" ? claims.sub : undefined,
    clientId: typeof claims.client_id === "string" && claims.client_id !== "" ? claims.client_id : undefined,
    scopes: scopesOf(claims),
    issuer: typeof claims.iss === "string" ? claims.iss : undefined,
    audience:
      typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [],
    expiresAt: typeof claims.exp === "number" ? claims.exp : undefined,
    claims,
  };
}

/**
 * A token bound to a key of the client (DPoP `cnf.jkt`, mutual-TLS `cnf.x5t#S256`) is sender-constrained: presented
 * as a plain bearer token, without the proof, it must be refused.
 */
function refuseSenderConstrained(claims: Readonly<Record<string, unknown>>): void {
  const cnf = claims.cnf;
  if (cnf !== null && typeof cnf === "object" && ("jkt" in cnf || "x5t#S256" in cnf)) {
    throw new InvalidTokenError("The access token is sender-constrained and cannot be used as a bearer token");
  }
}

/**
 * The checks every verifier makes once it trusts a token's claims (signature, issuer, time and type done): the
 * audience (`configured`, else the resource) and no sender constraint. Returns the VerifiedToken.
 */
export function acceptClaims(
  claims: Readonly<Record<string, unknown>>,
  configured: string | readonly string[] | false | undefined,
  context: TokenVerificationContext,
): VerifiedToken {
  const audience = expectedAudience(configured, context);
  if (audience !== false && !audienceMatches(claims.aud, audience))
    throw new InvalidTokenError("The access token was issued for another resource");
  refuseSenderConstrained(claims);
  return verifiedToken(Object.freeze({ ...claims }));
}
