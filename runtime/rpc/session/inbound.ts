// The requests a session serves: admission (method, params, id reuse, in-flight cap), handlers, replies, cancellation.
import {
  ErrorCode,
  RpcError,
  isRequestId,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../jsonrpc.js";
import type { MethodSpec } from "../dispatch.js";
import { SENT, type InboundInfo, type ReplyChannel } from "../transport.js";
import type { RequestHandler } from "../peer.js";
import { ConnectionClosedError, ReplacedAnswer, RequestCancelledError } from "../errors.js";
import { HandlerContext } from "../handler-context.js";
import type { OperationRegistry } from "../operations.js";
import { ProgressReporter, readProgressToken } from "../progress.js";
import type { Session } from "./session.js";
import type { ExtensionHooks } from "./hooks.js";
import { sendError, type SessionLink } from "./link.js";
import { internalError, withIssues } from "./validation.js";

/** What the inbound side is configured with (from SessionOptions). */
export interface InboundLimits {
  /** Requests served at once; Infinity for no cap. */
  maxInFlight: number;
  /** Minimum spacing of progress notifications we send per request, ms. */
  progressInterval: number;
  /** Methods the peer may not cancel: a cancellation naming one is ignored. */
  uncancellable: ReadonlySet<string>;
  /** Methods served even at the in-flight cap (they answer at once, and some free the places of others). */
  uncapped: ReadonlySet<string>;
  /** Requests whose reply path lost its connection that may still run; past it the oldest is aborted. */
  maxDetached: number;
}

/** The session's inbound side: one per session. */
export class InboundRequests {
  readonly handlers = new Map<string, RequestHandler>();
  /**
   * Requests still running whose reply path lost its connection (the peer went away, or will come back for the
   * answer later): they no longer count against the in-flight cap, so abandoned requests cannot wedge the session,
   * and their number is bounded on its own. In the order they lost their connection.
   */
  private readonly detached = new Set<HandlerContext>();

  constructor(
    private readonly session: Session,
    private readonly link: SessionLink,
    private readonly operations: OperationRegistry,
    /** Methods the peer may send us (the requests we serve and the notifications we accept). */
    private readonly specs: ReadonlyMap<string, MethodSpec>,
    private readonly hooks: ExtensionHooks,
    private readonly limits: InboundLimits,
  ) {}

  /** A well-formed request: check it, register it and run its handler. */
  request(m: JsonRpcRequest, info: InboundInfo | undefined): void {
    const id = m.id;
    const method = m.method;
    const spec = this.specs.get(method);
    const handler = this.handlers.get(method);
    const link = this.link;
    // Errors go on the request's own reply channel: its id may be that of another request still in flight.
    const reply = info?.reply;
    if (spec === undefined || spec.kind !== "request" || handler === undefined) {
      sendError(link, id, ErrorCode.MethodNotFound, `Method not found: ${method}`, undefined, reply);
      return;
    }
    const params = m.params;
    // Before the params are checked: what the protocol refuses here (a method its revision lacks, a request before the
    // handshake) is refused as such, whatever its params.
    const refusal = this.hooks.admit(method, params, info);
    if (refusal !== undefined) {
      sendError(link, id, refusal.code, refusal.message, refusal.data, reply);
      return;
    }
    if (!spec.isParams(params)) {
      withIssues(
        spec.explainParams(params),
        (errors) => sendError(link, id, ErrorCode.InvalidParams, `Invalid params for ${method}`, { errors }, reply),
        link.reportError,
      );
      return;
    }
    const inbound = this.operations.inbound;
    // An extension may let a request reuse the id of one still registered here (a resume of that request).
    const existing = inbound.get(id);
    if (existing !== undefined && !this.hooks.mayReuseId(method, existing)) {
      sendError(
        link,
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
    const maxInFlight = this.limits.maxInFlight;
    if (
      existing === undefined &&
      inbound.size - this.detached.size >= maxInFlight &&
      !this.limits.uncapped.has(method)
    ) {
      sendError(
        link,
        id,
        ErrorCode.ServerBusy,
        "too many requests in flight",
        { maxInFlightRequests: maxInFlight },
        reply,
      );
      return;
    }
    const context = new HandlerContext(this.session, id, method, info);
    const token = readProgressToken(params);
    if (token !== undefined) {
      context.progressToken = token;
      context.reporter = new ProgressReporter(token, id, context, this.limits.progressInterval);
    }
    // A request reusing an id leaves the registered one alone: only the layer serving it, once it accepted the
    // request, takes the id over (a resume with a wrong token must change nothing about a live request).
    if (existing === undefined) inbound.set(id, context);
    if (reply !== undefined && reply.watchConnection !== undefined) this.watchReply(context, reply);
    this.hooks.requestStarted(context, params);
    this.serve(handler, params, context);
  }

  /** Follows the connection under a request's reply path: a request nobody waits on stops taking a place. */
  private watchReply(context: HandlerContext, reply: ReplyChannel): void {
    reply.watchConnection!((connected) => {
      if (context.state !== "active") return;
      if (connected) {
        this.detached.delete(context);
        return;
      }
      // An outlet (a resumable request) keeps the request for the client by its own rules and limits.
      if (context.outlet !== undefined || this.operations.inbound.get(context.id) !== context) return;
      if (reply.lossCancels === true) {
        this.end(context, "cancelled", new RequestCancelledError(context.method, "the reply stream closed"));
        return;
      }
      this.detached.add(context);
      if (this.detached.size > this.limits.maxDetached) {
        const oldest = this.detached.values().next().value!;
        this.end(
          oldest,
          "closed",
          new ConnectionClosedError(
            `Aborted: more than ${this.limits.maxDetached} requests lost their reply stream (maxDetachedRequests)`,
          ),
        );
      }
    });
  }

  /** Ends a request that will get no response: frees its place, aborts its handler, lets its reply path go. */
  private end(context: HandlerContext, state: "cancelled" | "closed", reason: Error): void {
    context.state = state;
    this.detached.delete(context);
    this.operations.releaseInbound(context);
    context.abort(reason);
    context.reply?.abandon?.();
  }

  private async serve(handler: RequestHandler, params: JsonObject | undefined, context: HandlerContext): Promise<void> {
    let result: unknown;
    try {
      result = await handler(params, context);
    } catch (error) {
      if (error instanceof ReplacedAnswer) this.finish(context, error.result, undefined);
      else this.finish(context, undefined, error instanceof RpcError ? error.toJSON() : internalError(error));
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
    this.detached.delete(context);
    this.operations.releaseInbound(context);
    const outlet = context.outlet;
    const transport = this.link.openTransport;
    // Cancelled or disconnected: the peer will not use the result, so it is not sent.
    if (!active || (transport === undefined && outlet === undefined)) return;
    let message: JsonRpcResponse =
      error === undefined
        ? { jsonrpc: "2.0", id: context.requestId, result: result! }
        : { jsonrpc: "2.0", id: context.requestId, error };
    if (this.hooks.rewritesResponses) message = this.hooks.respond(context, message);
    if (outlet !== undefined) {
      outlet.send(message);
      return;
    }
    const reply = context.reply;
    const sent = transport!.send(
      message,
      reply === undefined ? { relatedRequestId: context.requestId } : { relatedRequestId: context.requestId, reply },
    );
    if (sent !== SENT) sent.catch(this.link.reportError);
  }

  /** notifications/cancelled from the peer. */
  cancelled(params: JsonObject | undefined): void {
    const id = params?.requestId;
    if (!isRequestId(id)) return;
    const context = this.operations.inbound.get(id);
    if (context === undefined) {
      // Normal race: the request finished before the cancellation arrived.
      this.link.debug({ kind: "cancel-unknown-request", id });
      return;
    }
    if (this.limits.uncancellable.has(context.method)) return;
    context.state = "cancelled";
    if (context instanceof HandlerContext) this.detached.delete(context);
    this.operations.releaseInbound(context);
    const reason = params!.reason;
    context.abort(new RequestCancelledError(context.method, typeof reason === "string" ? reason : undefined));
    const outlet = context.outlet;
    if (outlet !== undefined && outlet.cancelled !== undefined) outlet.cancelled(context);
    // Nothing will be sent as its answer, so the transport need not keep a path open for one.
    if (context instanceof HandlerContext) context.reply?.abandon?.();
  }

  /** The connection closed: handlers are aborted with `reason`, except those whose output an outlet takes. */
  connectionClosed(reason: Error, byApp: boolean): void {
    const ops = this.operations;
    this.detached.clear();
    if (ops.inbound.size === 0) return;
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
}
