// The runtime's public API without Node built-ins: what runs on web-standard APIs alone (browsers, workers, Deno, Bun, and Node).
// Named exports only: a module's other exports serve the runtime's own modules and are not API (see test/package).

// JSON-RPC messages, errors and the guard a custom transport needs.
export { ErrorCode, RpcError, isJsonRpcMessage } from "./rpc/jsonrpc.js";
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
} from "./rpc/jsonrpc.js";
export {
  CapabilityError,
  ConnectionClosedError,
  InvalidResultError,
  LocalErrorCode,
  ProcessExitedError,
  ProgressOrderError,
  ProtocolVersionError,
  RequestCancelledError,
  RequestRefusedError,
  RequestTimeoutError,
} from "./rpc/errors.js";

// The contracts a transport, a dispatch table (generated code) and a handler see.
export type { AuthGrant, InboundInfo, ReplyChannel, SendOptions, Transport } from "./rpc/transport.js";
export type { DispatchTable, Explanation, MethodSpec, ValidationIssue } from "./rpc/dispatch.js";
// Why a value does not match a JSON Schema: what the generated explainers (mcpgen/validators) run, for any schema.
export { DEFAULT_MAX_EXPLAIN_DEPTH, DEFAULT_MAX_EXPLAINED_ISSUES, explainSchema } from "./validation/explain.js";
export type { ExplainOptions } from "./validation/explain.js";
export type {
  NotificationContext,
  NotificationHandler,
  Peer,
  ProgressInfo,
  RequestContext,
  RequestHandler,
  RequestOptions,
} from "./rpc/peer.js";
export type { ProgressToken } from "./rpc/operations.js";
export { DEFAULT_PROGRESS_INTERVAL_MS } from "./rpc/progress.js";

// Sessions: JSON-RPC, then the MCP lifecycle on each side, and the one way to extend a session.
export {
  DEFAULT_MAX_IN_FLIGHT_REQUESTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  Session,
  SessionStateKey,
} from "./rpc/session/session.js";
export type { SessionDebugEvent, SessionExtension, SessionOptions } from "./rpc/session/session.js";
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, ServerSession, hasCapability } from "./mcp/lifecycle.js";
export type { ImplementationInfo, ServerSessionOptions } from "./mcp/lifecycle.js";
export { ClientSession } from "./mcp/client-session.js";
export type { ClientSessionOptions, EraOption, EraVerdict } from "./mcp/client-session.js";
export { DEFAULT_PROBE_TIMEOUT_MS } from "./mcp/negotiation.js";
export { DEFAULT_MAX_INPUT_ROUNDS, InputRoundsExceededError } from "./eras/2026-07-28/client-wire.js";
// The Tasks extension, requestor side: the bound on one task's input requests.
export { DEFAULT_MAX_TASK_INPUTS, TaskInputsExceededError } from "./eras/2026-07-28/client-task.js";
export type { CacheHint, CacheHints, RevisionTableMap, RevisionTables } from "./eras/2026-07-28/wire.js";
// Trace context (W3C traceparent, tracestate, baggage) in `_meta`, and OpenTelemetry through the API the app passes in.
export {
  formatBaggage,
  formatTraceparent,
  formatTracestate,
  parseBaggage,
  parseTraceparent,
  parseTracestate,
  readTraceContext,
  withTraceContext,
} from "./mcp/trace-context.js";
export type { BaggageEntry, TraceContext, TraceContextLimits, TraceParent } from "./mcp/trace-context.js";
export type { OpenTelemetryApi, TelemetryOption, TelemetryOptions } from "./mcp/telemetry.js";

// Transports that need no Node built-ins.
export { InMemoryLink, InMemoryTransport, createInMemoryPair } from "./transports/in-memory.js";
export type { InMemoryTransportOptions } from "./transports/in-memory.js";
export {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  HttpServerTransport,
  UndeliverableMessageError,
  createStreamableHttpServer,
} from "./transports/http/server/server.js";
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
} from "./transports/http/server/server.js";
export {
  CONNECTION_LOST_CODE,
  DEFAULT_AUTHORIZATION_RETRIES,
  HttpStatusError,
  SessionExpiredError,
  StreamLostError,
  StreamableHttpClientTransport,
} from "./transports/http/client/transport.js";
export type {
  HttpAuthChallenge,
  HttpAuthCredentials,
  HttpAuthRequest,
  HttpAuthResponse,
  HttpAuthorizer,
  ReconnectOptions,
  ResumptionInfo,
  StreamableHttpClientOptions,
} from "./transports/http/client/transport.js";
export { EventReplayError, InMemoryEventStore } from "./transports/http/server/event-store.js";
export type {
  EventReplayFailure,
  EventStore,
  EventStoreStats,
  InMemoryEventStoreOptions,
  ReplayResult,
  StoredEvent,
} from "./transports/http/server/event-store.js";
export { checkHostAndOrigin } from "./transports/http/server/security.js";
export type { HostOriginPolicy, SecurityRejection } from "./transports/http/server/security.js";
export type { CorsOptions } from "./transports/http/server/cors.js";

// McpServer: tools, resources and prompts with their context and types.
export { LOGGING_LEVELS } from "./server/types.js";
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
  McpToolResultFor,
  ObjectJsonSchema,
  ToolArguments,
  ToolInput,
  ToolSchema,
  ToolStructuredContent,
} from "./server/types.js";
export type { StandardJsonSchemaV1, StandardSchemaV1 } from "./server/standard-schema.js";
export { compileSchema } from "./server/tool-schema.js";
export type { SchemaCheck, SchemaCompiler } from "./server/tool-schema.js";
export { LoggingDisabledError, McpContext, requestPeer } from "./server/context.js";
export type { McpConnection } from "./server/context.js";
export { McpServer } from "./server/mcp-server.js";
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
} from "./server/mcp-server.js";

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
export { RESUMABLE_FAILED_CODE, ResumeFailedError } from "./eras/2025-11-25/resumable/protocol.js";
export type { ClientResumer, ResumableClientOptions } from "./eras/2025-11-25/resumable/client.js";
export { resumableClient, resumerOf } from "./eras/2025-11-25/resumable/client.js";
export type { ClientExtension, ClientSessionHost } from "./mcp/client-extension.js";
export type { ReconnectOptions as ClientReconnectOptions } from "./mcp/client-recovery.js";

// Tasks, requestor side (core Tasks, and the Tasks extension on 2026-07-28): task handles, and tools that require a
// task called as one.
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
} from "./eras/2025-11-25/tasks/requestor.js";
export type {
  RequestOrTaskOptions,
  TaskRequestOptions,
  TaskWaitOptions,
  ToolTaskSupport,
} from "./eras/2025-11-25/tasks/requestor.js";
export { MODEL_IMMEDIATE_RESPONSE_META, RELATED_TASK_META } from "./eras/2025-11-25/tasks/protocol.js";
export type { CreateTaskReply, TaskState } from "./eras/2025-11-25/tasks/protocol.js";
export type { TaskSupport } from "./eras/2025-11-25/tasks/tools.js";
