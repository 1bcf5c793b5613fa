// The OAuth 2.1 client side of MCP authorization (public surface of mcpgen/auth for clients).
export {};
