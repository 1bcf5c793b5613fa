// URL rules of MCP authorization: https or loopback http, redirect URIs, and which resource a server URL belongs to.
import { OAuthError, type OAuthErrorCode } from "./errors.js";

/**
 * True for `localhost`, 127.0.0.0/8 and [::1]. The WHATWG URL parser has already normalised the other spellings
 * of an IPv4 address (octal, hex, short forms), so `hostname` needs no further decoding.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function parse(value: string | URL, code: OAuthErrorCode, what: string): URL {
  if (value instanceof URL) return value;
  try {
    return new URL(value);
  } catch {
    throw new OAuthError(code, `${what} is not a valid absolute URL: ${JSON.stringify(String(value).slice(0, 200))}`);
  }
}

/**
 * `value` as a URL fit for an OAuth request: https, or http on a loopback host (any host with `allowInsecureHttp`).
 * Anything else is an OAuthError "insecure_url" naming `what`.
 */
export function oauthUrl(value: string | URL, what: string, allowInsecureHttp: boolean): URL {
  const url = parse(value, "insecure_url", what);
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && (allowInsecureHttp || isLoopbackHost(url.hostname))) return url;
  throw new OAuthError("insecure_url", `${what} must use https (plain http only on a loopback host): ${url.origin}`, {
    url: url.href,
  });
}

/**
 * A redirect URI must be https, http on a loopback host (OAuth 2.1 section 1.5), or a native app's private-use URI
 * scheme (RFC 8252 section 7.1: a reverse domain name, so with a period, e.g. `com.example.app:/callback`); no
 * fragment.
 */
export function checkRedirectUri(value: string): URL {
  const url = parse(value, "invalid_redirect_uri", "redirect URI");
  const secure =
    url.protocol === "https:" ||
    (url.protocol === "http:" && isLoopbackHost(url.hostname)) ||
    isPrivateUseScheme(url.protocol);
  if (!secure)
    throw new OAuthError(
      "invalid_redirect_uri",
      `redirect URI ${JSON.stringify(value)} must be https, http on a loopback host (localhost, 127.0.0.1, [::1]) or a private-use scheme such as com.example.app:/callback`,
      { url: value },
    );
  if (url.hash !== "")
    throw new OAuthError("invalid_redirect_uri", `redirect URI ${JSON.stringify(value)} must not have a fragment`, {
      url: value,
    });
  return url;
}

/** A private-use URI scheme (RFC 8252 section 7.1): a reverse domain name, e.g. "com.example.app:". */
function isPrivateUseScheme(protocol: string): boolean {
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(protocol);
}

/**
 * The OIDC `application_type` redirect URIs imply (SEP-837): "native" when every one is http on a loopback host or
 * a private-use scheme (desktop, mobile and command-line apps, and web apps served from localhost), else "web".
 * OIDC servers hold registrations to it (a web client may not use a private-use scheme); others ignore it.
 */
export function applicationTypeOf(redirectUris: readonly string[]): "native" | "web" {
  const native = redirectUris.every((uri) => {
    const url = new URL(uri);
    return (url.protocol === "http:" && isLoopbackHost(url.hostname)) || isPrivateUseScheme(url.protocol);
  });
  return native ? "native" : "web";
}

/** A client ID metadata document URL must be https and have a path (draft-ietf-oauth-client-id-metadata-document). */
export function checkClientMetadataUrl(value: string): URL {
  const url = parse(value, "invalid_client_metadata_url", "client ID metadata document URL");
  if (url.protocol !== "https:" || url.pathname === "/" || url.hash !== "") {
    throw new OAuthError(
      "invalid_client_metadata_url",
      `the client ID metadata document URL ${JSON.stringify(value)} must be an https URL with a path and no fragment`,
      { url: value },
    );
  }
  return url;
}

/** The canonical URI of an MCP server (RFC 8707): no fragment, and no trailing slash on a bare origin. */
export function canonicalResource(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  if (copy.pathname === "/" && copy.search === "") return copy.origin;
  return copy.href;
}

/**
 * Whether protected resource metadata naming `resource` may serve the MCP endpoint `server`: the same origin, and
 * a path equal to the endpoint's or a whole-segment prefix of it (a server may protect its whole origin, as the
 * root well-known location implies). Any other value is metadata for another resource and must not be used.
 */
export function resourceCovers(resource: string, server: URL): boolean {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  if (url.origin !== server.origin || url.hash !== "") return false;
  const own = url.pathname.replace(/\/+$/, "");
  const path = server.pathname.replace(/\/+$/, "");
  return own === "" || own === path || path.startsWith(`${own}/`);
}
