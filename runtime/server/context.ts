// The context McpServer hands to tool, resource and prompt handlers: progress, cancellation, and typed calls back to the client.
import type { JsonObject, RequestId } from "../rpc/jsonrpc.js";
import type {
  NotificationHandler,
  Peer,
  PeerIdentity,
  RequestContext,
  RequestHandler,
  RequestOptions,
  TraceContext,
} from "../rpc/peer.js";
import type { ServerSession } from "../mcp/lifecycle.js";
import type { AuthGrant } from "../rpc/transport.js";
import {
  LOGGING_LEVELS,
  type McpCreateMessageParams,
  type McpCreateMessageResult,
  type McpElicitParams,
  type McpElicitResult,
  type McpListRootsResult,
  type McpLoggingLevel,
} from "./types.js";
import { taskControlOf } from "../eras/2025-11-25/tasks/tools.js";
import type { TaskControl } from "../eras/2025-11-25/tasks/task.js";
import { InputRequiredSignal } from "../rpc/errors.js";
import type { InputSource } from "../rpc/handler-context.js";

/** @internal */
export const LOGGING_MESSAGE_NOTIFICATION = "notifications/message";

/** Per-connection state McpServer keeps beside each ServerSession. */
export interface McpConnection {
  readonly session: ServerSession;
  /** Whether the server advertised logging; without it, log messages must not be sent. */
  readonly logging: boolean;
  /** Index into LOGGING_LEVELS of the least severe level the client wants; 0 until it sets one. */
  minLogLevel: number;
  /** Resource URIs the client subscribed to. */
  readonly subscriptions: Set<string>;
}

/**
 * A Peer that sends on behalf of one request being served, for the generated typed Server:
 * `new Server(requestPeer(ctx)).createMessage(...)` inside any request handler. It cannot take handlers.
 */
export function requestPeer(ctx: Pick<RequestContext, "request" | "notify">): Peer {
  return {
    request: (method: string, params: JsonObject | undefined, options?: RequestOptions) =>
      ctx.request(method, params, options),
    notify: (method: string, params?: JsonObject) => ctx.notify(method, params),
    onRequest: () => {
      throw new Error("A request-scoped peer cannot take handlers; register them on the session");
    },
    onNotification: () => {
      throw new Error("A request-scoped peer cannot take handlers; register them on the session");
    },
  };
}

/** Thrown by `log` when the server was created without `logging: true`. */
export class LoggingDisabledError extends Error {
  constructor() {
    super("Logging is not enabled on this McpServer: pass { logging: true } so the capability is advertised");
    this.name = "LoggingDisabledError";
  }
}

/**
 * @internal Send a notifications/message if its level passes the client's filter: the level the request's sender
 * wants (`identity`; none set: nothing is sent), else the one set on the connection.
 */
export function sendLog(
  connection: McpConnection,
  send: (method: string, params: JsonObject) => Promise<void>,
  level: McpLoggingLevel,
  data: unknown,
  logger: string | undefined,
  identity?: PeerIdentity,
): Promise<void> {
  if (!connection.logging) return Promise.reject(new LoggingDisabledError());
  const severity = LOGGING_LEVELS.indexOf(level);
  if (severity < 0) return Promise.reject(new RangeError(`Unknown logging level ${JSON.stringify(level)}`));
  const floor =
    identity === undefined
      ? connection.minLogLevel
      : identity.logLevel === undefined
        ? Infinity
        : LOGGING_LEVELS.indexOf(identity.logLevel as McpLoggingLevel);
  if (severity < floor) return Promise.resolve();
  const params: JsonObject = logger === undefined ? { level, data } : { level, logger, data };
  return send(LOGGING_MESSAGE_NOTIFICATION, params);
}

/** Starts the task a call turns into when its handler says so (see McpToolConfig.taskStart). */
export type TaskStarter = (ctx: McpContext) => Promise<TaskControl | undefined>;

/**
 * Given to every handler McpServer calls. Requests and notifications sent through it are tied to the
 * request being served (HTTP routes them onto that request's stream); capability checks still apply, so
 * asking a client for sampling it did not advertise rejects with CapabilityError and sends nothing.
 */
export class McpContext {
  private peerView: Peer | undefined = undefined;
  /**
   * The W3C trace context (`traceparent`, `tracestate`, `baggage`) the request carried in its `_meta`, each value
   * present only when well-formed; undefined when it carried none. Read with or without OpenTelemetry: pass it on in
   * the `_meta` of what the handler sends (`ctx.elicit({ ..., _meta: { ...ctx.trace } })`) to keep one trace.
   */
  readonly trace: TraceContext | undefined;

  constructor(
    private inner: RequestContext,
    private readonly connection: McpConnection,
    /** The answers a 2025 client gave to the handler's last `inputRequired`, when McpServer ran it again. */
    private readonly round?: { readonly responses: JsonObject; readonly state: string | undefined },
    private readonly starter?: TaskStarter,
  ) {
    // Kept from the request itself: a call that becomes a task goes on under the task's context.
    this.trace = inner.trace;
  }

  /**
   * Go on as a task, when this call may become one and is not yet: the request is answered with the task, and from
   * here on the handler runs on the task's context (its signal, `ctx.task`; asks park the task as input_required).
   * Resolves with the task, or undefined when the call runs plainly (the client cannot take a task): the handler then
   * simply goes on and answers with its result. A tool with `taskStart: "handler"` calls it after the input it asks
   * for up front (those asks are rounds of the call itself).
   */
  startTask(): Promise<TaskControl | undefined> {
    const current = this.task;
    if (current !== undefined || this.starter === undefined) return Promise.resolve(current);
    return this.starter(this);
  }

  /** @internal The handler goes on under another context (the task its call became). */
  rebind(inner: RequestContext): void {
    this.inner = inner;
    this.peerView = undefined;
  }

  /** The connection's session (client info, client capabilities, protocol version). */
  get session(): ServerSession {
    return this.connection.session;
  }
  get requestId(): RequestId {
    return this.inner.requestId;
  }
  get method(): string {
    return this.inner.method;
  }
  /** Aborts when the client cancels the request or the connection closes. */
  get signal(): AbortSignal {
    return this.inner.signal;
  }
  get principal(): string | undefined {
    return this.inner.principal;
  }
  /** What authentication granted the caller (scopes, claims), over an HTTP transport that authenticates. */
  get auth(): AuthGrant | undefined {
    return this.inner.auth;
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }
  /**
   * What the client said of itself for this request (protocol revision, capabilities, name and version, log level),
   * whether it said so once at the start of the connection or with every request.
   */
  get peerIdentity(): PeerIdentity | undefined {
    return this.inner.peerIdentity;
  }
  /**
   * The task this call runs as (a tools/call the client sent as a task), else undefined. `ctx.task.status(text)`
   * sets its statusMessage; ctx.elicit/createMessage move it to input_required until answered.
   */
  get task(): TaskControl | undefined {
    return taskControlOf(this.inner);
  }

  /**
   * The explicit style of asking for input, beside `await ctx.elicit()`: the answers to the input requests of the
   * round before (keys as the handler named them), or undefined on the first run.
   */
  get inputResponses(): JsonObject | undefined {
    return this.round?.responses ?? this.inputs?.responses;
  }
  /** The state the handler returned with its last `inputRequired`, as the client echoed it (protect what matters). */
  get requestState(): string | undefined {
    return this.round?.state ?? this.inputs?.state;
  }
  /**
   * Ends this run asking the client for input: `return ctx.inputRequired({ inputRequests: { key: { method, params } },
   * requestState })`. A 2026-07-28 client answers with a retry; for a 2025-11-25 client the server sends each request
   * itself and runs the handler again with the answers. Either way the handler then reads `ctx.inputResponses`.
   */
  inputRequired(request: {
    inputRequests: { readonly [key: string]: { method: string; params?: JsonObject } };
    requestState?: string;
  }): never {
    const inputs = this.inputs;
    if (inputs !== undefined) throw inputs.required(request.inputRequests, request.requestState);
    throw new InputRequiredSignal(request.inputRequests, request.requestState);
  }
  private get inputs(): InputSource | undefined {
    return (this.inner as { inputs?: InputSource }).inputs;
  }

  /** Report progress when the client asked for it (a no-op otherwise); values must increase. */
  progress(progress: number, total?: number, message?: string): Promise<void> {
    return this.inner.progress(progress, total, message);
  }

  /** Any request to the client, untyped; prefer the helpers below or `new Server(ctx.peer)` from the SDK. */
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    return this.inner.request(method, params, options);
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    return this.inner.notify(method, params);
  }

  /** A log message for the client, dropped below the level it asked for (logging/setLevel, or per request). */
  log(level: McpLoggingLevel, data: unknown, logger?: string): Promise<void> {
    return sendLog(this.connection, (m, p) => this.inner.notify(m, p), level, data, logger, this.inner.peerIdentity);
  }

  /** Ask the client to sample its LLM (`sampling/createMessage`); needs the client's sampling capability. */
  createMessage(params: McpCreateMessageParams, options?: RequestOptions): Promise<McpCreateMessageResult> {
    return this.ask("sampling/createMessage", params, options);
  }

  /** Ask the user for input through the client (`elicitation/create`); needs the elicitation capability. */
  elicit(params: McpElicitParams, options?: RequestOptions): Promise<McpElicitResult> {
    return this.ask("elicitation/create", params, options);
  }

  /** The client's roots (`roots/list`); needs the roots capability. */
  listRoots(options?: RequestOptions): Promise<McpListRootsResult> {
    return this.ask("roots/list", undefined, options);
  }

  /** A request to the client whose result the typed method's signature describes (the session checks it). */
  private ask<R>(method: string, params: object | undefined, options: RequestOptions | undefined): Promise<R> {
    return this.inner.request(method, params as JsonObject | undefined, options) as Promise<unknown> as Promise<R>;
  }

  /**
   * A Peer whose requests and notifications belong to this request, for wrapping in the generated typed
   * Server (`new Server(ctx.peer).createMessage(...)`). Handler registration goes to the session.
   */
  get peer(): Peer {
    if (this.peerView === undefined) {
      const session = this.connection.session;
      this.peerView = {
        ...requestPeer(this.inner),
        onRequest: (method: string, handler: RequestHandler) => session.onRequest(method, handler),
        onNotification: (method: string, handler: NotificationHandler) => session.onNotification(method, handler),
      };
    }
    return this.peerView;
  }
}
