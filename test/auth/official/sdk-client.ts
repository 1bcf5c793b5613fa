// The official SDK's MCP client with its own OAuth machinery (an OAuthClientProvider kept in memory), the user played by the test authorization server's harness.
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Approval, AuthorizationServer } from "../oidc/helpers.js";

/** A loopback redirect URI nothing listens on: the harness stops at the redirect and hands its URL back. */
export const SDK_REDIRECT_URI = "http://127.0.0.1/callback";

/** Everything the SDK asks its provider to keep, in memory, plus what it did with the user. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  stored?: OAuthTokens;
  verifier?: string;
  lastState?: string;
  /** Every authorization URL the SDK sent the user to. */
  readonly authorizations: URL[] = [];
  /** The redirect back to the client after the user's last visit, not yet turned into tokens. */
  pendingRedirect?: URL;

  constructor(
    private readonly user: (authorizationUrl: URL) => Promise<URL>,
    readonly clientMetadata: OAuthClientMetadata,
  ) {}

  get redirectUrl(): string {
    return SDK_REDIRECT_URI;
  }
  state(): string {
    this.lastState = randomBytes(16).toString("base64url");
    return this.lastState;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no code verifier saved");
    return this.verifier;
  }
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizations.push(authorizationUrl);
    this.pendingRedirect = await this.user(authorizationUrl);
  }
}

export interface SdkClientOptions {
  /** What the user does on the authorization pages (default: sign in as alice, grant everything offered). */
  approval?: Approval;
  /** Client metadata for dynamic registration; default a public client (`none`) with the refresh_token grant. */
  clientMetadata?: Partial<OAuthClientMetadata>;
  /** Authorizations one operation may go through before its error is final (default 3). */
  maxAuthorizations?: number;
}

export interface SdkClientSession {
  client: Client;
  provider: MemoryOAuthProvider;
  /** Calls a tool, completing any authorization (first, or step-up) the SDK asks for on the way. */
  callTool(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Connects the SDK's client to `serverUrl` with the SDK's own OAuth flow. The SDK stops with UnauthorizedError
 * after sending the user away; the user has then already been through the pages, so this finishes the flow
 * with the code from the redirect (checking `state`) and tries again, as an app's callback handler would.
 */
export async function connectSdkClient(
  serverUrl: string,
  authorizationServer: Pick<AuthorizationServer, "approve">,
  options: SdkClientOptions = {},
): Promise<SdkClientSession> {
  const { approval, maxAuthorizations = 3 } = options;
  const provider = new MemoryOAuthProvider((url) => authorizationServer.approve(url, approval), {
    client_name: "official-sdk-client",
    redirect_uris: [SDK_REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...options.clientMetadata,
  });
  let transport!: StreamableHTTPClientTransport;
  let client!: Client;

  const authorized = async <T>(run: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const redirect = provider.pendingRedirect;
        if (!(error instanceof UnauthorizedError) || redirect === undefined || attempt >= maxAuthorizations)
          throw error;
        provider.pendingRedirect = undefined;
        const failure = redirect.searchParams.get("error");
        if (failure)
          throw new Error(
            `authorization failed: ${failure} ${redirect.searchParams.get("error_description") ?? ""}`.trim(),
          );
        if (redirect.searchParams.get("state") !== provider.lastState)
          throw new Error("the redirect's state is not the one sent");
        const code = redirect.searchParams.get("code");
        if (!code) throw new Error(`the redirect carries no code: ${redirect.href}`);
        await transport.finishAuth(code);
      }
    }
  };

  // A client whose connect failed is closed by the SDK, so each attempt starts a fresh one.
  await authorized(async () => {
    transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    client = new Client({ name: "official-sdk-client", version: "1.0.0" });
    await client.connect(transport);
  });

  return {
    client,
    provider,
    callTool: (name, args = {}) =>
      authorized(async () => (await client.callTool({ name, arguments: args })) as CallToolResult),
    close: () => client.close(),
  };
}
