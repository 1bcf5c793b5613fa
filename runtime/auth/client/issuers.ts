// The authorization servers a client trusts with its credentials (the `issuer` option), and the refusal of any other.
import { OAuthError } from "./errors.js";
import { oauthUrl } from "./urls.js";

/**
 * The configured issuer identifiers. Identifiers are compared as RFC 8414 asks of metadata (the same comparison
 * the metadata's own `issuer` check makes): as URLs, so only the spelling of the scheme, host, default port and an
 * empty path may differ; any difference in path, port or host is another issuer.
 */
export class TrustedIssuers {
  private readonly configured: readonly string[];
  private readonly identifiers: ReadonlySet<string>;

  private constructor(configured: readonly string[]) {
    this.configured = configured;
    this.identifiers = new Set(configured.map((issuer) => identifier(issuer)!));
  }

  /** The `issuer` option checked (absolute https URLs, or http on loopback; no query or fragment); undefined when absent. */
  static from(value: unknown, allowInsecureHttp: boolean): TrustedIssuers | undefined {
    if (value === undefined) return undefined;
    const list: unknown[] = Array.isArray(value) ? value : [value];
    if (list.length === 0 || !list.every((item) => typeof item === "string" && item !== "")) {
      throw new OAuthError(
        "invalid_options",
        "issuer must be an issuer identifier (an https URL) or a non-empty list of them",
      );
    }
    for (const issuer of list as string[]) {
      const url = oauthUrl(issuer, "the trusted issuer", allowInsecureHttp);
      if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
        throw new OAuthError(
          "invalid_options",
          `the trusted issuer ${JSON.stringify(issuer)} is not an issuer identifier: it has a query, a fragment or user info (RFC 8414 section 2)`,
        );
      }
    }
    return new TrustedIssuers([...(list as string[])]);
  }

  /** Whether `issuer` is one of the configured issuers. */
  has(issuer: string): boolean {
    const id = identifier(issuer);
    return id !== undefined && this.identifiers.has(id);
  }

  /** Whether a configured issuer lives at `origin` (where a 2025-03-26 server's own authorization server is). */
  hasOrigin(origin: string): boolean {
    return this.configured.some((issuer) => new URL(issuer).origin === origin);
  }

  /**
   * The refusal of the `offered` issuer(s): names them (cut short and passed through `redact`, being the server's
   * text) and the trusted ones, and says where the offer came from.
   */
  refusal(offered: string | readonly string[], where: string, redact: (text: string) => string): OAuthError {
    const list = typeof offered === "string" ? [offered] : offered;
    const named = list
      .slice(0, 5)
      .map((issuer) => JSON.stringify(redact(issuer.slice(0, 200))))
      .join(", ");
    const more = list.length > 5 ? ` and ${list.length - 5} more` : "";
    const subject =
      list.length === 1 ? `the authorization server ${named}` : `the authorization servers ${named}${more}`;
    const verb = list.length === 1 ? "is not an issuer" : "are none of the issuers";
    const first = list[0] === undefined ? undefined : redact(list[0].slice(0, 200));
    return new OAuthError(
      "untrusted_issuer",
      `${subject} (${where}) ${verb} this client trusts with its credentials (issuer: ${this.configured.map((i) => JSON.stringify(i)).join(", ")}); nothing carrying them was sent`,
      first === undefined ? {} : { issuer: first },
    );
  }
}

/** The normalised form two spellings of one issuer share; undefined for what is no absolute URL. */
function identifier(issuer: string): string | undefined {
  return URL.canParse(issuer) ? new URL(issuer).href : undefined;
}
