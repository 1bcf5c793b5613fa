// The protected-resource side of MCP authorization (public surface of mcpgen/auth for servers).
export {
  protectResource,
  type ProtectedResource,
  type ProtectedResourceOptions,
  type ProtectedResourceMetadata,
  type ScopeRequirements,
} from "./protected-resource.js";
export {
  InvalidTokenError,
  type TokenVerifier,
  type TokenVerificationContext,
  type VerifiedToken,
} from "./verifier.js";
export { jwtVerifier, DEFAULT_JWT_ALGORITHMS, type JwtVerifier, type JwtVerifierOptions } from "./jwt.js";
export { introspectionVerifier, type IntrospectionVerifierOptions } from "./introspection.js";
