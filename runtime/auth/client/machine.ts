// OAuth clients that act on their own behalf: client_credentials, and the JWT bearer assertion grant (RFC 7523).
import { OAuthAuthorizer } from "./authorizer.js";
import { clientAuthentication } from "./client-auth.js";
import { OAuthEngine, type Acquisition, type Grant } from "./engine.js";
import { OAuthError } from "./errors.js";
import type { SigningKeyInput } from "./keys.js";
import type { AuthorizationServer, ClientAuth, OAuthLibrary, Step, TokenEndpointResponse } from "./library.js";
import type { OAuthCommonOptions, TokenEndpointAuthMethod } from "./options.js";
import type { OAuthClientInformation } from "./store.js";

/** A machine client's credentials at the authorization server. */
export interface MachineClientCredentials {
  /**
   * The issuer identifier(s) of the authorization server(s) these credentials belong to (RFC 8414), e.g.
   * "https://auth.example.com". Required: the client sends its secret, assertions and grants to no other, whatever
   * the MCP server names (see OAuthCommonOptions.issuer).
   */
  issuer: string | readonly string[];
  clientId: string;
  /** For client_secret_basic or client_secret_post. */
  clientSecret?: string;
  /** For private_key_jwt (RFC 7523 section 2.2). */
  privateKey?: SigningKeyInput;
  /** Default: private_key_jwt with a key, else client_secret_basic unless the server lists only client_secret_post. */
  tokenEndpointAuthMethod?: Exclude<TokenEndpointAuthMethod, "none">;
}

export type ClientCredentialsOptions = OAuthCommonOptions & MachineClientCredentials;

/** What a JWT bearer client is asked to produce an assertion for. */
export interface AssertionContext {
  /** The issuer of the authorization server the assertion will be presented to (its audience). */
  issuer: string;
  /** The MCP server's resource identifier. */
  resource: string;
  scope?: string;
}

export interface JwtBearerOptions extends ClientCredentialsOptions {
  /**
   * The JWT authorization grant to present (RFC 7523 section 2.1), e.g. an ID-JAG from the enterprise identity
   * provider (see requestIdJag); asked for anew for every token request.
   */
  assertion(context: AssertionContext): string | Promise<string>;
}

/**
 * The client_credentials grant for MCP clients acting on their own behalf (no user), authenticated with a client
 * secret or a private key JWT at the configured `issuer` only. Tokens are obtained on the server's first 401 and
 * again before they expire.
 */
export class ClientCredentialsClient extends OAuthAuthorizer {
  constructor(options: ClientCredentialsOptions) {
    super(new OAuthEngine(options, new MachineGrant(options, undefined)));
  }
}

/**
 * The JWT bearer grant (RFC 7523): the client presents an assertion it obtained elsewhere, as in enterprise-managed
 * authorization (SEP-990), where the identity provider issues an identity assertion grant for the MCP server.
 */
export class JwtBearerClient extends OAuthAuthorizer {
  constructor(options: JwtBearerOptions) {
    if (typeof options.assertion !== "function")
      throw new OAuthError("invalid_options", "assertion must be a function returning the JWT authorization grant");
    super(new OAuthEngine(options, new MachineGrant(options, options.assertion)));
  }
}

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** client_credentials, or jwt-bearer when an assertion source is given; the same client authentication for both. */
class MachineGrant implements Grant {
  readonly unattended = true;
  private readonly information: OAuthClientInformation;
  private readonly privateKey: SigningKeyInput | undefined;

  constructor(
    options: ClientCredentialsOptions,
    private readonly assertion: JwtBearerOptions["assertion"] | undefined,
  ) {
    if (typeof options.clientId !== "string" || options.clientId === "")
      throw new OAuthError("invalid_options", "clientId is required");
    // Credentials belong to one authorization server (RFC 9700 section 4.4): without it named, any MCP server could
    // point the client at a token endpoint of its own and collect them.
    if (options.issuer === undefined) {
      throw new OAuthError(
        "invalid_options",
        "a machine client needs issuer: the issuer identifier of the authorization server its credentials belong to (they are sent to no other)",
      );
    }
    if (options.clientSecret === undefined && options.privateKey === undefined) {
      throw new OAuthError(
        "invalid_options",
        "a machine client needs a clientSecret or a privateKey to authenticate with",
      );
    }
    this.information = { client_id: options.clientId };
    if (options.clientSecret !== undefined) this.information.client_secret = options.clientSecret;
    if (options.tokenEndpointAuthMethod !== undefined)
      this.information.token_endpoint_auth_method = options.tokenEndpointAuthMethod;
    this.privateKey = options.privateKey;
  }

  async clientFor(
    engine: OAuthEngine,
    lib: OAuthLibrary,
    as: AuthorizationServer,
  ): Promise<{ client: { client_id: string }; auth: ClientAuth }> {
    engine.secrets.add(this.information.client_secret);
    return {
      client: { client_id: this.information.client_id },
      auth: await clientAuthentication(lib, as, this.information, this.privateKey),
    };
  }

  async acquire(engine: OAuthEngine, { lib, serverKey, info, as, scope }: Acquisition): Promise<void> {
    const { client, auth } = await this.clientFor(engine, lib, as);
    const parameters: Record<string, string> =
      scope === undefined ? { resource: info.resource } : { resource: info.resource, scope };
    let response: TokenEndpointResponse;
    if (this.assertion === undefined) {
      const step: Step = { kind: "token", what: "the token endpoint (client_credentials)", url: as.token_endpoint };
      response = await engine.tokenRequest(lib, step, async (options) => {
        const sent = await lib.clientCredentialsGrantRequest(as, client, auth, parameters, options);
        return lib.processClientCredentialsResponse(as, client, sent);
      });
    } else {
      const context: AssertionContext =
        scope === undefined
          ? { issuer: as.issuer, resource: info.resource }
          : { issuer: as.issuer, resource: info.resource, scope };
      const assertion = await this.assertion(context);
      if (typeof assertion !== "string" || assertion === "")
        throw new OAuthError("invalid_options", "the assertion callback returned no assertion");
      engine.secrets.add(assertion);
      const step: Step = { kind: "token", what: "the token endpoint (jwt-bearer)", url: as.token_endpoint };
      response = await engine.tokenRequest(lib, step, async (options) => {
        const sent = await lib.genericTokenEndpointRequest(
          as,
          client,
          auth,
          JWT_BEARER,
          { assertion, ...parameters },
          options,
        );
        return lib.processGenericTokenEndpointResponse(as, client, sent);
      });
    }
    await engine.saveTokens(serverKey, info, as, response, scope);
  }
}
