// deferPolicy: requests the policy selected that become resumable only once they outlive their first macrotask.
import type { JsonObject, JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import type { RequestOptions } from "../../../rpc/peer.js";
import type { HandlerContext } from "../../../rpc/handler-context.js";
import type { InboundOperation, OperationOutlet } from "../../../rpc/operations.js";
import { ConnectionClosedError } from "../../../rpc/errors.js";
import { PROGRESS_NOTIFICATION } from "../../../rpc/progress.js";
import type { ServerSession } from "../../../mcp/lifecycle.js";
import { isResponse } from "../../../durable/messages.js";
import { ignore, type ResumableRequest } from "./request.js";
import type { ResumableRequests, ResumePolicy } from "./server.js";

/**
 * With deferPolicy: a request the policy selected that is not resumable yet. Making a request resumable has a fixed cost (the
 * policy notification, a token, a store record, a stamp on every message), wasted on a call that answers at
 * once, so the decision waits. The request becomes resumable at the first of: the end of the macrotask it
 * arrived in (the manager's setImmediate), its first outgoing message other than the final response, or an
 * explicit makeResumable. A final response that comes before all of these goes out plain: the server decided
 * this request is not resumable, which SEP-975 leaves to the server per request.
 * The rule that keeps both guarantees: the policy precedes every other message of a resumable request (a
 * progress value or server-to-client request sent in the first tick makes the request resumable right then,
 * before that message), and only the final response can ever go out plain, so nothing follows a plain message.
 */
export class PendingResumable implements OperationOutlet {
  /** The request once made resumable; later messages go straight to it (it replaces this as the outlet). */
  promoted: ResumableRequest | undefined = undefined;
  /** Answered plain, closed, cancelled or refused: it will never be made resumable. */
  settled = false;

  constructor(
    readonly manager: ResumableRequests,
    readonly context: HandlerContext,
    readonly session: ServerSession,
    readonly policy: Partial<ResumePolicy> | undefined,
  ) {}

  /** Make it resumable now; undefined when that cannot be (it then runs as a plain request from here on). */
  promote(policy?: Partial<ResumePolicy>): ResumableRequest | undefined {
    if (this.promoted !== undefined) return this.promoted;
    if (this.settled) return undefined;
    this.settled = true;
    const request = this.manager.promote(this.context, this.session, policy ?? this.policy);
    if (request === undefined) {
      if (this.context.outlet === this) this.context.outlet = undefined;
      return undefined;
    }
    this.promoted = request;
    return request;
  }

  send(message: JsonRpcMessage, owned?: boolean): void {
    const promoted = this.promoted;
    if (promoted !== undefined) {
      promoted.send(message, owned);
      return;
    }
    const context = this.context;
    if (isResponse(message)) {
      // Answered before it was made resumable: a plain response, exactly what the session would have sent.
      this.settled = true;
      this.manager.stats.answeredPlain++;
      if (context.outlet === this) context.outlet = undefined;
      this.session.transmit(message, context.id).catch(ignore);
      return;
    }
    const request = this.promote();
    if (request !== undefined) {
      request.send(message, owned);
      return;
    }
    // Refused (session limit, connection gone): sent as the plain request it now is.
    const params = message.params;
    const sent =
      message.method === PROGRESS_NOTIFICATION && params !== undefined
        ? this.session.sendProgress(params, context.id)
        : this.session.sendNotification(message.method, params, context.id);
    sent.catch(ignore);
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    const request = this.promote();
    if (request !== undefined) return request.request(method, params, options);
    return this.context.request(method, params, options);
  }

  connectionClosed(op: InboundOperation): void {
    if (this.promoted !== undefined) {
      this.promoted.connectionClosed(op);
      return;
    }
    // Not resumable: it ends with its connection, as a plain request does.
    this.settled = true;
    op.state = "closed";
    if (op.reporter !== undefined) op.reporter.stop();
    op.abort(new ConnectionClosedError());
  }

  cancelled(): void {
    if (this.promoted !== undefined) this.promoted.cancelled();
    else this.settled = true;
  }
}

/** Selected requests held until the end of the current macrotask: one setImmediate serves every such request. */
export class DeferredPromotions {
  private pending: PendingResumable[] = [];
  private scheduled = false;

  add(stub: PendingResumable): void {
    const pending = this.pending;
    // A long run of calls inside one macrotask (in-memory links deliver on microtasks) would pile up answered ones.
    if (pending.length >= 256 && (pending.length & 255) === 0) {
      let kept = 0;
      for (const p of pending) if (!p.settled) pending[kept++] = p;
      pending.length = kept;
    }
    pending.push(stub);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const due = this.pending;
      this.pending = [];
      for (const p of due) if (!p.settled && p.context.state === "active" && p.context.outlet === p) p.promote();
    });
  }
}
