// The protected-resource side of MCP authorization (public surface of mcpgen/auth for servers).
export {};
