// MCP 2026-07-28's per-request envelope: the `_meta` fields every request carries instead of a handshake.
import { ErrorCode, RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import type { PeerIdentity } from "../../rpc/peer.js";
import { LOGGING_LEVELS } from "../../mcp/logging.js";

/** The revisions that carry the envelope (the modern era), latest first. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ["2026-07-28"];

export const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
export const CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
export const CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo";
export const LOG_LEVEL_META = "io.modelcontextprotocol/logLevel";
export const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";

/** The error codes 2026-07-28 defines (the range -32020..-32099 is the specification's). */
export const ModernErrorCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** Whether a request's params claim the modern era: its `_meta` names a protocol version. */
export function claimsModernEra(params: JsonObject | undefined): boolean {
  const meta = params?._meta;
  return isPlainObject(meta) && Object.hasOwn(meta, PROTOCOL_VERSION_META);
}

/**
 * The identity a modern request carries, or the error it is refused with: -32602 when a required field is missing
 * or malformed, -32022 (data `supported`, `requested`) when its revision is not one this server speaks.
 */
export function readEnvelope(params: JsonObject | undefined): PeerIdentity | RpcError {
  const meta = params?._meta;
  if (!isPlainObject(meta)) return missing(PROTOCOL_VERSION_META);
  const version = meta[PROTOCOL_VERSION_META];
  if (typeof version !== "string" || version === "") return missing(PROTOCOL_VERSION_META);
  if (!MODERN_PROTOCOL_VERSIONS.includes(version)) return unsupportedVersion(version, MODERN_PROTOCOL_VERSIONS);
  const capabilities = meta[CLIENT_CAPABILITIES_META];
  if (!isPlainObject(capabilities)) return missing(CLIENT_CAPABILITIES_META);
  const identity: { -readonly [K in keyof PeerIdentity]: PeerIdentity[K] } = { protocolVersion: version, capabilities };
  const info = meta[CLIENT_INFO_META];
  if (info !== undefined) {
    if (!isPlainObject(info) || typeof info.name !== "string" || typeof info.version !== "string")
      return malformed(CLIENT_INFO_META, "an Implementation object with name and version");
    identity.info = info as PeerIdentity["info"];
  }
  const level = meta[LOG_LEVEL_META];
  if (level !== undefined) {
    if (typeof level !== "string" || !(LOGGING_LEVELS as readonly string[]).includes(level))
      return malformed(LOG_LEVEL_META, `one of ${LOGGING_LEVELS.join(", ")}`);
    identity.logLevel = level;
  }
  return identity;
}

/** -32022: the revision a request asked for is not one of `supported`, which the client may pick from instead. */
export function unsupportedVersion(requested: unknown, supported: readonly string[]): RpcError {
  return new RpcError(
    ModernErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: ${String(requested)}`,
    {
      supported: [...supported],
      requested,
    },
  );
}

function missing(key: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid params: _meta["${key}"] is required on every request`, {
    missing: key,
  });
}

function malformed(key: string, expected: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid params: _meta["${key}"] must be ${expected}`, {
    invalid: key,
  });
}
