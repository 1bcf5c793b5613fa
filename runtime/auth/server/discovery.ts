// Authorization server metadata for the resource server: where an issuer publishes its keys (RFC 8414, OpenID Connect discovery).
import { isPlainObject } from "../../rpc/jsonrpc.js";

/** The members of authorization server metadata the resource server reads; the rest is kept as published. */
export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
  readonly scopes_supported?: readonly string[];
  readonly [member: string]: unknown;
}

export interface DiscoveryOptions {
  /** Per metadata request, ms; default 5,000. */
  timeoutMs?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_DISCOVERY_TIMEOUT_MS = 5_000;

/**
 * The URLs an issuer's metadata may be at, in the order the MCP spec gives: RFC 8414 with the path inserted after
 * the well-known prefix, then OpenID Connect discovery with path insertion and with the path appended. An issuer
 * without a path has one of each.
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, "");
  const origin = url.origin;
  if (path === "")
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** Thrown when an issuer's metadata cannot be had, or names another issuer (RFC 8414 3.3: it must not be used then). */
export class AuthorizationServerMetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuthorizationServerMetadataError";
  }
}

/**
 * Fetches an issuer's metadata from the first of its well-known URLs that answers 200 with a JSON object. Its
 * `issuer` must equal the one asked for, character for character.
 */
export async function discoverAuthorizationServer(
  issuer: string,
  options: DiscoveryOptions = {},
): Promise<AuthorizationServerMetadata> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS;
  const fetchImpl = options.fetch ?? fetch;
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new AuthorizationServerMetadataError(
        `Cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      tried.push(`${url} (${response.status})`);
      continue;
    }
    let document: unknown;
    try {
      document = await response.json();
    } catch {
      tried.push(`${url} (not JSON)`);
      continue;
    }
    if (!isPlainObject(document)) {
      tried.push(`${url} (not a JSON object)`);
      continue;
    }
    if (document.issuer !== issuer) {
      throw new AuthorizationServerMetadataError(
        `The metadata at ${url} names the issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`,
      );
    }
    return document as unknown as AuthorizationServerMetadata;
  }
  throw new AuthorizationServerMetadataError(
    `No authorization server metadata for ${issuer}: tried ${tried.join(", ")}`,
  );
}
