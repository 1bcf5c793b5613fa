// The HttpAuthorizer every OAuth client of mcpgen/auth is: what the Streamable HTTP transport calls on each request.
import type {
  HttpAuthChallenge,
  HttpAuthCredentials,
  HttpAuthRequest,
  HttpAuthResponse,
  HttpAuthorizer,
} from "../../transports/http/client/options.js";
import type { OAuthEngine } from "./engine.js";

/**
 * Base of OAuthClient, ClientCredentialsClient and JwtBearerClient: hand one to StreamableHttpClientTransport's
 * `authorization` option. It supplies the access token of every request (refreshed before it expires; with the
 * `dpop` option a DPoP token and the request's proof) and answers the server's 401 and 403 insufficient_scope
 * challenges by authorizing (again), and its DPoP nonce challenges by sending the request again with the nonce.
 */
export abstract class OAuthAuthorizer implements HttpAuthorizer {
  /** From `maxAuthorizationAttempts`. */
  readonly maxRetries: number;
  private readonly engine: OAuthEngine;

  /** @param engine the internal engine the subclass built (typed loosely so no peer type leaks into declarations) */
  protected constructor(engine: unknown) {
    this.engine = engine as OAuthEngine;
    this.maxRetries = this.engine.maxRetries;
  }

  /**
   * `Bearer <token>`, or for a DPoP token `{ authorization: "DPoP <token>", headers: { DPoP: <proof> } }` with a
   * proof for `request`'s method (POST when no request is named) and `url`; undefined before there is a token.
   */
  authorization(url: URL, request?: HttpAuthRequest): Promise<string | HttpAuthCredentials | undefined> {
    return this.engine.authorization(url, request);
  }

  /** Keeps a `DPoP-Nonce` the MCP server sent for the next proof (nothing to do without the `dpop` option). */
  observe(response: HttpAuthResponse): void {
    this.engine.observe(response);
  }

  challenge(challenge: HttpAuthChallenge): Promise<boolean> {
    return this.engine.challenge(challenge);
  }

  /** Forgets the tokens for an MCP endpoint (e.g. on sign-out); client registrations stay. */
  signOut(serverUrl: string | URL): Promise<void> {
    return this.engine.signOut(serverUrl);
  }
}
