// The schema-agnostic JSON-RPC session: correlation, dispatch through generated tables, progress, timeouts, cancellation.
import {
  ErrorCode,
  RpcError,
  isJsonRpcMessage,
  isRequestId,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from "./jsonrpc.js";
import type { DispatchTable, Explanation, MethodSpec, ValidationIssue } from "./dispatch.js";
import { SENT, type InboundInfo, type ReplyChannel, type SendOptions, type Transport } from "./transport.js";
import type { NotificationHandler, Peer, ProgressInfo, RequestHandler, RequestOptions } from "./peer.js";
import { ConnectionClosedError, InvalidResultError, RequestCancelledError, RequestTimeoutError } from "./errors.js";
import { limitOption } from "./limits.js";
import { HandlerContext } from "./handler-context.js";
import { SessionStateKey, type SessionExtension } from "./session-extension.js";

export { SessionStateKey, type SessionExtension } from "./session-extension.js";
import { InboundOperation, OperationRegistry, OutboundOperation } from "./operations.js";
import {
  DEFAULT_PROGRESS_INTERVAL_MS,
  PROGRESS_NOTIFICATION,
  ProgressReporter,
  readProgressToken,
  withProgressToken,
  type ProgressSink,
} from "./progress.js";

/** @internal */
export const CANCELLED_NOTIFICATION = "notifications/cancelled";
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** What a notification handler is told about a sender the transport knows nothing of. */
const NO_SENDER: InboundInfo = Object.freeze({});
/** Requests one session serves at once by default; see SessionOptions.maxInFlightRequests. */
export const DEFAULT_MAX_IN_FLIGHT_REQUESTS = 100;

/** Something worth knowing when debugging that is not an error (ignored notifications, late messages). */
export interface SessionDebugEvent {
  kind:
    | "unknown-notification"
    | "invalid-notification-params"
    | "late-progress"
    | "late-response"
    | "cancel-unknown-request";
  method?: string;
  id?: RequestId;
  detail?: unknown;
}

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
  onerror?: (error: Error) => void;
  ondebug?: (event: SessionDebugEvent) => void;
}

type Fields = { [key: string]: unknown };

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
  private nextId = 0;
  private readonly inboundSpecs: Map<string, MethodSpec>;
  private readonly outboundSpecs: Map<string, MethodSpec>;
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly observers = new Map<string, Set<(params: JsonObject | undefined) => void>>();
  private readonly isMessage: (value: unknown) => boolean;
  private readonly defaultTimeout: number;
  private readonly progressInterval: number;
  private readonly maxInFlight: number;
  private extensions: readonly SessionExtension[] = [];
  /** Only the hooks on the per-request path get their own lists: most sessions have none of them. */
  private startHooks: readonly SessionExtension[] = [];
  private acceptHooks: readonly SessionExtension[] = [];
  private outboundHooks: readonly SessionExtension[] = [];
  private readonly states = new Map<SessionStateKey<unknown>, unknown>();

  constructor(options: SessionOptions) {
    // Maps, not the table objects: a method named "constructor" or "__proto__" must not hit Object.prototype.
    this.inboundSpecs = new Map(Object.entries(options.inbound));
    this.outboundSpecs = new Map(Object.entries(options.outbound ?? {}));
    this.isMessage = options.isMessage ?? isJsonRpcMessage;
    this.defaultTimeout = options.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.progressInterval = options.progressInterval ?? DEFAULT_PROGRESS_INTERVAL_MS;
    const maxInFlight = limitOption("maxInFlightRequests", options.maxInFlightRequests, DEFAULT_MAX_IN_FLIGHT_REQUESTS);
    this.maxInFlight = maxInFlight === 0 ? Infinity : maxInFlight;
    this.operations = new OperationRegistry(options.recentLimit ?? 256);
    this.onerror = options.onerror;
    this.ondebug = options.ondebug;
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
      if (this.transport !== transport) return;
      for (const extension of this.extensions) {
        if (extension.sessionExpired === undefined) continue;
        try {
          extension.sessionExpired(error);
        } catch (e) {
          this.reportError(e);
        }
      }
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
    this.extensions = [...this.extensions, extension];
    this.indexHooks();
    return () => {
      this.extensions = this.extensions.filter((e) => e !== extension);
      this.indexHooks();
    };
  }

  private indexHooks(): void {
    const all = this.extensions;
    this.startHooks = all.filter((e) => e.requestStarted !== undefined);
    this.acceptHooks = all.filter((e) => e.accept !== undefined);
    this.outboundHooks = all.filter((e) => e.checkOutbound !== undefined);
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
    this.requestHandlers.set(method, handler);
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

  /** The handler registered for a request method (async tool runs call the session's own tools/call handler). */
  requestHandler(method: string): RequestHandler | undefined {
    return this.requestHandlers.get(method);
  }

  removeRequestHandler(method: string): void {
    this.requestHandlers.delete(method);
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
    return this.nextId;
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
    if (this.operations.outbound.get(op.id) !== op) this.operations.outbound.set(op.id, op);
    if (op.progressToken !== undefined) this.operations.byProgressToken.set(op.progressToken, op);
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

  /** The extensions' refusal to send `method`, if any. */
  private checkOutbound(method: string): Error | undefined {
    const hooks = this.outboundHooks;
    for (let i = 0; i < hooks.length; i++) {
      const refusal = hooks[i].checkOutbound!(method);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  private acceptInbound(message: JsonObject): boolean {
    const hooks = this.acceptHooks;
    for (let i = 0; i < hooks.length; i++) {
      try {
        if (!hooks[i].accept!(message)) return false;
      } catch (error) {
        this.reportError(error);
      }
    }
    return true;
  }

  private observeNotification(method: string, params: JsonObject | undefined): void {
    for (const extension of this.extensions) {
      if (extension.notification === undefined) continue;
      try {
        extension.notification(method, params);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  private mayReuseId(method: string, existing: InboundOperation): boolean {
    for (const extension of this.extensions) if (extension.mayReuseId?.(method, existing) === true) return true;
    return false;
  }

  /** @internal Also used by handler contexts, with the inbound request id for routing. */
  sendRequest(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
    relatedRequestId: RequestId | undefined,
  ): Promise<JsonObject> {
    if (this.status !== "open") return Promise.reject(new ConnectionClosedError("Not connected"));
    const refusal = this.checkOutbound(method);
    if (refusal !== undefined) return Promise.reject(refusal);
    const signal = options?.signal;
    if (signal !== undefined && signal.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));

    const id = this.nextId++;
    const op = new OutboundOperation(id, method);
    let wireParams = params;
    let timeout = this.defaultTimeout;
    if (options !== undefined) {
      if (options.timeout !== undefined) timeout = options.timeout;
      op.maxTotalTimeout = options.maxTotalTimeout;
      // A token is needed to hear progress even when only the timeout reset cares about it.
      if (options.onProgress !== undefined || options.resetTimeoutOnProgress === true) {
        op.progressToken = id;
        op.onProgress = options.onProgress;
        op.resetTimeoutOnProgress = options.resetTimeoutOnProgress === true;
        wireParams = withProgressToken(params, id);
        this.operations.byProgressToken.set(id, op);
      }
    }
    op.timeout = timeout;
    op.startedAt = Date.now();
    const promise = new Promise<JsonObject>((resolve, reject) => {
      op.resolve = resolve;
      op.reject = reject;
    });
    this.operations.outbound.set(id, op);
    this.armTimeout(op);
    if (signal !== undefined) {
      op.callerSignal = signal;
      op.abortListener = () => this.cancelOutbound(op, signal.reason);
      signal.addEventListener("abort", op.abortListener, { once: true });
    }
    const message: JsonRpcRequest =
      wireParams === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params: wireParams };
    this.transmitRequest(op, message, relatedRequestId === undefined ? undefined : { relatedRequestId });
    return promise;
  }

  /** @internal */
  sendNotification(
    method: string,
    params: JsonObject | undefined,
    relatedRequestId: RequestId | undefined,
  ): Promise<void> {
    if (this.status !== "open") return Promise.reject(new ConnectionClosedError("Not connected"));
    const refusal = this.checkOutbound(method);
    if (refusal !== undefined) return Promise.reject(refusal);
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    return this.transmit(message, relatedRequestId);
  }

  /** ProgressSink: progress for a request we serve. */
  sendProgress(params: JsonObject, relatedRequestId: RequestId): Promise<void> {
    const transport = this.transport;
    if (this.status !== "open" || transport === undefined) return SENT;
    return transport.send({ jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params }, { relatedRequestId });
  }

  /** Not async: a transport that returns SENT costs no promise reaction per request. */
  private transmitRequest(op: OutboundOperation, message: JsonRpcRequest, options: SendOptions | undefined): void {
    let sent: Promise<void>;
    try {
      sent = this.transport!.send(message, options);
    } catch (error) {
      this.failSend(op, error);
      return;
    }
    if (sent !== SENT) sent.catch((error: unknown) => this.failSend(op, error));
  }

  private failSend(op: OutboundOperation, error: unknown): void {
    if (op.state !== "active") return;
    op.state = "failed";
    this.operations.releaseOutbound(op);
    op.reject(error instanceof Error ? error : new Error(String(error)));
  }

  private armTimeout(op: OutboundOperation): void {
    let delay = op.timeout;
    op.timerIsTotal = false;
    if (op.maxTotalTimeout !== undefined) {
      const remaining = op.maxTotalTimeout - (Date.now() - op.startedAt);
      if (remaining <= delay) {
        delay = remaining;
        op.timerIsTotal = true;
      }
    }
    op.timer = setTimeout(onRequestTimeout, delay > 0 ? delay : 0, this, op);
  }

  /** @internal timer callback */
  expire(op: OutboundOperation): void {
    op.timer = undefined;
    if (op.state !== "active") return;
    op.state = "timedOut";
    this.operations.releaseOutbound(op);
    this.operations.abandonedIds.add(op.id);
    const error = op.timerIsTotal
      ? new RequestTimeoutError(op.method, op.maxTotalTimeout!, true)
      : new RequestTimeoutError(op.method, op.timeout);
    this.sendCancelled(op, error.message);
    op.reject(error);
  }

  private cancelOutbound(op: OutboundOperation, reason: unknown): void {
    if (op.state !== "active") return;
    op.state = "cancelled";
    this.operations.releaseOutbound(op);
    this.operations.abandonedIds.add(op.id);
    const error = new RequestCancelledError(op.method, reason);
    this.sendCancelled(op, reasonText(reason));
    op.reject(error);
  }

  private sendCancelled(op: OutboundOperation, reason: string | undefined): void {
    // The spec forbids cancelling initialize; the call still rejects locally.
    if (op.method === "initialize" || this.status !== "open") return;
    const params: JsonObject = reason === undefined ? { requestId: op.id } : { requestId: op.id, reason };
    this.transport!.send({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params }).catch(this.reportError);
  }

  // ---- receive path -------------------------------------------------------------------------

  private readonly handleMessage = (message: unknown, info?: InboundInfo): void => {
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.sendError(undefined, ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC message object");
      return;
    }
    const m = message as Fields;
    const method = m.method as string | undefined;
    const id = m.id;
    // JSON-RPC allows a null id (and the generated guard reads an odd id as a notification's extra member), but MCP
    // ids are strings or integers: such a request is refused here, for every transport, before anything serves it.
    if (method !== undefined && id !== undefined && !isRequestId(id)) {
      this.sendError(undefined, ErrorCode.InvalidRequest, "Invalid Request: id must be a string or an integer");
      return;
    }
    if (!this.isMessage(m)) {
      this.handleInvalidEnvelope(m);
      return;
    }
    if (this.acceptHooks.length > 0 && !this.acceptInbound(m)) return;
    if (method !== undefined) {
      if (id !== undefined) this.handleRequest(m as unknown as JsonRpcRequest, info);
      else this.handleNotification(method, m.params as JsonObject | undefined, info);
    } else {
      this.handleResponse(m);
    }
  };

  private handleInvalidEnvelope(m: Fields): void {
    const id = isRequestId(m.id) ? m.id : undefined;
    // A broken response gets no reply (replying to responses could ping-pong); fail the call it answers.
    if (m.method === undefined && (m.result !== undefined || m.error !== undefined)) {
      const op = id === undefined ? undefined : this.operations.outbound.get(id);
      const error = new RpcError(ErrorCode.InvalidRequest, "Malformed response from peer", { response: m });
      if (op !== undefined && op.state === "active") {
        op.state = "failed";
        this.operations.releaseOutbound(op);
        op.reject(error);
      } else {
        this.reportError(error);
      }
      return;
    }
    this.sendError(id, ErrorCode.InvalidRequest, "Invalid Request");
  }

  private readonly handleMalformed = (error: Error): void => {
    this.sendError(undefined, ErrorCode.ParseError, "Parse error", error.message);
  };

  private handleRequest(m: JsonRpcRequest, info: InboundInfo | undefined): void {
    const id = m.id;
    const method = m.method;
    const spec = this.inboundSpecs.get(method);
    const handler = this.requestHandlers.get(method);
    // Errors go on the request's own reply channel: its id may be that of another request still in flight.
    const reply = info?.reply;
    if (spec === undefined || spec.kind !== "request" || handler === undefined) {
      this.sendError(id, ErrorCode.MethodNotFound, `Method not found: ${method}`, undefined, reply);
      return;
    }
    const params = m.params;
    if (!spec.isParams(params)) {
      withIssues(
        spec.explainParams(params),
        (errors) => this.sendError(id, ErrorCode.InvalidParams, `Invalid params for ${method}`, { errors }, reply),
        this.reportError,
      );
      return;
    }
    const inbound = this.operations.inbound;
    // An extension may let a request reuse the id of one still registered here (a resume of that request).
    const existing = inbound.get(id);
    if (existing !== undefined && !this.mayReuseId(method, existing)) {
      this.sendError(
        id,
        ErrorCode.InvalidRequest,
        `Request id ${JSON.stringify(id)} is already in use`,
        undefined,
        reply,
      );
      return;
    }
    // Counted as what the peer awaits an answer for: a cancelled request frees its place at once, and a resume that
    // takes over its request's id adds nothing.
    if (existing === undefined && inbound.size >= this.maxInFlight) {
      this.sendError(
        id,
        ErrorCode.ServerBusy,
        "too many requests in flight",
        { maxInFlightRequests: this.maxInFlight },
        reply,
      );
      return;
    }
    const context = new HandlerContext(this, id, method, info);
    const token = readProgressToken(params);
    if (token !== undefined) {
      context.progressToken = token;
      context.reporter = new ProgressReporter(token, id, context, this.progressInterval);
    }
    // A request reusing an id leaves the registered one alone: only the layer serving it, once it accepted the
    // request, takes the id over (a resume with a wrong token must change nothing about a live request).
    if (existing === undefined) inbound.set(id, context);
    const hooks = this.startHooks;
    for (let i = 0; i < hooks.length; i++) {
      try {
        hooks[i].requestStarted!(context, params);
      } catch (error) {
        this.reportError(error);
      }
    }
    this.serve(handler, params, context);
  }

  private async serve(handler: RequestHandler, params: JsonObject | undefined, context: HandlerContext): Promise<void> {
    let result: unknown;
    try {
      result = await handler(params, context);
    } catch (error) {
      this.finish(context, undefined, error instanceof RpcError ? error.toJSON() : internalError(error));
      return;
    }
    if (result === undefined) result = {};
    else if (typeof result !== "object" || result === null || Array.isArray(result)) {
      this.finish(context, undefined, {
        code: ErrorCode.InternalError,
        message: `Handler for ${context.method} returned a non-object result`,
      });
      return;
    }
    this.finish(context, result as JsonObject, undefined);
  }

  private finish(context: HandlerContext, result: JsonObject | undefined, error: JsonRpcErrorObject | undefined): void {
    const active = context.state === "active";
    if (active) {
      context.state = error === undefined ? "completed" : "failed";
      // The last held progress value must reach the peer before the response does.
      if (context.reporter !== undefined) context.reporter.flush();
    }
    this.operations.releaseInbound(context);
    const outlet = context.outlet;
    // Cancelled or disconnected: the peer will not use the result, so it is not sent.
    if (!active || (this.status !== "open" && outlet === undefined)) return;
    const message: JsonRpcMessage =
      error === undefined
        ? { jsonrpc: "2.0", id: context.requestId, result: result! }
        : { jsonrpc: "2.0", id: context.requestId, error };
    if (outlet !== undefined) {
      outlet.send(message);
      return;
    }
    const reply = context.reply;
    const sent = this.transport!.send(
      message,
      reply === undefined ? { relatedRequestId: context.requestId } : { relatedRequestId: context.requestId, reply },
    );
    if (sent !== SENT) sent.catch(this.reportError);
  }

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
    if (method === PROGRESS_NOTIFICATION) this.handleProgress(params);
    else if (method === CANCELLED_NOTIFICATION) {
      this.handleCancelled(params);
      this.observeNotification(method, params);
    } else this.observeNotification(method, params);
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

  private handleProgress(params: JsonObject | undefined): void {
    if (params === undefined) return;
    const token = params.progressToken;
    const progress = params.progress;
    if ((typeof token !== "string" && typeof token !== "number") || typeof progress !== "number") {
      this.debug({ kind: "invalid-notification-params", method: PROGRESS_NOTIFICATION, detail: params });
      return;
    }
    const op = this.operations.byProgressToken.get(token);
    if (op === undefined) {
      if (this.operations.recentTokens.has(token)) this.debug({ kind: "late-progress", detail: token });
      else this.reportError(new Error(`Progress for unknown token ${JSON.stringify(token)}`));
      return;
    }
    if (op.resetTimeoutOnProgress && op.timer !== undefined && !op.timerIsTotal) {
      clearTimeout(op.timer);
      this.armTimeout(op);
    }
    const onProgress = op.onProgress;
    if (onProgress === undefined) return;
    const info: ProgressInfo = { progress };
    if (typeof params.total === "number") info.total = params.total;
    if (typeof params.message === "string") info.message = params.message;
    try {
      onProgress(info);
    } catch (error) {
      this.reportError(error);
    }
  }

  private handleCancelled(params: JsonObject | undefined): void {
    const id = params?.requestId;
    if (!isRequestId(id)) return;
    const context = this.operations.inbound.get(id);
    if (context === undefined) {
      // Normal race: the request finished before the cancellation arrived.
      this.debug({ kind: "cancel-unknown-request", id });
      return;
    }
    if (context.method === "initialize") return;
    context.state = "cancelled";
    this.operations.releaseInbound(context);
    const reason = params!.reason;
    context.abort(new RequestCancelledError(context.method, typeof reason === "string" ? reason : undefined));
    const outlet = context.outlet;
    if (outlet !== undefined && outlet.cancelled !== undefined) outlet.cancelled(context);
    // Nothing will be sent as its answer, so the transport need not keep a path open for one.
    if (context instanceof HandlerContext) context.reply?.abandon?.();
  }

  private handleResponse(m: Fields): void {
    const id = m.id as RequestId | undefined;
    const op = id === undefined ? undefined : this.operations.outbound.get(id);
    if (op === undefined) {
      if (id !== undefined && this.operations.abandonedIds.has(id)) {
        this.debug({ kind: "late-response", id });
      } else if (id === undefined) {
        const e = m.error as JsonRpcErrorObject;
        this.reportError(new RpcError(e.code, `Peer reported: ${e.message}`, e.data));
      } else {
        this.reportError(new Error(`Response for unknown request id ${JSON.stringify(id)}`));
      }
      return;
    }
    this.operations.releaseOutbound(op);
    const error = m.error as JsonRpcErrorObject | undefined;
    if (error !== undefined) {
      op.state = "failed";
      op.reject(new RpcError(error.code, error.message, error.data));
      return;
    }
    const result = m.result as JsonObject;
    const spec = this.outboundSpecs.get(op.method);
    if (spec !== undefined && spec.isResult !== undefined && !spec.isResult(result)) {
      op.state = "failed";
      withIssues(
        spec.explainResult !== undefined ? spec.explainResult(result) : [],
        (issues) => op.reject(new InvalidResultError(op.method, op.id, result, issues)),
        this.reportError,
      );
      return;
    }
    op.state = "completed";
    op.resolve(result);
  }

  private readonly handleClose = (): void => {
    if (this.status === "closed") return;
    this.status = "closed";
    const byApp = this.closingByApp;
    const ops = this.operations;
    // A transport that knows why it closed (a child process that exited) says so to every pending call.
    const closeError = this.transport?.closeError ?? new ConnectionClosedError();
    if (ops.outbound.size > 0) {
      const error = closeError;
      for (const op of [...ops.outbound.values()]) {
        // A kept operation stays registered (its response may arrive on the next connection).
        const keeper = op.keeper;
        if (keeper !== undefined) {
          keeper.connectionClosed(op, byApp);
          continue;
        }
        op.state = "closed";
        ops.releaseOutbound(op);
        op.reject(error);
      }
    }
    if (ops.inbound.size > 0) {
      const reason = closeError;
      for (const context of [...ops.inbound.values()]) {
        const outlet = context.outlet;
        if (outlet !== undefined) {
          // Outlives the connection: forget it here without stopping its progress reporter.
          if (ops.inbound.get(context.id) === context) ops.inbound.delete(context.id);
          outlet.connectionClosed(context, byApp);
          continue;
        }
        context.state = "closed";
        ops.releaseInbound(context);
        context.abort(reason);
      }
    }
    for (const [token, op] of ops.byProgressToken) if (op.keeper === undefined) ops.byProgressToken.delete(token);
    let recovering = false;
    for (const extension of this.extensions) {
      if (extension.closed === undefined) continue;
      try {
        if (extension.closed(byApp) === true && !byApp) recovering = true;
      } catch (error) {
        this.reportError(error);
      }
    }
    if (recovering) return;
    const onclose = this.onclose;
    if (onclose !== undefined) {
      try {
        onclose();
      } catch (error) {
        this.reportError(error);
      }
    }
  };

  private sendError(
    id: RequestId | undefined,
    code: number,
    message: string,
    data?: unknown,
    channel?: ReplyChannel,
  ): void {
    const transport = this.transport;
    if (this.status !== "open" || transport === undefined) return;
    const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
    const reply: JsonRpcMessage = id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error };
    transport
      .send(reply, id === undefined ? undefined : { relatedRequestId: id, reply: channel })
      .catch(this.reportError);
  }

  private debug(event: SessionDebugEvent): void {
    const ondebug = this.ondebug;
    if (ondebug !== undefined) ondebug(event);
  }

  private readonly reportError = (error: unknown): void => {
    const onerror = this.onerror;
    if (onerror !== undefined) onerror(error instanceof Error ? error : new Error(String(error)));
  };
}

function onRequestTimeout(session: Session, op: OutboundOperation): void {
  session.expire(op);
}

function internalError(error: unknown): JsonRpcErrorObject {
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.InternalError, message: message === "" ? "Internal error" : message };
}

function reasonText(reason: unknown): string | undefined {
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return undefined;
}

/**
 * Hands the issues to `use`: in the same turn when the explainer answered synchronously, else once they have
 * loaded. If the validators cannot be loaded, `use` still runs, with one issue at the root saying why, so the
 * peer gets its error either way; `onerror` receives what `use` throws after an asynchronous load.
 */
function withIssues(
  explanation: Explanation,
  use: (issues: ValidationIssue[]) => void,
  onerror: (error: unknown) => void,
): void {
  if (Array.isArray(explanation)) {
    use(explanation);
    return;
  }
  Promise.resolve(explanation)
    .then(
      (issues) => issues,
      (error: unknown): ValidationIssue[] => [
        {
          pointer: "",
          message: `does not match the schema (details unavailable: ${error instanceof Error ? error.message : String(error)})`,
        },
      ],
    )
    .then(use)
    .then(undefined, onerror);
}
