// The HttpAuthorizer every OAuth client of mcpgen/auth is: what the Streamable HTTP transport calls on each request.
import type { HttpAuthChallenge, HttpAuthorizer } from "../../transports/http/client/transport.js";
import type { OAuthEngine } from "./engine.js";

/**
 * Base of OAuthClient, ClientCredentialsClient and JwtBearerClient: hand one to StreamableHttpClientTransport's
 * `authorization` option. It supplies the bearer token of every request (refreshed before it expires) and answers
 * the server's 401 and 403 insufficient_scope challenges by authorizing (again).
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

  authorization(url: URL): Promise<string | undefined> {
    return this.engine.authorization(url);
  }

  challenge(challenge: HttpAuthChallenge): Promise<boolean> {
    return this.engine.challenge(challenge);
  }

  /** Forgets the tokens for an MCP endpoint (e.g. on sign-out); client registrations stay. */
  signOut(serverUrl: string | URL): Promise<void> {
    return this.engine.signOut(serverUrl);
  }
}
