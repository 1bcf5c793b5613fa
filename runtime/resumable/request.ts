// One resumable request on the server: its sequence-stamped queue, delivery to its attachment, and server-to-client requests.
import { isPlainObject as isObject } from "../jsonrpc.js";
import { ErrorCode, RpcError, type JsonObject, type JsonRpcMessage, type RequestId } from "../jsonrpc.js";
import type { RequestContext, RequestOptions } from "../peer.js";
import { SENT, type ReplyChannel } from "../transport.js";
import { InboundOperation, OutboundOperation, type OperationOutlet } from "../operations.js";
import { ConnectionClosedError, RequestCancelledError } from "../errors.js";
import { PROGRESS_NOTIFICATION } from "../progress.js";
import type { Session } from "../session.js";
import { hasCapability, type ServerSession } from "../lifecycle.js";
import type { StoredStatus, SyncRecord } from "../store/types.js";
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
 * A resume's rank is its attempt number (from the client) times this, plus its claim in a shared store: a later
 * attempt always outranks an earlier one; between resumes of the same attempt (a client that does not number
 * them) the later claim wins. Exact integers for any attempt count a client could reach.
 */
export const CLAIMS_PER_ATTEMPT = 2 ** 32;

export interface PendingInput {
  op: OutboundOperation;
  message: JsonRpcMessage;
  seq: number;
}

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

/** Shared by every request that never asked the client anything: it is only read, never written. */
export const NO_INPUT: Map<RequestId, PendingInput> = new Map();

/** One resumable request. It is the outlet of the handler's operation: everything it sends comes here. */
export class ResumableRequest implements OperationOutlet {
  nextSeq = 1;
  /** Bytes of every message queued so far (the final response aside), and how many of those were confirmed. */
  totalBytes = 0;
  confirmedBytes = 0;
  /** The highest seq the client confirmed, and the seq of the last message queued (the final response aside). */
  confirmedSeq = 0;
  lastQueuedSeq = 0;
  /** Seq of the final response, once there is one. */
  finalSeq = 0;
  /** Messages that asked the client to confirm: their seq and totalBytes after them (confirming one frees those). */
  marks: { seq: number; bytes: number }[] | undefined = undefined;
  /** totalBytes past which the next message asks for a confirmation. */
  nextAskAt: number;
  /** The connection under the current attachment is gone for now (HTTP: its reply stream closed): maxWait runs. */
  linkDown = false;
  status: StoredStatus = "processing";
  final: JsonRpcMessage | undefined = undefined;
  attachment: Attachment | undefined;
  expiry: ReturnType<typeof setTimeout> | undefined = undefined;
  freed = false;
  /** When a delivered final response may be dropped; Infinity while none is waiting to be. */
  retainedUntil = Infinity;
  /** Whether it still counts against its session's limit of running resumable requests. */
  counted = true;
  /** Server-to-client requests of this request that wait for an answer, by id; created on first use (most have none). */
  private inputMap: Map<RequestId, PendingInput> | undefined = undefined;
  get input(): ReadonlyMap<RequestId, PendingInput> & { delete(id: RequestId): boolean; clear(): void } {
    return this.inputMap ?? NO_INPUT;
  }
  /** The highest seq handed to a live connection. */
  sentSeq = 0;
  /** The latest attachment number claimed for it in a shared store (see SharedOperationStore.claim). */
  epoch = 0;
  /** @internal Its record in a synchronous store, written through directly. */
  entry: SyncRecord | undefined = undefined;

  constructor(
    readonly manager: ResumableRequests,
    readonly key: string,
    readonly context: InboundOperation,
    readonly origin: Session,
    readonly principal: string | undefined,
    readonly policy: ResumePolicy,
    /** What the manager's TokenScheme keeps of the token (the token itself only with an in-process store). */
    readonly token: string,
    /** The attachment to the session it started on, shared by every request of that session. */
    attachment: Attachment,
  ) {
    this.attachment = attachment;
    this.nextAskAt = manager.ackEveryBytes;
  }

  get requestId(): RequestId {
    return this.context.id;
  }

  get keptToken(): string {
    return this.token;
  }

  /** Bytes queued and not confirmed: what maxQueuedBytes bounds. */
  get queuedBytes(): number {
    return this.totalBytes - this.confirmedBytes;
  }

  /** No connection carries it now, so its maxWait clock runs. */
  get waiting(): boolean {
    return this.attachment === undefined || this.linkDown;
  }

  send(message: JsonRpcMessage, owned?: boolean): void {
    if (this.freed) return;
    const isFinal = (message as unknown as JsonObject).method === undefined;
    if (isFinal) {
      if (this.final !== undefined) return;
      this.status = (message as unknown as JsonObject).error !== undefined ? "failed" : "completed";
      this.manager.finished(this);
    } else if (this.status !== "processing") {
      return; // nothing may follow the final response
    }
    const seq = this.nextSeq++;
    // Sized before stamping: an owned message is stamped in place. The final response is always kept whatever its
    // size: the limit guards against endless streams of messages.
    const size = isFinal ? 0 : progressSize(message);
    // Past the mark, this message asks the client to confirm what it has; its answer empties the queue up to here.
    const ask = !isFinal && this.totalBytes >= this.nextAskAt;
    const stamp: SeqStamp = ask ? { requestId: this.requestId, seq, ack: true } : { requestId: this.requestId, seq };
    const stamped = owned === true ? stampOwned(message, stamp) : stampMessage(message, stamp);
    if (isFinal) {
      this.final = stamped;
      this.finalSeq = seq;
    } else {
      this.totalBytes += size >= 0 ? size : JSON.stringify(stamped).length;
      this.lastQueuedSeq = seq;
      if (ask) {
        (this.marks ??= []).push({ seq, bytes: this.totalBytes });
        this.nextAskAt = this.totalBytes + this.manager.ackEveryBytes;
      }
    }
    const manager = this.manager;
    const entry = this.entry;
    if (entry !== undefined) {
      // The default in-memory store: synchronous and in order, so no chain, no closure and no lookup per message.
      // The final response is not queued there: it is `final`, which a replay sends last (most calls queue nothing else).
      if (isFinal) entry.operation.status = this.status;
      else entry.queue.push({ seq, message: stamped });
    } else {
      const store = manager.store;
      manager.chain(this, () => store.append(this.key, { seq, message: stamped }));
      if (isFinal) manager.chain(this, () => store.update(this.key, { status: this.status }));
    }
    if (!isFinal && this.queuedBytes > this.manager.maxQueuedBytes) {
      this.overflow();
      return;
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
    const id = `${this.manager.inputPrefix}${this.manager.inputCounter++}`;
    const op = new OutboundOperation(id, method);
    op.keeper = this.manager.inputKeeper;
    // However the answer comes (this connection, a resume, another node's signal), the stored count follows it,
    // and the caller's abort listener goes (a long-lived signal kept one closure per answered request).
    const settled = (): void => {
      this.input.delete(id);
      this.recordPendingInput();
      if (op.abortListener !== undefined) {
        op.callerSignal!.removeEventListener("abort", op.abortListener);
        op.abortListener = undefined;
      }
    };
    const promise = new Promise<JsonObject>((resolve, reject) => {
      op.resolve = (result) => {
        settled();
        resolve(result);
      };
      op.reject = (error) => {
        settled();
        reject(error);
      };
    });
    if (signal !== undefined) {
      op.callerSignal = signal;
      op.abortListener = () => {
        if (!this.input.has(id)) return;
        this.input.get(id)!.op.state = "cancelled";
        this.attachment?.session.operations.outbound.delete(id);
        op.reject(new RequestCancelledError(method, signal.reason));
      };
      signal.addEventListener("abort", op.abortListener, { once: true });
    }
    const seq = this.nextSeq++;
    const message = stampMessage(
      params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params },
      { requestId: this.requestId, seq },
    );
    (this.inputMap ??= new Map()).set(id, { op, message, seq });
    this.totalBytes += JSON.stringify(message).length;
    this.lastQueuedSeq = seq;
    const store = this.manager.store;
    this.manager.chain(this, () => store.append(this.key, { seq, message }));
    this.recordPendingInput();
    if (this.attachment !== undefined) this.attachment.session.operations.outbound.set(id, op);
    this.deliver(message, seq);
    return promise;
  }

  /** The client has everything of the request up to `seq`: those messages leave the queue. */
  confirmUpTo(seq: number): void {
    if (this.freed) return;
    // Only what exists can have arrived; the final response stays until the request is freed (a resume sends it).
    let upTo = Math.min(seq, this.nextSeq - 1);
    if (this.finalSeq > 0 && upTo >= this.finalSeq) upTo = this.finalSeq - 1;
    if (upTo <= this.confirmedSeq) return;
    this.confirmedSeq = upTo;
    if (upTo >= this.lastQueuedSeq) {
      this.confirmedBytes = this.totalBytes;
      this.marks = undefined;
    } else {
      // Only bytes up to a mark are known without sizing each message: a confirmation between marks frees up to the last one.
      const bytes = passMarks(this, upTo);
      if (bytes > this.confirmedBytes) this.confirmedBytes = bytes;
    }
    const manager = this.manager;
    if (manager.direct !== undefined) manager.direct.confirm(this.key, upTo);
    else {
      const store = manager.store;
      void manager.chain(this, () => store.confirm(this.key, upTo));
    }
  }

  /** The stored count of unanswered server-to-client requests (what another node's getStatus reports). */
  private recordPendingInput(): void {
    if (this.freed) return;
    const store = this.manager.store;
    this.manager.chain(this, () => store.update(this.key, { pendingInput: this.input.size }));
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
    this.unregisterInput(attachment.session);
    this.manager.armExpiry(this);
  }

  /** The session no longer carries this request's unanswered server-to-client requests (unless newer ones took the ids). */
  unregisterInput(session: Session): void {
    if (this.input.size === 0) return;
    const outbound = session.operations.outbound;
    for (const { op } of this.input.values()) if (outbound.get(op.id) === op) outbound.delete(op.id);
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
    readonly context: InboundOperation & RequestContext,
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
    const m = message as unknown as JsonObject;
    if (m.method === undefined) {
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
    const params = m.params as JsonObject | undefined;
    const sent =
      m.method === PROGRESS_NOTIFICATION && params !== undefined
        ? this.session.sendProgress(params, context.id)
        : this.session.sendNotification(m.method as string, params, context.id);
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

export function ignore(): void {}

/** The transport's reply channel of the request a context serves (HTTP), which the session keeps on the context. */
export function replyOf(context: object): ReplyChannel | undefined {
  return (context as { reply?: ReplyChannel }).reply;
}

/** Drops the marks up to `seq` (confirmed); returns totalBytes at the last of them, or 0 when none was passed. */
export function passMarks(request: ResumableRequest, seq: number): number {
  const marks = request.marks;
  if (marks === undefined) return 0;
  let passed = 0;
  while (passed < marks.length && marks[passed].seq <= seq) passed++;
  if (passed === 0) return 0;
  const bytes = marks[passed - 1].bytes;
  marks.splice(0, passed);
  return bytes;
}

/**
 * Bytes a progress notification counts against the queue limit, from its few flat fields (within a few bytes of
 * its stamped JSON) without serializing it; -1 for any other message, which is serialized once stamped.
 */
export function progressSize(message: JsonRpcMessage): number {
  const m = message as unknown as JsonObject;
  if (m.method !== PROGRESS_NOTIFICATION || !isObject(m.params)) return -1;
  // The envelope, the seq stamp and the punctuation come to about 150 bytes.
  let n = 150;
  const params = m.params;
  for (const key in params) {
    const value = params[key];
    if (typeof value === "string") n += key.length + value.length + 6;
    else if (typeof value === "number") n += key.length + 26;
    else return -1;
  }
  return n;
}
