// The runtime's public API without Node built-ins: what runs on web-standard APIs alone (browsers, workers, Deno, Bun, and Node).
// Named exports only: a module's other exports serve the runtime's own modules and are not API (see test/package).

// JSON-RPC messages, errors and the guard a custom transport needs.
export { ErrorCode, RpcError, isJsonRpcMessage } from "./jsonrpc.js";
export type {
  JsonObject,
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcResultResponse,
  RequestId,
} from "./jsonrpc.js";
export {
  CapabilityError,
  ConnectionClosedError,
  InvalidResultError,
  LocalErrorCode,
  ProcessExitedError,
  ProgressOrderError,
  ProtocolVersionError,
  RequestCancelledError,
  RequestTimeoutError,
} from "./errors.js";

// The contracts a transport, a dispatch table (generated code) and a handler see.
export type { AuthGrant, InboundInfo, ReplyChannel, SendOptions, Transport } from "./transport.js";
export type { DispatchTable, Explanation, MethodSpec, ValidationIssue } from "./dispatch.js";
export type {
  NotificationContext,
  NotificationHandler,
  Peer,
  ProgressInfo,
  RequestContext,
  RequestHandler,
  RequestOptions,
} from "./peer.js";
export type { ProgressToken } from "./operations.js";
export { DEFAULT_PROGRESS_INTERVAL_MS } from "./progress.js";

// Sessions: JSON-RPC, then the MCP lifecycle on each side, and the one way to extend a session.
export { DEFAULT_MAX_IN_FLIGHT_REQUESTS, DEFAULT_REQUEST_TIMEOUT_MS, Session, SessionStateKey } from "./session.js";
export type { SessionDebugEvent, SessionExtension, SessionOptions } from "./session.js";
export {
  ClientSession,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  ServerSession,
  hasCapability,
} from "./lifecycle.js";
export type { ClientSessionOptions, ImplementationInfo, ServerSessionOptions } from "./lifecycle.js";

// Transports that need no Node built-ins.
export { InMemoryLink, InMemoryTransport, createInMemoryPair } from "./transports/in-memory.js";
export type { InMemoryTransportOptions } from "./transports/in-memory.js";
export {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  HttpServerTransport,
  UndeliverableMessageError,
  createStreamableHttpServer,
} from "./transports/http-server.js";
export type {
  FetchRequestInfo,
  HttpAuthResult,
  HttpChallenge,
  HttpRequestInfo,
  HttpRoute,
  HttpRouteResponse,
  ResponseMode,
  StreamableHttpServer,
  StreamableHttpServerOptions,
} from "./transports/http-server.js";
export {
  CONNECTION_LOST_CODE,
  DEFAULT_AUTHORIZATION_RETRIES,
  HttpStatusError,
  SessionExpiredError,
  StreamLostError,
  StreamableHttpClientTransport,
} from "./transports/http-client.js";
export type {
  HttpAuthChallenge,
  HttpAuthorizer,
  ReconnectOptions,
  ResumptionInfo,
  StreamableHttpClientOptions,
} from "./transports/http-client.js";
export { EventReplayError, InMemoryEventStore } from "./transports/event-store.js";
export type {
  EventReplayFailure,
  EventStore,
  EventStoreStats,
  InMemoryEventStoreOptions,
  ReplayResult,
  StoredEvent,
} from "./transports/event-store.js";
export { checkHostAndOrigin } from "./transports/http-security.js";
export type { HostOriginPolicy, SecurityRejection } from "./transports/http-security.js";
export type { CorsOptions } from "./transports/http-cors.js";

// McpServer: tools, resources and prompts with their context and types.
export { LOGGING_LEVELS } from "./mcp-types.js";
export type {
  FromSchema,
  JsonSchema,
  JsonSchemaTypeName,
  McpAnnotations,
  McpBlobResourceContents,
  McpContent,
  McpCreateMessageParams,
  McpCreateMessageResult,
  McpElicitParams,
  McpElicitResult,
  McpGetPromptResult,
  McpIcon,
  McpListRootsResult,
  McpLoggingLevel,
  McpPromptArgument,
  McpPromptMessage,
  McpReadResourceResult,
  McpResourceContents,
  McpRole,
  McpRoot,
  McpSamplingMessage,
  McpTextResourceContents,
  McpToolAnnotations,
  McpToolResult,
  ObjectJsonSchema,
  ToolArguments,
} from "./mcp-types.js";
export { compileSchema } from "./mcp-schema.js";
export type { SchemaCheck, SchemaCompiler } from "./mcp-schema.js";
export { LoggingDisabledError, McpContext, requestPeer } from "./mcp-context.js";
export type { McpConnection } from "./mcp-context.js";
export { McpServer } from "./mcp-server.js";
export type {
  McpPromptConfig,
  McpPromptHandler,
  McpRegistration,
  McpResourceConfig,
  McpResourceReadResult,
  McpResourceReader,
  McpServerInit,
  McpServerOptions,
  McpSessionSettings,
  McpTemplateReader,
  McpToolConfig,
  McpToolHandler,
  PromptArguments,
} from "./mcp-server.js";

// Where operations that outlive a connection are kept.
export { MemoryOperationStore } from "./store/memory.js";
export type {
  Awaitable,
  FollowEvents,
  Following,
  OperationStore,
  OwnerSignal,
  QueuedMessage,
  SharedOperationStore,
  StoredOperation,
  StoredStatus,
  SyncOperationStore,
  SyncRecord,
} from "./store/types.js";

// Resumable requests, client side (the server side needs Node: runtime/index.ts).
export { RESUMABLE_FAILED_CODE, ResumeFailedError } from "./resumable/protocol.js";
export type { ClientResumer, ResumableClientOptions } from "./resumable/client.js";
export { resumableClient, resumerOf } from "./resumable/client.js";
export type { ClientExtension, ClientSessionHost } from "./client-extension.js";
export type { ReconnectOptions as ClientReconnectOptions } from "./client-recovery.js";

// Tasks (2025-11-25), requestor side: task handles, and tools that require a task called as one.
export {
  DEFAULT_MAX_TASK_POLL_INTERVAL_MS,
  DEFAULT_MAX_TOOL_LIST_PAGES,
  DEFAULT_MAX_TRACKED_TOOLS,
  DEFAULT_MIN_TASK_POLL_INTERVAL_MS,
  DEFAULT_TASK_POLL_INTERVAL_MS,
  TaskCancelledError,
  TaskHandle,
  attachTask,
  requestAsTask,
  requestOrTask,
  watchToolTaskSupport,
} from "./tasks/requestor.js";
export type { RequestOrTaskOptions, TaskRequestOptions, TaskWaitOptions, ToolTaskSupport } from "./tasks/requestor.js";
export { MODEL_IMMEDIATE_RESPONSE_META, RELATED_TASK_META } from "./tasks/protocol.js";
export type { CreateTaskReply, TaskState } from "./tasks/protocol.js";
export type { TaskSupport } from "./tasks/tools.js";
