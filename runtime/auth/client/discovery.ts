// Finding the authorization server of an MCP server: protected resource metadata, then the server's own metadata, in the spec's order.
import { OAuthError } from "./errors.js";
import type { TrustedIssuers } from "./issuers.js";
import { translate, type AuthorizationServer, type OAuthLibrary, type Step } from "./library.js";
import { canonicalResource, oauthUrl, resourceCovers } from "./urls.js";

/** What the protected resource metadata (or its 2025-03-26 absence) says about an MCP server. */
export interface ResourceInfo {
  /** The `resource` parameter of authorization and token requests. */
  resource: string;
  /** The chosen authorization server's issuer identifier. */
  issuer: string;
  scopesSupported?: string[];
  /** Where the metadata came from (a challenge's resource_metadata or a well-known URI). */
  metadataUrl?: string;
  /**
   * A 2025-03-26 server, without protected resource metadata: its authorization server lives at this origin
   * (the MCP server's), with metadata at the origin's well-known URIs or else the default endpoints.
   */
  legacyOrigin?: string;
}

export interface DiscoveryOptions {
  lib: OAuthLibrary;
  /** Options for every oauth4webapi request: fetch, timeout signal, and http allowed (URLs are checked before). */
  requestOptions(): Record<PropertyKey, unknown>;
  allowInsecureHttp: boolean;
  /** Fall back to 2025-03-26 discovery when the server has no protected resource metadata. */
  legacyDiscovery: boolean;
  selectAuthorizationServer?: (issuers: readonly string[]) => string;
  /** The issuers the client trusts with its credentials; undefined when any may be used. */
  trust: TrustedIssuers | undefined;
  redact(text: string): string;
}

/** A place a metadata document may be, and the request that fetches it. */
interface Candidate {
  url: URL;
  request: () => Promise<Response>;
}

const DOCUMENTS = {
  "resource-metadata": "the protected resource metadata",
  "server-metadata": "the authorization server metadata",
} as const;

/**
 * Fetches one candidate document; a network failure is an OAuthError naming it. Undefined for a non-200 answer when
 * `mayMiss` (a guessed location), else the answer whatever its status, for the reader to report.
 */
async function fetchDocument(
  options: DiscoveryOptions,
  kind: keyof typeof DOCUMENTS,
  { url, request }: Candidate,
  mayMiss: boolean,
): Promise<{ response: Response; step: Step } | undefined> {
  const step: Step = { kind, what: `${DOCUMENTS[kind]} at ${url.href}`, url: url.href };
  let response: Response;
  try {
    response = await request();
  } catch (error) {
    throw translate(options.lib, error, step, options.redact);
  }
  if (response.status !== 200 && mayMiss) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  return { response, step };
}

/**
 * Protected resource metadata for the MCP endpoint `server`: from the challenge's `resource_metadata` when there
 * is one (and only there), else from the well-known URI with the endpoint's path and then the one at the root.
 */
export async function discoverResource(
  options: DiscoveryOptions,
  server: URL,
  fromChallenge: URL | undefined,
): Promise<ResourceInfo> {
  const { lib } = options;
  const attempts: Candidate[] = [];
  if (fromChallenge !== undefined) {
    const url = oauthUrl(fromChallenge, "the protected resource metadata URL", options.allowInsecureHttp);
    attempts.push({ url, request: () => getJson(options, url) });
  } else {
    const withPath = new URL(server.href);
    withPath.hash = "";
    const root = new URL(server.origin);
    oauthUrl(root, "the MCP server", options.allowInsecureHttp);
    // The library inserts the well-known segment before the path; the root form only when the path is not "/".
    if (withPath.pathname !== "/")
      attempts.push({
        url: wellKnown(withPath, "oauth-protected-resource"),
        request: () => lib.resourceDiscoveryRequest(withPath, options.requestOptions()),
      });
    attempts.push({
      url: wellKnown(root, "oauth-protected-resource"),
      request: () => lib.resourceDiscoveryRequest(root, options.requestOptions()),
    });
  }
  for (const candidate of attempts) {
    // The well-known locations are guesses: a miss means try the next. The challenge's URL is no guess.
    const found = await fetchDocument(options, "resource-metadata", candidate, fromChallenge === undefined);
    if (found !== undefined) return readResourceMetadata(options, server, candidate.url, found.response, found.step);
  }
  if (fromChallenge === undefined && options.legacyDiscovery)
    return { resource: canonicalResource(server), issuer: server.origin, legacyOrigin: server.origin };
  throw new OAuthError(
    "resource_metadata_not_found",
    `the MCP server ${server.origin} publishes no protected resource metadata (RFC 9728) at ${attempts.map((a) => a.url.href).join(" or ")}`,
    { url: server.href },
  );
}

async function readResourceMetadata(
  options: DiscoveryOptions,
  server: URL,
  url: URL,
  response: Response,
  step: Step,
): Promise<ResourceInfo> {
  const { lib } = options;
  // The library checks `resource` for identity with an expected value; MCP accepts a prefix of the endpoint too,
  // so the value is checked here first and then handed to the library as the one expected.
  const peek: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  const named = isObject(peek) && typeof peek.resource === "string" ? peek.resource : undefined;
  if (named !== undefined && !resourceCovers(named, server)) {
    throw new OAuthError(
      "resource_mismatch",
      `the protected resource metadata at ${url.href} is for the resource ${JSON.stringify(options.redact(named.slice(0, 200)))}, not for the MCP server ${canonicalResource(server)}`,
      { url: url.href },
    );
  }
  let metadata: Awaited<ReturnType<OAuthLibrary["processResourceDiscoveryResponse"]>>;
  try {
    metadata = await lib.processResourceDiscoveryResponse(named !== undefined ? new URL(named) : server, response);
  } catch (error) {
    throw translate(lib, error, step, options.redact);
  }
  const servers = metadata.authorization_servers;
  if (!Array.isArray(servers) || servers.length === 0 || !servers.every((s) => typeof s === "string")) {
    throw new OAuthError(
      "invalid_resource_metadata",
      `the protected resource metadata at ${url.href} names no authorization_servers`,
      { url: url.href },
    );
  }
  // Only the trusted ones are candidates: the others never see a credential, nor are they asked for metadata.
  const { trust } = options;
  const candidates = trust === undefined ? servers : servers.filter((server) => trust.has(server));
  if (trust !== undefined && candidates.length === 0)
    throw trust.refusal(servers, `named by the protected resource metadata at ${url.href}`, options.redact);
  const issuer = options.selectAuthorizationServer ? options.selectAuthorizationServer(candidates) : candidates[0]!;
  if (!candidates.includes(issuer)) {
    throw new OAuthError(
      "invalid_options",
      `selectAuthorizationServer returned ${JSON.stringify(issuer)}, which is not among the ${trust === undefined ? "" : "trusted "}authorization servers the metadata at ${url.href} lists`,
    );
  }
  oauthUrl(issuer, "the authorization server's issuer", options.allowInsecureHttp);
  const scopes = metadata.scopes_supported;
  const info: ResourceInfo = { resource: canonicalResource(new URL(metadata.resource)), issuer, metadataUrl: url.href };
  if (Array.isArray(scopes) && scopes.every((s) => typeof s === "string")) info.scopesSupported = scopes;
  return info;
}

/**
 * The authorization server's metadata, from the well-known URIs in the order the spec gives: for an issuer with
 * a path, RFC 8414 with path insertion, OpenID Connect discovery with path insertion, then with the path
 * appended; without a path, RFC 8414 then OpenID Connect. The `issuer` inside must be the one asked for.
 *
 * For a 2025-03-26 server (`legacyOrigin`): the same two root URIs at the MCP server's origin, whose `issuer` is
 * only held to that origin (no issuer was named to compare with); with no metadata at all, the default endpoints
 * /authorize, /token and /register there.
 */
export async function discoverAuthorizationServer(
  options: DiscoveryOptions,
  info: Pick<ResourceInfo, "issuer" | "legacyOrigin">,
): Promise<AuthorizationServer> {
  const { lib } = options;
  const issuer = oauthUrl(
    info.legacyOrigin ?? info.issuer,
    "the authorization server's issuer",
    options.allowInsecureHttp,
  );
  const path = issuer.pathname.replace(/\/+$/, "");
  const candidates: Candidate[] = [
    {
      url: wellKnown(issuer, "oauth-authorization-server"),
      request: () => lib.discoveryRequest(issuer, { ...options.requestOptions(), algorithm: "oauth2" }),
    },
  ];
  if (path !== "") {
    const inserted = wellKnown(issuer, "openid-configuration");
    candidates.push({ url: inserted, request: () => getJson(options, inserted) });
  }
  candidates.push({
    url: appended(issuer, "openid-configuration"),
    request: () => lib.discoveryRequest(issuer, { ...options.requestOptions(), algorithm: "oidc" }),
  });

  for (const { url, request } of candidates) {
    const found = await fetchDocument(options, "server-metadata", { url, request }, true);
    if (found === undefined) continue;
    const { response, step } = found;
    let expected = issuer;
    if (info.legacyOrigin !== undefined) {
      const peek: unknown = await response
        .clone()
        .json()
        .catch(() => undefined);
      const named = isObject(peek) && typeof peek.issuer === "string" ? peek.issuer : undefined;
      const sameOrigin = named !== undefined && URL.canParse(named) && new URL(named).origin === info.legacyOrigin;
      if (named !== undefined && !sameOrigin) {
        throw new OAuthError(
          "issuer_mismatch",
          `the authorization server metadata at ${url.href} names the issuer ${JSON.stringify(options.redact(named.slice(0, 200)))}, not one at ${info.legacyOrigin}`,
          { url: url.href },
        );
      }
      if (sameOrigin) expected = new URL(named!);
    }
    let metadata: AuthorizationServer;
    try {
      metadata = await lib.processDiscoveryResponse(expected, response);
    } catch (error) {
      throw translate(lib, error, step, options.redact);
    }
    checkEndpoints(metadata, url, options.allowInsecureHttp);
    return metadata;
  }
  if (info.legacyOrigin !== undefined) {
    const origin = info.legacyOrigin;
    const defaults: AuthorizationServer = {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
    };
    assumed.add(defaults);
    return defaults;
  }
  throw new OAuthError(
    "authorization_server_metadata_not_found",
    `the authorization server ${issuer.href} publishes no metadata at ${candidates.map((c) => c.url.href).join(", ")}`,
    { url: issuer.href },
  );
}

/** Metadata made up from the 2025-03-26 default endpoints: nothing in it was said by the server. */
const assumed = new WeakSet<AuthorizationServer>();

/** Whether `metadata` is the 2025-03-26 defaults rather than a document the server published. */
export function isAssumedMetadata(metadata: AuthorizationServer): boolean {
  return assumed.has(metadata);
}

/** Every endpoint the client may use must pass the same https-or-loopback rule as the issuer. */
function checkEndpoints(metadata: AuthorizationServer, from: URL, allowInsecureHttp: boolean): void {
  for (const name of ["authorization_endpoint", "token_endpoint", "registration_endpoint"] as const) {
    const value = metadata[name];
    if (value === undefined) continue;
    if (typeof value !== "string" || !URL.canParse(value)) {
      throw new OAuthError(
        "invalid_authorization_server_metadata",
        `the authorization server metadata at ${from.href} has an invalid ${name}`,
        { url: from.href },
      );
    }
    oauthUrl(value, `the authorization server's ${name}`, allowInsecureHttp);
  }
}

/** `https://host/.well-known/<name><path>` (RFC 8414 / RFC 9728 path insertion); just the well-known URI at the root. */
function wellKnown(url: URL, name: string): URL {
  const path = url.pathname.replace(/\/+$/, "");
  return new URL(`${url.origin}/.well-known/${name}${path}`);
}

/** `https://host<path>/.well-known/<name>` (OpenID Connect discovery). */
function appended(url: URL, name: string): URL {
  const path = url.pathname.replace(/\/+$/, "");
  return new URL(`${url.origin}${path}/.well-known/${name}`);
}

/** A plain metadata GET, as the library makes them (JSON accepted, redirects not followed). */
async function getJson(options: DiscoveryOptions, url: URL): Promise<Response> {
  const request = options.requestOptions();
  const fetchImpl = (request[options.lib.customFetch] as typeof fetch | undefined) ?? fetch;
  return fetchImpl(url.href, {
    method: "GET",
    headers: { accept: "application/json" },
    redirect: "manual",
    signal: request.signal as AbortSignal | undefined,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
