// The schema-agnostic JSON-RPC session: the connection, the extension hooks, and routing of what arrives.
import {
  ErrorCode,
  isJsonRpcMessage,
  isRequestId,
  type JsonObject,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from "../jsonrpc.js";
import type { DispatchTable, MethodSpec } from "../dispatch.js";
import { SENT, type InboundInfo, type Transport } from "../transport.js";
import type { NotificationHandler, Peer, RequestHandler, RequestOptions } from "../peer.js";
import { ConnectionClosedError } from "../errors.js";
import { limitOption } from "../limits.js";
import { SessionStateKey, type SessionExtension } from "./extension.js";
import { OperationRegistry, type OutboundOperation } from "../operations.js";
import { DEFAULT_PROGRESS_INTERVAL_MS, PROGRESS_NOTIFICATION, type ProgressSink } from "../progress.js";
import { ExtensionHooks } from "./hooks.js";
import { InboundRequests } from "./inbound.js";
import { sendError, type SessionDebugEvent, type SessionLink } from "./link.js";
import { CANCELLED_NOTIFICATION, DEFAULT_REQUEST_TIMEOUT_MS, OutboundRequests } from "./outbound.js";
import { withIssues } from "./validation.js";

export { SessionStateKey, type SessionExtension } from "./extension.js";
export type { SessionDebugEvent } from "./link.js";
export { CANCELLED_NOTIFICATION, DEFAULT_REQUEST_TIMEOUT_MS } from "./outbound.js";

/** What a notification handler is told about a sender the transport knows nothing of. */
const NO_SENDER: InboundInfo = Object.freeze({});
/** Requests one session serves at once by default; see SessionOptions.maxInFlightRequests. */
export const DEFAULT_MAX_IN_FLIGHT_REQUESTS = 100;
/** Requests that lost their reply path and may run on, per session, by default; see maxDetachedRequests. */
export const DEFAULT_MAX_DETACHED_REQUESTS = 100;

export interface SessionOptions {
  /** Methods the peer may send us: the requests we serve and the notifications we accept. */
  inbound: DispatchTable;
  /** Methods we send; when an entry has `isResult`, responses are checked with it. */
  outbound?: DispatchTable;
  /** Envelope guard (the generated `isJSONRPCMessage`); defaults to a hand-written frame check. */
  isMessage?: (value: unknown) => boolean;
  /** Milliseconds; default 60 000. */
  defaultTimeout?: number;
  /** Minimum spacing of progress notifications we send per request, ms; default 50, 0 disables. */
  progressInterval?: number;
  /** How many finished tokens/ids to remember for quiet late-message handling; default 256. */
  recentLimit?: number;
  /**
   * How many of the peer's requests this session serves at once; one more is answered -32000 "too many requests
   * in flight" without running its handler. Default 100; 0 or Infinity for no cap.
   */
  maxInFlightRequests?: number;
  /**
   * Requests whose reply path lost its connection before their response (HTTP: the POST's stream closed; the client
   * may come back for the answer) stop counting against `maxInFlightRequests` at once and run on; this bounds how
   * many may, per session: one more aborts the oldest of them. Default 100; 0 aborts each at once; Infinity for no cap.
   */
  maxDetachedRequests?: number;
  /**
   * Methods served even when `maxInFlightRequests` is reached: cheap ones that answer at once, and those that free
   * the places of others (the protocol above names them, as MCP does ping and tasks/cancel). Default none.
   */
  uncapped?: readonly string[];
  /**
   * Methods neither side cancels (the protocol above may forbid it, as MCP does for its handshake): no cancellation
   * is sent for ours, one the peer sends is ignored. Default none.
   */
  uncancellable?: readonly string[];
  onerror?: (error: Error) => void;
  ondebug?: (event: SessionDebugEvent) => void;
}

type Fields = { [key: string]: unknown };

const EMPTY_TABLE: DispatchTable = {};
/**
 * A table's entries as a Map, made once per table object and shared by every session over it (they only read it):
 * a server that makes a session per request (HTTP's per-request lane) would otherwise rebuild it each time.
 */
const SPECS = new WeakMap<DispatchTable, ReadonlyMap<string, MethodSpec>>();
const SETS = new WeakMap<readonly string[], ReadonlySet<string>>();
const NO_METHODS: ReadonlySet<string> = new Set();
/** The set of a method list, made once per list: a server may start a session per request with the same lists. */
function setOf(list: readonly string[] | undefined): ReadonlySet<string> {
  if (list === undefined) return NO_METHODS;
  let set = SETS.get(list);
  if (set === undefined) {
    set = new Set(list);
    SETS.set(list, set);
  }
  return set;
}

function specsOf(table: DispatchTable): ReadonlyMap<string, MethodSpec> {
  let specs = SPECS.get(table);
  if (specs === undefined) {
    specs = new Map(Object.entries(table));
    SPECS.set(table, specs);
  }
  return specs;
}

/**
 * One side of a JSON-RPC connection. Implements Peer for the generated stubs; the lifecycle layer
 * (ClientSession, ServerSession) adds the initialize handshake and capability checks on top.
 */
export class Session implements Peer, ProgressSink {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  ondebug?: (event: SessionDebugEvent) => void;
  readonly operations: OperationRegistry;

  protected transport: Transport | undefined = undefined;
  private status: "new" | "open" | "closed" = "new";
  private closingByApp = false;
  private readonly inboundSpecs: ReadonlyMap<string, MethodSpec>;
  private readonly outboundSpecs: ReadonlyMap<string, MethodSpec>;
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly observers = new Map<string, Set<(params: JsonObject | undefined) => void>>();
  private readonly isMessage: (value: unknown) => boolean;
  private readonly hooks: ExtensionHooks;
  private readonly inbound: InboundRequests;
  private readonly outbound: OutboundRequests;
  private readonly link: SessionLink;
  private readonly states = new Map<SessionStateKey<unknown>, unknown>();

  constructor(options: SessionOptions) {
    // Maps, not the table objects: a method named "constructor" or "__proto__" must not hit Object.prototype.
    this.inboundSpecs = specsOf(options.inbound);
    this.isMessage = options.isMessage ?? isJsonRpcMessage;
    const maxInFlight = limitOption("maxInFlightRequests", options.maxInFlightRequests, DEFAULT_MAX_IN_FLIGHT_REQUESTS);
    const maxDetached = limitOption("maxDetachedRequests", options.maxDetachedRequests, DEFAULT_MAX_DETACHED_REQUESTS);
    const uncancellable = setOf(options.uncancellable);
    this.operations = new OperationRegistry(options.recentLimit ?? 256);
    this.onerror = options.onerror;
    this.ondebug = options.ondebug;
    const session = this;
    this.link = {
      get openTransport() {
        return session.status === "open" ? session.transport : undefined;
      },
      reportError: this.reportError,
      debug: (event) => this.debug(event),
    };
    this.hooks = new ExtensionHooks(this.reportError);
    this.inbound = new InboundRequests(this, this.link, this.operations, this.inboundSpecs, this.hooks, {
      maxInFlight: maxInFlight === 0 ? Infinity : maxInFlight,
      progressInterval: options.progressInterval ?? DEFAULT_PROGRESS_INTERVAL_MS,
      uncancellable,
      uncapped: setOf(options.uncapped),
      maxDetached,
    });
    this.outboundSpecs = specsOf(options.outbound ?? EMPTY_TABLE);
    this.outbound = new OutboundRequests(
      this.link,
      this.operations,
      this.outboundSpecs,
      options.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
      uncancellable,
    );
  }

  get isOpen(): boolean {
    return this.status === "open";
  }

  /** Take over the transport's callbacks and start it. One transport per session. */
  async connect(transport: Transport): Promise<void> {
    if (this.transport !== undefined) throw new Error("Session is already connected");
    return this.open(transport);
  }

  private async open(transport: Transport): Promise<void> {
    this.transport = transport;
    transport.onmessage = this.handleMessage;
    transport.onmalformed = this.handleMalformed;
    transport.onclose = this.handleClose;
    transport.onerror = this.reportError;
    const appExpired = transport.onsessionexpired;
    transport.onsessionexpired = (error) => {
      appExpired?.call(transport, error);
      if (this.transport === transport) this.hooks.sessionExpired(error);
    };
    this.status = "open";
    try {
      await transport.start();
    } catch (error) {
      this.handleClose();
      throw error;
    }
  }

  /** Close the transport; every pending request rejects with ConnectionClosedError. */
  async close(): Promise<void> {
    if (this.status === "closed") return;
    this.closingByApp = true;
    const transport = this.transport;
    try {
      if (transport !== undefined) await transport.close();
    } finally {
      // Not every transport reports its own close; make sure the session is torn down either way.
      this.handleClose();
    }
  }

  /** Register an extension (see SessionExtension); returns the function that removes it. */
  use(extension: SessionExtension): () => void {
    return this.hooks.add(extension);
  }

  /** The state `key` keeps on this session, made by `key.create` on first use. */
  state<T>(key: SessionStateKey<T>): T {
    const states = this.states as Map<SessionStateKey<T>, T>;
    let value = states.get(key);
    if (value === undefined && !states.has(key)) {
      value = key.create(this);
      states.set(key, value);
    }
    return value as T;
  }

  /** The state `key` keeps on this session, or undefined when none was made (the feature is not installed here). */
  peekState<T>(key: SessionStateKey<T>): T | undefined {
    return (this.states as Map<SessionStateKey<T>, T>).get(key);
  }

  onRequest(method: string, handler: RequestHandler): void {
    this.inbound.handlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.set(method, handler);
  }

  /**
   * Listen to a notification method without displacing its handler (several listeners may watch one method,
   * e.g. an async tool call handle watching notifications/cancelled). Returns the function that stops it.
   */
  observe(method: string, listener: (params: JsonObject | undefined) => void): () => void {
    let set = this.observers.get(method);
    if (set === undefined) this.observers.set(method, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0 && this.observers.get(method) === set) this.observers.delete(method);
    };
  }

  /** The handler registered for a request method (a feature may run it itself, as async tool runs do). */
  /** @internal The spec of a method the peer may send us (from the inbound table), to check params taken another way. */
  inboundSpec(method: string): MethodSpec | undefined {
    return this.inboundSpecs.get(method);
  }

  /** @internal The spec of a method we send (from the outbound table), to check a result taken another way. */
  outboundSpec(method: string): MethodSpec | undefined {
    return this.outboundSpecs.get(method);
  }

  requestHandler(method: string): RequestHandler | undefined {
    return this.inbound.handlers.get(method);
  }

  removeRequestHandler(method: string): void {
    this.inbound.handlers.delete(method);
  }

  /** Whether a handler for notification `method` is registered. */
  hasNotificationHandler(method: string): boolean {
    return this.notificationHandlers.has(method);
  }

  removeNotificationHandler(method: string): void {
    this.notificationHandlers.delete(method);
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    return this.sendRequest(method, params, options, undefined);
  }

  /**
   * The id the next request of this session will carry (ids are handed out in order, one per request): a
   * caller that must recognise later messages naming its request (notifications/cancelled) reads it first.
   */
  get nextRequestId(): RequestId {
    return this.outbound.nextId;
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    return this.sendNotification(method, params, undefined);
  }

  /** @internal Send a ready-made message on the current connection (resumable replay, async fan-out). */
  transmit(message: JsonRpcMessage, relatedRequestId?: RequestId, ondelivered?: () => void): Promise<void> {
    const transport = this.transport;
    if (this.status !== "open" || transport === undefined)
      return Promise.reject(new ConnectionClosedError("Not connected"));
    if (ondelivered !== undefined) return transport.send(message, { relatedRequestId, ondelivered });
    return transport.send(message, relatedRequestId === undefined ? undefined : { relatedRequestId });
  }

  /** @internal Whether the current transport reports delivery (see Transport.confirmsDelivery). */
  get confirmsDelivery(): boolean {
    return this.transport?.confirmsDelivery === true;
  }

  /**
   * @internal Send a request under the id of an outbound operation that is still pending (a protocol-level
   * resume reuses the original id): its response settles that operation.
   */
  resendAs(op: OutboundOperation, method: string, params: JsonObject | undefined): Promise<void> {
    if (op.state !== "active") return SENT;
    this.outbound.reinstate(op);
    const message: JsonRpcRequest =
      params === undefined ? { jsonrpc: "2.0", id: op.id, method } : { jsonrpc: "2.0", id: op.id, method, params };
    // A failed send does not fail the operation: whoever resends decides what happens next.
    return this.transmit(message);
  }

  /**
   * Continue on a new transport after the previous one closed (reconnection). Operations kept across the
   * close stay pending; nothing is re-sent here.
   */
  protected async replaceTransport(transport: Transport): Promise<void> {
    if (this.status === "open") throw new Error("Session is still connected");
    this.status = "new";
    this.transport = undefined;
    this.closingByApp = false;
    await this.open(transport);
  }

  /** Treat the current transport as gone even if it never reported its close (a reconnection that failed). */
  protected abandonTransport(): void {
    this.handleClose();
  }

  /** @internal Also used by handler contexts, with the inbound request id for routing. */
  sendRequest(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
    relatedRequestId: RequestId | undefined,
  ): Promise<JsonObject> {
    const refusal = this.refusal(method);
    if (refusal !== undefined) return Promise.reject(refusal);
    return this.outbound.start(this.transport!, method, params, options, relatedRequestId);
  }

  /**
   * @internal A request whose result the caller checks itself (a protocol layer whose revision has its own result
   * types): the session's outbound table does not judge it.
   */
  sendUnchecked(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
  ): Promise<JsonObject> {
    const refusal = this.refusal(method);
    if (refusal !== undefined) return Promise.reject(refusal);
    return this.outbound.start(this.transport!, method, params, options, undefined, false);
  }

  /** @internal */
  sendNotification(
    method: string,
    params: JsonObject | undefined,
    relatedRequestId: RequestId | undefined,
  ): Promise<void> {
    const refusal = this.refusal(method);
    if (refusal !== undefined) return Promise.reject(refusal);
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    return this.transmit(message, relatedRequestId);
  }

  /** Why `method` may not be sent now (closed, or an extension refuses it), or undefined when it may. */
  private refusal(method: string): Error | undefined {
    if (this.status !== "open") return new ConnectionClosedError("Not connected");
    return this.hooks.checkOutbound(method);
  }

  /** ProgressSink: progress for a request we serve. */
  sendProgress(params: JsonObject, relatedRequestId: RequestId): Promise<void> {
    const transport = this.transport;
    if (this.status !== "open" || transport === undefined) return SENT;
    return transport.send({ jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params }, { relatedRequestId });
  }

  // ---- receive path -------------------------------------------------------------------------

  private readonly handleMessage = (message: unknown, info?: InboundInfo): void => {
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      sendError(this.link, undefined, ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC message object");
      return;
    }
    const m = message as Fields;
    const method = m.method as string | undefined;
    const id = m.id;
    // JSON-RPC allows a null id (and the generated guard reads an odd id as a notification's extra member), but MCP
    // ids are strings or integers: such a request is refused here, for every transport, before anything serves it.
    if (method !== undefined && id !== undefined && !isRequestId(id)) {
      sendError(this.link, undefined, ErrorCode.InvalidRequest, "Invalid Request: id must be a string or an integer");
      return;
    }
    if (!this.isMessage(m)) {
      this.handleInvalidEnvelope(m);
      return;
    }
    if (this.hooks.filtersInbound && !this.hooks.accept(m)) return;
    if (method !== undefined) {
      if (id !== undefined) this.inbound.request(m as unknown as JsonRpcRequest, info);
      else this.handleNotification(method, m.params as JsonObject | undefined, info);
    } else {
      this.outbound.response(m);
    }
  };

  private handleInvalidEnvelope(m: Fields): void {
    const id = isRequestId(m.id) ? m.id : undefined;
    if (m.method === undefined && (m.result !== undefined || m.error !== undefined)) {
      this.outbound.malformedResponse(id, m);
      return;
    }
    sendError(this.link, id, ErrorCode.InvalidRequest, "Invalid Request");
  }

  private readonly handleMalformed = (error: Error): void => {
    sendError(this.link, undefined, ErrorCode.ParseError, "Parse error", error.message);
  };

  private handleNotification(method: string, params: JsonObject | undefined, info: InboundInfo | undefined): void {
    const spec = this.inboundSpecs.get(method);
    if (spec !== undefined) {
      if (spec.kind !== "notification") {
        this.debug({ kind: "unknown-notification", method, detail: "method is a request" });
        return;
      }
      if (!spec.isParams(params)) {
        withIssues(
          spec.explainParams(params),
          (detail) => this.debug({ kind: "invalid-notification-params", method, detail }),
          this.reportError,
        );
        return;
      }
    } else if (method !== PROGRESS_NOTIFICATION && method !== CANCELLED_NOTIFICATION) {
      // The two notifications the session itself relies on work even if a table leaves them out.
      this.debug({ kind: "unknown-notification", method });
      return;
    }
    if (method === PROGRESS_NOTIFICATION) this.outbound.progress(params);
    else if (method === CANCELLED_NOTIFICATION) {
      this.inbound.cancelled(params);
      this.hooks.notification(method, params);
    } else this.hooks.notification(method, params);
    const observers = this.observers.get(method);
    if (observers !== undefined) {
      for (const listener of [...observers]) {
        try {
          listener(params);
        } catch (error) {
          this.reportError(error);
        }
      }
    }
    const handler = this.notificationHandlers.get(method);
    if (handler === undefined) return;
    try {
      const r = handler(params, info ?? NO_SENDER);
      if (r !== undefined && typeof (r as Promise<void>).then === "function")
        (r as Promise<void>).then(undefined, this.reportError);
    } catch (error) {
      this.reportError(error);
    }
  }

  private readonly handleClose = (): void => {
    if (this.status === "closed") return;
    this.status = "closed";
    const byApp = this.closingByApp;
    // A transport that knows why it closed (a child process that exited) says so to every pending call. Made only
    // when something is pending: an error's stack is not free, and a per-request connection closes after each one.
    if (this.operations.size > 0) {
      const closeError = this.transport?.closeError ?? new ConnectionClosedError();
      this.outbound.connectionClosed(closeError, byApp);
      this.inbound.connectionClosed(closeError, byApp);
    }
    this.outbound.forgetClosedProgressTokens();
    if (this.hooks.closed(byApp)) return;
    const onclose = this.onclose;
    if (onclose !== undefined) {
      try {
        onclose();
      } catch (error) {
        this.reportError(error);
      }
    }
  };

  private debug(event: SessionDebugEvent): void {
    const ondebug = this.ondebug;
    if (ondebug !== undefined) ondebug(event);
  }

  private readonly reportError = (error: unknown): void => {
    const onerror = this.onerror;
    if (onerror !== undefined) onerror(error instanceof Error ? error : new Error(String(error)));
  };
}
