// The context a request handler receives: the request's identity, progress, and sends related to the request.
import type { JsonObject, RequestId } from "./jsonrpc.js";
import { SENT, type AuthGrant, type InboundInfo, type ReplyChannel } from "./transport.js";
import type { PeerIdentity, RequestContext, RequestOptions, TraceContext } from "./peer.js";
import { InboundOperation } from "./operations.js";
import { PROGRESS_NOTIFICATION, type ProgressSink } from "./progress.js";
import type { Session } from "./session/session.js";

/** @internal Where a request's input rounds are served (MCP 2026-07-28): replayed asks, or explicit rounds. */
export interface InputSource {
  ask(method: string, params: JsonObject | undefined, key?: string): Promise<JsonObject>;
  /** This retry's inputResponses and requestState, as the client sent them. */
  readonly responses: JsonObject | undefined;
  readonly state: string | undefined;
  /** The answer that ends the request with these input requests (or the error refusing one the client cannot serve). */
  required(inputRequests: { readonly [key: string]: { method: string; params?: JsonObject } }, state?: string): Error;
}

/** The context a request handler receives; it is also the operation's registry entry. */
export class HandlerContext extends InboundOperation implements RequestContext, ProgressSink {
  readonly principal?: string;
  readonly auth?: AuthGrant;
  readonly sessionId?: string;
  readonly clientAddress?: string;
  /** Set by the protocol layer when the request is admitted (see SessionExtension.admit, requestStarted). */
  peerIdentity?: PeerIdentity;
  /** Set by the protocol layer when the request carried a trace context in its `_meta`. */
  trace?: TraceContext;
  /**
   * @internal Where this request's asks of its peer are answered when the protocol carries them in rounds of the
   * request itself (MCP 2026-07-28's input-required results) instead of requests of its own.
   */
  inputs?: InputSource;
  /** @internal The transport's reply path for this request, when it has one per request (HTTP). */
  readonly reply?: ReplyChannel;

  constructor(
    private readonly session: Session,
    id: RequestId,
    method: string,
    info: InboundInfo | undefined,
  ) {
    super(id, method);
    if (info !== undefined) {
      if (info.principal !== undefined) this.principal = info.principal;
      if (info.auth !== undefined) this.auth = info.auth;
      if (info.sessionId !== undefined) this.sessionId = info.sessionId;
      if (info.clientAddress !== undefined) this.clientAddress = info.clientAddress;
      if (info.reply !== undefined) this.reply = info.reply;
    }
  }

  get requestId(): RequestId {
    return this.id;
  }

  /** @internal The session serving this request (makeResumable needs it; a WeakMap per request cost more). */
  get owner(): Session {
    return this.session;
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    const reporter = this.reporter;
    return reporter === undefined ? SENT : reporter.report(progress, total, message);
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    const inputs = this.inputs;
    if (inputs !== undefined) return inputs.ask(method, params, options?.inputKey);
    const outlet = this.outlet;
    if (outlet !== undefined) return outlet.request(method, params, options);
    return this.session.sendRequest(method, params, options, this.id);
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    const outlet = this.outlet;
    if (outlet !== undefined) {
      outlet.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
      return SENT;
    }
    return this.session.sendNotification(method, params, this.id);
  }

  /** ProgressSink of this request's reporter. */
  sendProgress(params: JsonObject, relatedRequestId: RequestId): Promise<void> {
    const outlet = this.outlet;
    if (outlet !== undefined) {
      // The reporter built params for this notification alone: the outlet may stamp them in place.
      outlet.send({ jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params }, true);
      return SENT;
    }
    return this.session.sendProgress(params, relatedRequestId);
  }
}
