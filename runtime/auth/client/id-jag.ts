// Token exchange (RFC 8693) at an enterprise identity provider: the user's ID token for an identity assertion grant (SEP-990).
import { DEFAULT_MAX_OAUTH_RESPONSE_BYTES, DEFAULT_OAUTH_REQUEST_TIMEOUT_MS } from "./options.js";
import { boundedFetch } from "./bounded-fetch.js";
import { clientAuthentication } from "./client-auth.js";
import { OAuthError, SecretSet } from "./errors.js";
import type { SigningKeyInput } from "./keys.js";
import { oauthLibrary, translate, type AuthorizationServer, type Step } from "./library.js";
import { oauthUrl } from "./urls.js";
import { limitOption, MAX_TIMER_MS } from "../../rpc/limits.js";

export interface IdJagRequest {
  /** The identity provider's token endpoint. */
  tokenEndpoint: string;
  /** The identity provider's issuer identifier; default the token endpoint's origin. */
  issuer?: string;
  /** This client's id at the identity provider. */
  clientId: string;
  clientSecret?: string;
  privateKey?: SigningKeyInput;
  /** The user's ID token from the identity provider (the subject token). */
  idToken: string;
  /** The issuer of the MCP server's authorization server, which the grant is for. */
  audience: string;
  /** The MCP server's resource identifier. */
  resource: string;
  scope?: string;
  fetch?: typeof fetch;
  /** As for the OAuth clients: http only to loopback hosts unless true. */
  allowInsecureHttp?: boolean;
  /** ms; default 30 000. */
  requestTimeoutMs?: number;
  /** The largest token response read, bytes; default 262 144 (256 KiB). */
  maxResponseBytes?: number;
}

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";

/**
 * Exchanges the user's ID token at the identity provider for an identity assertion JWT authorization grant
 * (ID-JAG) for one MCP server; hand the result to JwtBearerClient's `assertion`.
 */
export async function requestIdJag(request: IdJagRequest): Promise<string> {
  const secrets = new SecretSet();
  secrets.add(request.idToken, request.clientSecret);
  const endpoint = oauthUrl(
    request.tokenEndpoint,
    "the identity provider's token endpoint",
    request.allowInsecureHttp ?? false,
  );
  const timeout = limitOption(
    "requestTimeoutMs",
    request.requestTimeoutMs,
    DEFAULT_OAUTH_REQUEST_TIMEOUT_MS,
    MAX_TIMER_MS,
  );
  const maxBytes = limitOption("maxResponseBytes", request.maxResponseBytes, DEFAULT_MAX_OAUTH_RESPONSE_BYTES);
  const lib = await oauthLibrary();
  const idp: AuthorizationServer = { issuer: request.issuer ?? endpoint.origin, token_endpoint: endpoint.href };
  const client = { client_id: request.clientId };
  const information =
    request.clientSecret === undefined
      ? { client_id: request.clientId }
      : { client_id: request.clientId, client_secret: request.clientSecret };
  const step: Step = {
    kind: "token",
    what: "the identity provider's token endpoint (token exchange)",
    url: endpoint.href,
  };
  try {
    const auth = await clientAuthentication(lib, idp, information, request.privateKey);
    const parameters: Record<string, string> = {
      requested_token_type: ID_JAG,
      audience: request.audience,
      resource: request.resource,
      subject_token: request.idToken,
      subject_token_type: ID_TOKEN,
    };
    if (request.scope !== undefined) parameters.scope = request.scope;
    const sent = await lib.genericTokenEndpointRequest(idp, client, auth, TOKEN_EXCHANGE, parameters, {
      [lib.customFetch]: boundedFetch(request.fetch, maxBytes),
      [lib.allowInsecureRequests]: true,
      signal: AbortSignal.timeout(timeout),
    });
    // An ID-JAG is no access token: RFC 8693 gives it the token_type N_A.
    const response = await lib.processGenericTokenEndpointResponse(idp, client, sent, {
      recognizedTokenTypes: { n_a: () => undefined },
    });
    secrets.add(response.access_token);
    if (response.issued_token_type !== ID_JAG) {
      throw new OAuthError(
        "invalid_token_response",
        `the identity provider issued ${JSON.stringify(String(response.issued_token_type))} instead of an ID-JAG (${ID_JAG})`,
        { url: endpoint.href },
      );
    }
    return response.access_token;
  } catch (error) {
    throw secrets.scrub(translate(lib, error, step, (text) => secrets.redact(text)));
  }
}
