// The runtime's public surface: contracts, session, lifecycle, transports and typed errors.
export * from "./jsonrpc.js";
export * from "./dispatch.js";
export * from "./transport.js";
export * from "./peer.js";
export * from "./errors.js";
export * from "./operations.js";
export * from "./progress.js";
export * from "./session.js";
export * from "./lifecycle.js";
export * from "./transports/in-memory.js";
export * from "./transports/stdio.js";
export * from "./transports/http-server.js";
export * from "./transports/http-client.js";
export * from "./transports/event-store.js";
export * from "./transports/http-security.js";
