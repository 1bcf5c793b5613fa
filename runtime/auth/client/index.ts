// The OAuth 2.1 client side of MCP authorization (public surface of mcpgen/auth for clients).
export { OAuthError, type OAuthErrorCode, type OAuthErrorDetails } from "./errors.js";
export { OAuthAuthorizer } from "./authorizer.js";
export {
  DEFAULT_AUTHORIZATION_TIMEOUT_MS,
  DEFAULT_MAX_AUTHORIZATION_ATTEMPTS,
  DEFAULT_MAX_OAUTH_RESPONSE_BYTES,
  DEFAULT_OAUTH_REQUEST_TIMEOUT_MS,
  DEFAULT_REFRESH_SKEW_MS,
  type DPoPAlgorithm,
  type DPoPKeyPair,
  type DPoPOptions,
  type OAuthCommonOptions,
  type TokenEndpointAuthMethod,
} from "./options.js";
export {
  OAuthClient,
  type OAuthClientMetadata,
  type OAuthClientOptions,
  type OAuthClientProvider,
} from "./authorization-code.js";
export {
  ClientCredentialsClient,
  JwtBearerClient,
  type AssertionContext,
  type ClientCredentialsOptions,
  type JwtBearerOptions,
  type MachineClientCredentials,
} from "./machine.js";
export { requestIdJag, type IdJagRequest } from "./id-jag.js";
export type { PrivateJwk, SigningKeyInput, WebCryptoPrivateKey } from "./keys.js";
export {
  InMemoryOAuthStore,
  MAX_PENDING_AUTHORIZATIONS,
  type OAuthClientInformation,
  type OAuthStore,
  type PendingAuthorization,
  type StoredTokens,
} from "./store.js";
export { FileOAuthStore } from "./file-store.js";
