// The MCP logging levels, one list for the handshake era's logging/setLevel and the 2026-07-28 envelope's logLevel.

export type McpLoggingLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/** Severity order of the spec's logging levels (RFC 5424, least severe first). */
export const LOGGING_LEVELS: readonly McpLoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];
