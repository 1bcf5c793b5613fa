// The runtime's public API: everything in runtime/web.ts plus what needs Node built-ins (stdio, HTTP listening, the
// servers of resumable requests and async tool calls). Named exports only, so an internal never becomes API by accident.
export * from "./web.js";

export {
  DEFAULT_INHERITED_ENV_VARS,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_STDERR_TAIL_BYTES,
  DEFAULT_STDERR_TAIL_LINES,
  FrameTooLargeError,
  InvalidJsonLineError,
  InvalidUtf8Error,
  StdioClientTransport,
  StdioServerTransport,
  defaultChildEnvironment,
} from "./transports/stdio/stdio.js";
export type { StdioClientTransportOptions, StdioServerTransportOptions } from "./transports/stdio/stdio.js";
export { DEFAULT_BUSY_POLL_MICROS } from "./transports/stdio/busy-poll.js";
export { DEFAULT_HTTP_SERVER_TIMEOUTS, createHttpServer, listenHttp } from "./transports/http/server/listen.js";
export type { HttpServerTimeouts, ListenHttpOptions, ListeningHttpServer } from "./transports/http/server/listen.js";

export { ResumableRequests } from "./eras/2025-11-25/resumable/server.js";
export type { ResumableServerOptions, ResumePolicy } from "./eras/2025-11-25/resumable/server.js";
export { AsyncTools } from "./eras/2025-11-25/async-tools/server.js";
export type { AsyncToolRunner, AsyncToolsOptions } from "./eras/2025-11-25/async-tools/server.js";
export {
  AsyncCallRejectedError,
  AsyncToolCall,
  callToolAsync,
  callToolPreferAsync,
  joinToolAsync,
  serverSupportsAsync,
} from "./eras/2025-11-25/async-tools/client.js";
export type { AsyncCallOptions } from "./eras/2025-11-25/async-tools/client.js";

// Tasks (2025-11-25), receiver side: task-augmented requests run as durable operations.
export { TaskReceiver } from "./eras/2025-11-25/tasks/receiver.js";
export type { CreateTaskOptions, TaskReceiverOptions, TaskRunner } from "./eras/2025-11-25/tasks/receiver.js";
