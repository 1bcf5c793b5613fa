// oidc-provider for the OAuth client's tests: the auth tests' fixture (optionally requiring DPoP nonces), our client with its user, and a record of its OAuth traffic.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  InMemoryOAuthStore,
  OAuthClient,
  type OAuthClientMetadata,
  type OAuthClientOptions,
  type OAuthStore,
} from "../../../runtime/auth/index.js";
import { repoRoot } from "../../kit/paths.js";
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
} from "../oidc/helpers.js";

/** Makes the fixture's "oidc-provider" import the DPoP shim (dpop-provider/shim.mjs). */
const REGISTER = join(repoRoot, "test/auth/client/dpop-provider/register.mjs");

/**
 * The fixture with DPoP nonces (features.dPoP.nonceSecret and requireNonce): every DPoP proof at the token endpoint
 * must carry the server's nonce, which it hands out with `use_dpop_nonce`. The fixture is the auth tests' own,
 * unchanged; a module hook in its process (passed through NODE_OPTIONS to that process alone) swaps the package
 * for a subclass configured so.
 */
export function startDPoPAuthorizationServer(
  options: AuthorizationServerOptions,
  dpop: { requireNonce: boolean },
): Promise<AuthorizationServer> {
  const saved = { NODE_OPTIONS: process.env.NODE_OPTIONS, MCPGEN_TEST_DPOP: process.env.MCPGEN_TEST_DPOP };
  process.env.NODE_OPTIONS = [saved.NODE_OPTIONS, `--import=${pathToFileURL(REGISTER).href}`].filter(Boolean).join(" ");
  process.env.MCPGEN_TEST_DPOP = JSON.stringify(dpop);
  try {
    // The program is spawned before this call first waits, so only it sees the environment above.
    return startAuthorizationServer(options);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** One OAuth request the client made (metadata, registration, token) and its answer. */
export interface Exchange {
  method: string;
  url: string;
  /** Request headers, names lower-case. */
  headers: Record<string, string>;
  body: string;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** A fetch for the client's `fetch` option that records every exchange. */
export function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body === null ? "" : await request.clone().text();
    const response = await fetch(request);
    log.push({
      method: request.method,
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body,
      status: response.status,
      responseHeaders: Object.fromEntries(response.headers),
      responseBody: await response.clone().text(),
    });
    return response;
  };
}

export const LOOPBACK_REDIRECT = "http://127.0.0.1:8978/callback";

export interface UserClient {
  oauth: OAuthClient;
  store: OAuthStore;
  /** Every authorization URL the user was sent to. */
  authorizations: URL[];
}

/** Our OAuthClient whose user signs in at `as` and approves everything. */
export function userClient(
  as: Pick<AuthorizationServer, "approve">,
  options: OAuthClientOptions = {},
  metadata: Partial<OAuthClientMetadata> = {},
): UserClient {
  const store = options.store ?? new InMemoryOAuthStore();
  const authorizations: URL[] = [];
  const oauth: OAuthClient = new OAuthClient(
    {
      clientMetadata: { client_name: "mcpgen-client-tests", redirect_uris: [LOOPBACK_REDIRECT], ...metadata },
      redirectToAuthorization: async (url) => {
        authorizations.push(url);
        await oauth.finishAuthorization(await as.approve(url));
      },
    },
    { ...options, store },
  );
  return { oauth, store, authorizations };
}

/** The text of a tool result's first content item, parsed as JSON. */
export function jsonOf(result: { content?: unknown }): Record<string, unknown> {
  const first = (result.content as { text?: string }[] | undefined)?.[0];
  return JSON.parse(first?.text ?? "null") as Record<string, unknown>;
}
