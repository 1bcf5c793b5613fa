// The `mcpgen/auth` entry: MCP authorization for both roles, an OAuth 2.1 client and a protected-resource server.
export * from "./client/index.js";
export * from "./server/index.js";
