// The MCP protocol revisions this runtime speaks: read by the lifecycle (negotiation) and the HTTP transport (header check).
/** Protocol revisions this runtime speaks, latest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
