// The runtime's public surface.
export * from "./jsonrpc.js";
export type * from "./dispatch.js";
export type * from "./transport.js";
export type * from "./peer.js";
