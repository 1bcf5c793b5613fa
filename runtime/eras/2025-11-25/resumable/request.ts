// One resumable request on the server: its sequence-stamped queue, delivery to its attachment, and server-to-client requests.
import { isPlainObject as isObject } from "../../../rpc/jsonrpc.js";
import { ErrorCode, RpcError, type JsonObject, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestOptions } from "../../../rpc/peer.js";
import { SENT } from "../../../rpc/transport.js";
import type { InboundOperation, OperationOutlet } from "../../../rpc/operations.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import { PROGRESS_NOTIFICATION } from "../../../rpc/progress.js";
import type { Session } from "../../../rpc/session/session.js";
import { hasCapability, type ServerSession } from "../../../mcp/lifecycle.js";
import type { StoredStatus } from "../../../store/types.js";
import type { DurableEngine, DurableOperation } from "../../../durable/engine.js";
import { PendingRequests } from "../../../durable/input.js";
import { finalStatus, isResponse } from "../../../durable/messages.js";
import { OperationLog } from "../../../durable/operation.js";
import { QueueAccount } from "../../../durable/queue.js";
import { Deadline } from "../../../durable/timers.js";
import { RESUMABLE_CAPABILITY, RESUMABLE_FAILED_CODE, stampMessage, stampOwned, type SeqStamp } from "./protocol.js";
import type { ResumableRequests, ResumePolicy } from "./server.js";

export interface Attachment {
  session: Session;
  /** Set when attached through requests/resume: the final response settles that request instead. */
  resume?: { context: InboundOperation; settle: (message: JsonRpcMessage) => void };
  /** While a replay from an asynchronous store is under way, live messages wait here (they follow it). */
  held?: { message: JsonRpcMessage; seq: number }[];
}

/** Seconds a request whose connection is gone waits for a resume, by default. */
export const DEFAULT_MAX_WAIT = 60;

/**
 * What a manager keeps on each session it is installed on (its SessionStateKey): its running resumable requests,
 * and the attachment every request that starts on it shares (never mutated: a resume makes a new one).
 */
export interface SessionSlot {
  count: number;
  readonly origin: Attachment;
  /** The client capabilities last looked at, and whether they advertise resumableRequests (read once per handshake). */
  caps: JsonObject | undefined;
  resumable: boolean;
}

/** Whether the session's client advertised resumableRequests; the answer is kept until its capabilities change. */
export function clientResumable(slot: SessionSlot, session: ServerSession): boolean {
  const caps = session.clientCapabilities;
  if (caps !== slot.caps) {
    slot.caps = caps;
    slot.resumable = hasCapability(caps, RESUMABLE_CAPABILITY);
  }
  return slot.resumable;
}

/**
 * One resumable request: a durable operation whose queue the client confirms. It is the outlet of the handler's
 * operation: everything it sends comes here, is stamped with its seq, queued, and handed to the attachment.
 */
export class ResumableRequest extends QueueAccount implements OperationOutlet, DurableOperation {
  /** The connection under the current attachment is gone for now (HTTP: its reply stream closed): maxWait runs. */
  linkDown = false;
  status: StoredStatus = "processing";
  final: JsonRpcMessage | undefined = undefined;
  attachment: Attachment | undefined;
  /** Runs while no connection carries it: the request is cancelled at maxWait unless resumed or checked on. */
  readonly expiry = new Deadline();
  freed = false;
  /** When a delivered final response may be dropped; Infinity while none is waiting to be. */
  retainedUntil = Infinity;
  /** Whether it still counts against its session's limit of running resumable requests. */
  counted = true;
  /** Server-to-client requests of this request that wait for an answer. */
  readonly input = new PendingRequests();
  /** The highest seq handed to a live connection. */
  sentSeq = 0;
  /** The latest attachment rank claimed for it (see attemptRank). */
  epoch = 0;
  /** Its record and queue in the store. */
  readonly log: OperationLog<ResumableRequest>;

  constructor(
    readonly manager: ResumableRequests,
    engine: DurableEngine<ResumableRequest>,
    readonly key: string,
    readonly context: InboundOperation,
    readonly origin: Session,
    readonly principal: string | undefined,
    readonly policy: ResumePolicy,
    /** What the engine's TokenScheme keeps of the token (the token itself only with an in-process store). */
    readonly keptToken: string,
    /** The attachment to the session it started on, shared by every request of that session. */
    attachment: Attachment,
  ) {
    super(manager.ackEveryBytes);
    this.attachment = attachment;
    this.log = new OperationLog(engine, this, {
      kind: "resumable",
      requestId: context.id,
      status: "processing",
      pendingInput: 0,
      keepFor: policy.maxWait,
    });
  }

  get requestId(): RequestId {
    return this.context.id;
  }

  /** Seq of the last message made (queued or final). */
  get lastSeq(): number {
    return this.log.nextSeq - 1;
  }

  /** No connection carries it now, so its maxWait clock runs. */
  get waiting(): boolean {
    return this.attachment === undefined || this.linkDown;
  }

  send(message: JsonRpcMessage, owned?: boolean): void {
    if (this.freed) return;
    const isFinal = isResponse(message);
    if (isFinal) {
      if (this.final !== undefined) return;
      this.status = finalStatus(message);
      this.manager.finished(this);
    } else if (this.status !== "processing") {
      return; // nothing may follow the final response
    }
    const log = this.log;
    const seq = log.nextSeq++;
    // Sized before stamping: an owned message is stamped in place. The final response is always kept whatever its
    // size: the limit guards against endless streams of messages.
    const size = isFinal ? 0 : progressSize(message);
    // Past the mark, this message asks the client to confirm what it has; its answer empties the queue up to here.
    const ask = !isFinal && this.askDue;
    const stamp: SeqStamp = ask ? { requestId: this.requestId, seq, ack: true } : { requestId: this.requestId, seq };
    const stamped = owned === true ? stampOwned(message, stamp) : stampMessage(message, stamp);
    if (isFinal) {
      this.final = stamped;
      this.finalSeq = seq;
      // In the in-memory store the final response is not queued: it is `final`, which a replay sends last.
      log.finish(seq, stamped, this.status);
    } else {
      this.account(seq, size >= 0 ? size : JSON.stringify(stamped).length, ask);
      log.put(seq, stamped);
      if (this.queuedBytes > this.manager.maxQueuedBytes) {
        this.overflow();
        return;
      }
    }
    this.deliver(stamped, seq, ask);
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    if (this.freed || this.status !== "processing")
      return Promise.reject(new RpcError(ErrorCode.InvalidRequest, "The request is no longer running"));
    const session = this.attachment?.session ?? this.origin;
    const capability = (session as Partial<ServerSession>).requiredClientCapability?.(method);
    const clientCaps = (session as Partial<ServerSession>).clientCapabilities;
    if (capability !== undefined && !hasCapability(clientCaps, capability)) {
      return Promise.reject(new RpcError(ErrorCode.InvalidRequest, `The client does not support ${capability}`));
    }
    const signal = options?.signal;
    if (signal?.aborted === true) return Promise.reject(new RequestCancelledError(method, signal.reason));
    // However the answer comes (this connection, a resume, another node's signal), the stored count follows it.
    const { op, promise } = this.input.create(
      method,
      signal,
      () => this.recordPendingInput(),
      () => this.attachment?.session,
    );
    const id = op.id;
    const seq = this.log.nextSeq++;
    const message = stampMessage(
      params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params },
      { requestId: this.requestId, seq },
    );
    this.input.add({ op, message, seq });
    this.account(seq, JSON.stringify(message).length);
    this.log.put(seq, message);
    this.recordPendingInput();
    if (this.attachment !== undefined) this.attachment.session.operations.outbound.set(id, op);
    this.deliver(message, seq);
    return promise;
  }

  /** The client has everything of the request up to `seq`: those messages leave the queue. */
  confirmUpTo(seq: number): void {
    if (this.freed) return;
    const upTo = this.confirmed(seq, this.lastSeq);
    if (upTo > 0) this.log.confirm(upTo);
  }

  /** The stored count of unanswered server-to-client requests (what another node's getStatus reports). */
  private recordPendingInput(): void {
    if (!this.freed) this.log.update({ pendingInput: this.input.size });
  }

  /**
   * Hands a message to the live connection, if there is one; it stays queued until confirmed either way. `ask`: it
   * asks for a confirmation, which a transport that reports delivery gives by itself.
   */
  deliver(message: JsonRpcMessage, seq: number, ask = false): void {
    const attachment = this.attachment;
    if (attachment === undefined) return;
    if (attachment.held !== undefined) {
      attachment.held.push({ message, seq });
      return;
    }
    const isFinal = message === this.final;
    if (isFinal && attachment.resume !== undefined) {
      attachment.resume.settle(message);
      this.sentSeq = seq;
      this.manager.delivered(this);
      return;
    }
    // Counted as sent at once (one promise reaction per message is the costly part); a failed send detaches,
    // and the message still waits in the queue for the resume.
    if (seq > this.sentSeq) this.sentSeq = seq;
    const session = attachment.session;
    // A transport that confirms delivery says when the client has the final response: nothing is left to resume
    // then. Lost on the way (the connection cut first), it never says, and the request waits for a resume.
    const confirmed = isFinal && session.confirmsDelivery;
    const sent = confirmed
      ? session.transmit(message, this.requestId, () => this.manager.deliveryConfirmed(this))
      : ask && session.confirmsDelivery
        ? session.transmit(message, this.requestId, () => this.confirmUpTo(seq))
        : session.transmit(message, this.requestId);
    if (sent !== SENT) {
      sent.catch(() => {
        if (this.attachment === attachment) this.detach();
      });
    }
    if (isFinal) this.manager.delivered(this, confirmed);
  }

  cancelled(): void {
    this.manager.peerCancelled(this);
  }

  connectionClosed(op: InboundOperation): void {
    if (op === this.context && this.attachment !== undefined && this.attachment.resume === undefined) this.detach();
  }

  detach(): void {
    const attachment = this.attachment;
    if (attachment === undefined) return;
    this.attachment = undefined;
    this.linkDown = false;
    this.input.unregister(attachment.session);
    this.manager.armExpiry(this);
  }

  /** A requests/resume attachment that will not carry the final response: its own request ends with `{}`. */
  endResume(attachment: Attachment): void {
    if (attachment.resume === undefined) return;
    attachment.resume.context.state = "cancelled";
    attachment.resume.settle({ jsonrpc: "2.0", id: this.requestId, result: {} });
  }

  /** The queue limit was passed: the request fails for good with a clear error. */
  private overflow(): void {
    const limit = this.manager.maxQueuedBytes;
    const error = new RpcError(RESUMABLE_FAILED_CODE, `Resumable request exceeded its queue limit of ${limit} bytes`);
    this.context.state = "failed";
    this.context.abort(error);
    if (this.context.reporter !== undefined) this.context.reporter.stop();
    this.send({ jsonrpc: "2.0", id: this.requestId, error: error.toJSON() });
  }
}

export function ignore(): void {}

/**
 * Bytes a progress notification counts against the queue limit, from its few flat fields (within a few bytes of
 * its stamped JSON) without serializing it; -1 for any other message, which is serialized once stamped.
 */
export function progressSize(message: JsonRpcMessage): number {
  if (isResponse(message) || message.method !== PROGRESS_NOTIFICATION || !isObject(message.params)) return -1;
  // The envelope, the seq stamp and the punctuation come to about 150 bytes.
  let n = 150;
  const params = message.params;
  for (const key in params) {
    const value = params[key];
    if (typeof value === "string") n += key.length + value.length + 6;
    else if (typeof value === "number") n += key.length + 26;
    else return -1;
  }
  return n;
}
