// The runtime's public surface: contracts, session, lifecycle, transports, typed errors and the high-level McpServer.
export * from "./web.js";
// Node only: they import node:* modules, so runtime/web.ts (for browsers and workers) leaves them out.
export * from "./transports/stdio.js";
export * from "./transports/busy-poll.js";
export * from "./transports/http-listen.js";
export * from "./resumable/server.js";
export * from "./async-tools/server.js";
export * from "./async-tools/client.js";
export { TaskReceiver, type TaskReceiverOptions, type CreateTaskOptions, type TaskRunner } from "./tasks/receiver.js";
