// Server side of SEP-975 resumable requests: policy, per-request queue in a store, resume, status, expiry.
import { randomBytes } from "node:crypto";
import { isPlainObject as isObject } from "../jsonrpc.js";
import { IdleWaiters } from "../idle-waiters.js";
import { Retention } from "../durable/retention.js";
import { isPresentedToken, mintToken, TokenScheme } from "../durable/token.js";
import { WriteOrder } from "../durable/writes.js";
import { ErrorCode, RpcError, type JsonObject, type JsonRpcErrorObject, type JsonRpcMessage, type RequestId } from "../jsonrpc.js";
import type { RequestContext, RequestOptions } from "../peer.js";
import { SENT, type ReplyChannel } from "../transport.js";
import { InboundOperation, OutboundOperation, type OperationKeeper, type OperationOutlet } from "../operations.js";
import { ConnectionClosedError, RequestCancelledError } from "../errors.js";
import { PROGRESS_NOTIFICATION } from "../progress.js";
import { SessionStateKey, type Session } from "../session.js";
import { hasCapability, requiredClientCapability, type ServerSession } from "../lifecycle.js";
import { MemoryOperationStore } from "../store/memory.js";
import { StableMap } from "../stable-map.js";
import { isSharedStore, isSyncStore, whenReady, type OperationStore, type SyncOperationStore, type SyncRecord, type OwnerSignal, type SharedOperationStore, type StoredStatus } from "../store/types.js";
import {
  GET_STATUS_REQUEST,
  LAST_SEQ_META_KEY,
  RECEIVED_NOTIFICATION,
  RESUME_ATTEMPT_META_KEY,
  RESUMABLE_CAPABILITY,
  RESUMABLE_FAILED_CODE,
  RESUME_POLICY_NOTIFICATION,
  RESUME_REQUEST,
  nodeLostError,
  stampMessage,
  stampOwned,
  type SeqStamp,
  unknownResumableError,
} from "./protocol.js";

/** Seconds, as the notification carries them. */
export interface ResumePolicy {
  minWait: number;
  maxWait: number;
}

export interface ResumableServerOptions {
  /**
   * Default: a MemoryOperationStore of its own. A shared store (runtime/store/redis.ts) lets every node behind a
   * load balancer serve requests/resume and requests/getStatus for requests another node runs.
   */
  store?: OperationStore;
  /** Seconds the client should wait before resuming; default 0. */
  minWait?: number;
  /**
   * Seconds a request whose connection is gone waits for a resume (or a status check, which restarts the clock)
   * before it is cancelled; default 60. Over HTTP the clock starts when the connection carrying the request's reply
   * stream closes, and stops if the client takes the stream up again (GET with Last-Event-ID).
   */
  maxWait?: number;
  /**
   * Which requests become resumable without the handler asking (when the client advertised
   * resumableRequests): true or a partial policy to make it resumable. Default: none.
   */
  policy?: (method: string, params: JsonObject | undefined) => boolean | Partial<ResumePolicy> | undefined;
  /**
   * Decide late: a request the policy selects becomes resumable only once it outlives the macrotask it arrived
   * in, or sends something before its response; one answered at once goes out as a plain response, with no
   * policy, token or store record (see PendingResumable). Default false: the policy goes out as the request
   * starts, so a disconnect at any point after that finds it resumable.
   */
  deferPolicy?: boolean;
  /** Resumable requests one session may have running at a time; past it requests run as plain ones. Default 100. */
  maxPerSession?: number;
  /**
   * Bytes of unconfirmed messages one request may queue; past it the request fails (-32010). Messages leave the
   * queue once confirmed: by a resume, by the client's notifications/requests/received (asked for every quarter of
   * this limit), or by a transport that reports delivery (stdio, in-memory). So the limit bounds what a client
   * that is away (or one that never confirms) can leave behind, not the length of a request. Default 1 MiB.
   */
  maxQueuedBytes?: number;
  /**
   * Milliseconds a final response that was sent on a live connection stays available for a resume (it may
   * have been lost on the way; nothing in the protocol confirms it arrived). Default: 10 000, at most maxWait.
   */
  retainDeliveredMs?: number;
  /**
   * Finished requests kept that way at once, across all sessions; past it the oldest is dropped first (a resume
   * of it then gets the unknown-request error). Without a bound, a fast client over a transport that cannot
   * confirm delivery (stdio, HTTP) made memory grow with its call rate times retainDeliveredMs. Default 10 000.
   */
  maxRetained?: number;
  onerror?: (error: Error) => void;
}

interface Attachment {
  session: Session;
  /** Set when attached through requests/resume: the final response settles that request instead. */
  resume?: { context: InboundOperation; settle: (message: JsonRpcMessage) => void };
  /** While a replay from an asynchronous store is under way, live messages wait here (they follow it). */
  held?: { message: JsonRpcMessage; seq: number }[];
}

const DEFAULT_MAX_WAIT = 60;
/**
 * A resume's rank is its attempt number (from the client) times this, plus its claim in a shared store: a later
 * attempt always outranks an earlier one; between resumes of the same attempt (a client that does not number
 * them) the later claim wins. Exact integers for any attempt count a client could reach.
 */
const CLAIMS_PER_ATTEMPT = 2 ** 32;

/** The client's number for this resume (see RESUME_ATTEMPT_META_KEY); 0 when it gives none. */
function resumeAttempt(meta: JsonObject | undefined): number {
  const value = meta?.[RESUME_ATTEMPT_META_KEY];
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 && value < 2 ** 20 ? value : 0;
}

/** Requests that are about resumable requests, or too short-lived to be worth it. */
const NEVER_RESUMABLE = new Set([RESUME_REQUEST, GET_STATUS_REQUEST, "initialize", "ping"]);

interface PendingInput {
  op: OutboundOperation;
  message: JsonRpcMessage;
  seq: number;
}

/**
 * What a manager keeps on each session it is installed on (its SessionStateKey): its running resumable requests,
 * and the attachment every request that starts on it shares (never mutated: a resume makes a new one).
 */
interface SessionSlot {
  count: number;
  readonly origin: Attachment;
  /** The client capabilities last looked at, and whether they advertise resumableRequests (read once per handshake). */
  caps: JsonObject | undefined;
  resumable: boolean;
}

/** Whether the session's client advertised resumableRequests; the answer is kept until its capabilities change. */
function clientResumable(slot: SessionSlot, session: ServerSession): boolean {
  const caps = session.clientCapabilities;
  if (caps !== slot.caps) {
    slot.caps = caps;
    slot.resumable = hasCapability(caps, RESUMABLE_CAPABILITY);
  }
  return slot.resumable;
}

/** Shared by every request that never asked the client anything: it is only read, never written. */
const NO_INPUT: Map<RequestId, PendingInput> = new Map();


/** One resumable request. It is the outlet of the handler's operation: everything it sends comes here. */
class ResumableRequest implements OperationOutlet {
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
    if (this.freed || this.status !== "processing") return Promise.reject(new RpcError(ErrorCode.InvalidRequest, "The request is no longer running"));
    const session = this.attachment?.session ?? this.origin;
    const capability = requiredClientCapability(method);
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
        ? session.transmit(message, this.requestId, () => this.manager.confirmUpTo(this, seq))
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
class PendingResumable implements OperationOutlet {
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

function ignore(): void {}

/** The transport's reply channel of the request a context serves (HTTP), which the session keeps on the context. */
function replyOf(context: object): ReplyChannel | undefined {
  return (context as { reply?: ReplyChannel }).reply;
}

/** Drops the marks up to `seq` (confirmed); returns totalBytes at the last of them, or 0 when none was passed. */
function passMarks(request: ResumableRequest, seq: number): number {
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
function progressSize(message: JsonRpcMessage): number {
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

/**
 * Makes requests resumable (SEP-975) and serves requests/resume and requests/getStatus. One instance per server
 * process, shared by every session: `install(session)` on each, then resumable requests move freely between
 * connections and sessions (the token, not the session, proves the right to resume).
 */
export class ResumableRequests {
  readonly store: OperationStore;
  /** @internal The store, when it is synchronous (cannot fail): called without write ordering. */
  readonly direct: SyncOperationStore | undefined;
  readonly maxQueuedBytes: number;
  /** @internal Bytes of messages between two requests for a confirmation: a quarter of maxQueuedBytes. */
  readonly ackEveryBytes: number;
  /** @internal */
  readonly inputPrefix = `mcpgen-rr-${randomBytes(3).toString("hex")}-`;
  /** @internal */
  inputCounter = 0;
  /** @internal Server-to-client requests of a resumable request survive their connection's close. */
  readonly inputKeeper: OperationKeeper = { connectionClosed() {} };

  private readonly minWait: number;
  private readonly maxWait: number;
  private readonly maxPerSession: number;
  private readonly retainDeliveredMs: number;
  private readonly maxRetained: number;
  private readonly policyFor: ResumableServerOptions["policy"];
  private readonly deferPolicy: boolean;
  private readonly onerror: ((error: Error) => void) | undefined;
  /** Requests this node runs, by store key. */
  private readonly byKey = new StableMap<string, ResumableRequest>();
  private held = 0;
  /** The state each installed session keeps for this manager. */
  private readonly slotKey = new SessionStateKey<SessionSlot>("resumable", (session) => ({ count: 0, origin: { session }, caps: undefined, resumable: false }));
  /** The policy of requests that set none of their own, shared (read only). */
  private readonly defaultPolicy: ResumePolicy;
  private readonly writes: WriteOrder<ResumableRequest>;
  private readonly tokens: TokenScheme;
  private readonly retention: Retention<ResumableRequest>;
  /** Resumes this node serves for requests other nodes run: each entry ends one (shutdown). */
  private readonly remoteFollows = new Set<() => void>();
  /** The latest such resume of each request: a newer one supersedes it, as takeOver does for local ones. */
  private readonly remoteByKey = new Map<string, () => void>();
  /** For those resumes: the session they serve, and how to pass the client's confirmations on to the running node. */
  private readonly remoteAcks = new Map<string, { session: Session; requestId: RequestId; tell: (signal: OwnerSignal) => void }>();
  private readonly idleWaiters = new IdleWaiters();
  /** Policy-selected requests waiting for the end of their first macrotask (see PendingResumable). */
  private pending: PendingResumable[] = [];
  private pendingScheduled = false;
  /** Counters for tests and benchmarks: `selected` by the policy, `made` resumable, `answeredPlain` (deferPolicy) before that. */
  readonly stats = { selected: 0, made: 0, answeredPlain: 0, resumed: 0, replayed: 0, expired: 0, statusChecks: 0, remoteResumes: 0, remoteStatusChecks: 0 };
  /** Set when the store is shared between nodes. */
  private readonly shared: SharedOperationStore | undefined;

  constructor(options: ResumableServerOptions = {}) {
    this.store = options.store ?? new MemoryOperationStore();
    this.direct = isSyncStore(this.store) ? this.store : undefined;
    this.tokens = new TokenScheme(this.direct !== undefined);
    this.writes = new WriteOrder(this.store, (error) => this.report(error));
    this.minWait = options.minWait ?? 0;
    this.maxWait = options.maxWait ?? DEFAULT_MAX_WAIT;
    this.maxPerSession = options.maxPerSession ?? 100;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
    this.ackEveryBytes = Math.max(1, Math.floor(this.maxQueuedBytes / 4));
    this.retainDeliveredMs = options.retainDeliveredMs ?? Math.min(10_000, this.maxWait * 1000);
    this.maxRetained = Math.max(0, options.maxRetained ?? 10_000);
    this.retention = new Retention(this.retainDeliveredMs, this.maxRetained, (request) => this.free(request));
    this.policyFor = options.policy;
    this.defaultPolicy = { minWait: this.minWait, maxWait: this.maxWait };
    this.deferPolicy = options.deferPolicy === true;
    this.onerror = options.onerror;
    if (isSharedStore(this.store)) {
      this.shared = this.store;
      this.stopSignals = this.store.onSignal((key, signal) => this.signalled(key, signal));
    }
  }

  private readonly stopSignals: (() => void) | undefined = undefined;

  /**
   * What a transport serving these sessions needs to know (spread into the HTTP server's options): a resume carries
   * the id of the request it resumes, which may still be in flight there.
   */
  readonly transportOptions: { readonly reusableIdMethods: readonly string[] } = { reusableIdMethods: [RESUME_REQUEST] };

  /** Resumable requests held (running, or finished and waiting to be collected). */
  get size(): number {
    return this.held;
  }

  /** Bytes of messages queued and not yet confirmed, over every request held (for metrics and tests). */
  get queuedBytes(): number {
    let n = 0;
    for (const request of this.heldRequests()) n += request.queuedBytes;
    return n;
  }

  private lookup(key: string): ResumableRequest | undefined {
    return this.byKey.get(key);
  }

  private heldRequests(): ResumableRequest[] {
    return [...this.byKey.values()];
  }

  /** Resolves once nothing is held. */
  idle(): Promise<void> {
    return this.idleWaiters.wait(this.held === 0);
  }

  /** Serve requests/resume and requests/getStatus on this session and apply the policy to its requests. */
  install(session: ServerSession): void {
    if (session.peekState(this.slotKey) !== undefined) return;
    const slot = session.state(this.slotKey);
    const requestStarted = (op: InboundOperation, params: JsonObject | undefined): void => {
      if (this.policyFor === undefined || NEVER_RESUMABLE.has(op.method)) return;
      const wanted = this.policyFor(op.method, params);
      if (wanted === undefined || wanted === false) return;
      // Cheap checks now, so a request that could never be resumable costs nothing more.
      if (op.outlet !== undefined || !session.isOpen || !clientResumable(slot, session)) return;
      this.stats.selected++;
      const policy = wanted === true ? undefined : wanted;
      if (!this.deferPolicy) {
        this.promote(op as InboundOperation & RequestContext, session, policy);
        return;
      }
      const stub = new PendingResumable(this, op as InboundOperation & RequestContext, session, policy);
      op.outlet = stub;
      this.defer(stub);
    };
    session.use({
      requestStarted,
      // A resume reuses the id of the request it resumes (while that one outlives its connection here), or of an
      // earlier resume of it that the new one supersedes.
      mayReuseId: (method, existing) => method === RESUME_REQUEST && (existing.outlet !== undefined || existing.method === RESUME_REQUEST),
    });
    session.onRequest(RESUME_REQUEST, (params, context) => this.resume(session, params, context));
    session.onRequest(GET_STATUS_REQUEST, (params, context) => this.getStatus(params, context));
    session.onNotification(RECEIVED_NOTIFICATION, (params) => this.received(session, params));
  }

  /**
   * Make the request a handler is serving resumable: sends the policy at once (call this before the handler
   * sends anything else). False when it cannot be: the client did not advertise resumableRequests, the
   * session is at its limit, or the request is not one this manager's sessions serve.
   */
  makeResumable(context: RequestContext, policy?: Partial<ResumePolicy>): boolean {
    if (!(context instanceof InboundOperation) || context.state !== "active") return false;
    const outlet = context.outlet;
    if (outlet instanceof PendingResumable && outlet.manager === this) return outlet.promote(policy) !== undefined;
    if (outlet !== undefined) return false;
    const session = (context as { owner?: Session }).owner;
    if (session === undefined || session.peekState(this.slotKey) === undefined) return false;
    return this.promote(context as InboundOperation & RequestContext, session as ServerSession, policy) !== undefined;
  }

  /** Hold a selected request until the end of the current macrotask; one setImmediate serves every such request. */
  private defer(stub: PendingResumable): void {
    const pending = this.pending;
    // A long run of calls inside one macrotask (in-memory links deliver on microtasks) would pile up answered ones.
    if (pending.length >= 256 && (pending.length & 255) === 0) {
      let kept = 0;
      for (const p of pending) if (!p.settled) pending[kept++] = p;
      pending.length = kept;
    }
    pending.push(stub);
    if (this.pendingScheduled) return;
    this.pendingScheduled = true;
    setImmediate(() => {
      this.pendingScheduled = false;
      const due = this.pending;
      this.pending = [];
      for (const p of due) if (!p.settled && p.context.state === "active" && p.context.outlet === p) p.promote();
    });
  }

  /** @internal Make the request resumable: the policy goes out now, before anything else of the request. */
  promote(context: InboundOperation & RequestContext, session: ServerSession, policy: Partial<ResumePolicy> | undefined): ResumableRequest | undefined {
    if (context.state !== "active" || !session.isOpen) return undefined;
    const slot = session.peekState(this.slotKey);
    if (slot === undefined || !clientResumable(slot, session) || slot.count >= this.maxPerSession) return undefined;
    const full: ResumePolicy =
      policy === undefined ? this.defaultPolicy : { minWait: policy.minWait ?? this.minWait, maxWait: policy.maxWait ?? this.maxWait };
    const token = mintToken();
    const key = this.tokens.keyOf(token);
    const request = new ResumableRequest(this, key, context, session, context.principal ?? undefined, full, this.tokens.kept(token), slot.origin);
    slot.count++;
    this.held++;
    this.byKey.set(key, request);
    this.stats.made++;
    const record = { kind: "resumable" as const, requestId: context.id, status: "processing" as const, pendingInput: 0, keepFor: full.maxWait };
    if (request.principal !== undefined) (record as { principal?: string }).principal = request.principal;
    if (this.shared !== undefined) (record as { node?: string }).node = this.shared.nodeId;
    if (this.direct !== undefined) request.entry = this.direct.open(key, record);
    else this.chain(request, () => this.store.create(key, record));
    context.outlet = request;
    const reply = replyOf(context);
    if (reply !== undefined) this.watchLink(request, request.attachment!, reply);
    // The policy goes out before anything else of the request, and is not itself queued: without it there is no resume.
    const params: JsonObject = { requestId: context.id, resumeToken: token, minWait: full.minWait, maxWait: full.maxWait };
    const sent = session.transmit({ jsonrpc: "2.0", method: RESUME_POLICY_NOTIFICATION, params }, context.id);
    if (sent !== SENT) sent.catch(ignore);
    return request;
  }

  // ---- requests/resume and requests/getStatus ----

  private find(token: unknown, requestId: unknown, principal: string | undefined): ResumableRequest {
    if (!isPresentedToken(token)) throw unknownResumableError();
    // Never compared byte by byte with an early exit: by its hash (shared store), or in constant time (in-memory).
    const request = this.lookup(this.tokens.keyOf(token));
    if (request === undefined || request.freed || request.requestId !== requestId || request.principal !== principal) {
      throw unknownResumableError();
    }
    if (!this.tokens.matches(request.token, token)) throw unknownResumableError();
    return request;
  }

  private resume(session: ServerSession, params: JsonObject | undefined, context: RequestContext): Promise<JsonObject> | JsonObject {
    const meta = isObject(params?._meta) ? params._meta : undefined;
    const ack = meta !== undefined && typeof meta[LAST_SEQ_META_KEY] === "number" ? (meta[LAST_SEQ_META_KEY] as number) : 0;
    const attempt = resumeAttempt(meta);
    const remoteKey = this.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.resumeRemote(session, remoteKey, ack, attempt, context);
    const request = this.find(params?.resumeToken, context.requestId, context.principal ?? undefined);
    this.stats.resumed++;
    if (this.shared === undefined) {
      const rank = attempt * CLAIMS_PER_ATTEMPT;
      if (rank < request.epoch) return this.superseded(context);
      request.epoch = rank;
      return this.attachResume(session, request, ack, context);
    }
    // Other nodes may be resuming it too: the client's latest attempt wins, then the latest claim in the store,
    // whichever signal or reply arrives first.
    return Promise.resolve(this.shared.claim(request.key)).then((claim) => {
      if (request.freed || claim === 0) throw unknownResumableError();
      const rank = attempt * CLAIMS_PER_ATTEMPT + claim;
      if (rank < request.epoch) return this.superseded(context);
      request.epoch = rank;
      return this.attachResume(session, request, ack, context);
    });
  }

  /** A resume overtaken by a later one gets no answer: the later one carries the request. */
  private superseded(context: RequestContext): JsonObject {
    (context as unknown as InboundOperation).state = "cancelled";
    replyOf(context)?.release?.();
    return {};
  }

  /**
   * Follows the connection of a reply channel (HTTP) under an attachment: while it is gone the request waits for
   * the client as a detached one does (maxWait runs) but stays attached, so a client that comes back on that
   * channel (GET with Last-Event-ID) goes on reading it, and an expiry can end the reply there.
   */
  private watchLink(request: ResumableRequest, attachment: Attachment, reply: ReplyChannel): void {
    reply.onconnection = (connected) => this.linkChanged(request, attachment, connected);
    if (!reply.connected) this.linkChanged(request, attachment, false);
  }

  private linkChanged(request: ResumableRequest, attachment: Attachment, connected: boolean): void {
    if (request.freed || request.attachment !== attachment || request.final !== undefined) return;
    request.linkDown = !connected;
    if (connected) this.clearExpiry(request);
    else this.armExpiry(request);
  }

  private attachResume(session: ServerSession, request: ResumableRequest, ack: number, context: RequestContext): Promise<JsonObject> {
    this.takeOver(request);
    this.clearExpiry(request);
    const resumeOp = context as unknown as InboundOperation;
    // Accepted: the transport now routes the id's messages to this resume, and the session knows it by the id.
    const reply = replyOf(context);
    reply?.takeOver?.();
    const inbound = session.operations.inbound;
    if (inbound.get(request.requestId) !== resumeOp) inbound.set(request.requestId, resumeOp);
    let settle!: (message: JsonRpcMessage) => void;
    const answered = new Promise<JsonObject>((resolve, reject) => {
      settle = (message) => {
        const m = message as unknown as JsonObject;
        if (m.error !== undefined) {
          const e = m.error as JsonRpcErrorObject;
          reject(new RpcError(e.code, e.message, e.data));
        } else resolve(m.result as JsonObject);
      };
    });
    const attachment: Attachment = { session, resume: { context: resumeOp, settle }, held: [] };
    request.attachment = attachment;
    if (reply !== undefined) this.watchLink(request, attachment, reply);
    resumeOp.signal.addEventListener(
      "abort",
      () => {
        if (request.attachment !== attachment) return;
        if (resumeOp.signal.reason instanceof RequestCancelledError) this.cancel(request, resumeOp.signal.reason);
        else request.detach();
      },
      { once: true },
    );
    for (const { op } of request.input.values()) session.operations.outbound.set(op.id, op);
    const store = this.store;
    const key = request.key;
    // Replay after earlier appends have landed, in order; then live delivery resumes through `attachment`.
    return Promise.resolve(this.chain(request, () =>
      whenReady(store.confirm(key, ack), () =>
        whenReady(store.readAfter(key, ack), (queued) => {
          if (request.attachment !== attachment) return;
          // Unanswered server-to-client requests go again even when confirmed: the answer may be what got lost.
          for (const pending of request.input.values()) {
            if (pending.seq <= ack) session.transmit(pending.message, request.requestId).catch(() => undefined);
          }
          let sent = 0;
          let last = ack;
          let finalSeq = 0;
          for (const item of queued) {
            last = item.seq;
            if (item.message === request.final || (item.message as unknown as JsonObject).method === undefined) {
              finalSeq = item.seq;
              continue;
            }
            session.transmit(item.message, request.requestId).catch(() => undefined);
            sent++;
          }
          this.stats.replayed += sent;
          if (last > request.sentSeq) request.sentSeq = last;
          // What is still queued is exactly what was not confirmed (the final response aside, as in send).
          let unconfirmed = 0;
          for (const item of queued) if (item.seq !== finalSeq) unconfirmed += JSON.stringify(item.message).length;
          request.confirmedBytes = request.totalBytes - unconfirmed;
          if (ack > request.confirmedSeq) request.confirmedSeq = ack;
          passMarks(request, ack);
          const held = attachment.held ?? [];
          attachment.held = undefined;
          let finalDone = false;
          for (const item of held) {
            if (item.seq <= last) continue;
            if (item.message === request.final) finalDone = true;
            request.deliver(item.message, item.seq);
          }
          if (request.final !== undefined && !finalDone) request.deliver(request.final, finalSeq > 0 ? finalSeq : request.nextSeq - 1);
        }),
      ),
    )).then(() => answered);
  }

  /**
   * notifications/requests/received: the client has the request's messages up to lastSeq. Only the session the
   * request's messages go to can have received them, so a confirmation from any other is ignored (it cannot be
   * answered: a notification), as is one with a wrong token.
   */
  private received(session: ServerSession, params: JsonObject | undefined): void {
    const seq = params?.lastSeq;
    const token = params?.resumeToken;
    const requestId = params?.requestId;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) return;
    if (!isPresentedToken(token)) return;
    const key = this.tokens.keyOf(token);
    const request = this.lookup(key);
    if (request === undefined) {
      const remote = this.remoteAcks.get(key);
      if (remote !== undefined && remote.session === session && remote.requestId === requestId) remote.tell({ type: "confirm", seq });
      return;
    }
    if (request.freed || request.requestId !== requestId || request.attachment?.session !== session) return;
    if (!this.tokens.matches(request.token, token)) return;
    this.confirmUpTo(request, seq);
  }

  /** @internal The client has everything of the request up to `seq`: those messages leave the queue. */
  confirmUpTo(request: ResumableRequest, seq: number): void {
    if (request.freed) return;
    // Only what exists can have arrived; the final response stays until the request is freed (a resume sends it).
    let upTo = Math.min(seq, request.nextSeq - 1);
    if (request.finalSeq > 0 && upTo >= request.finalSeq) upTo = request.finalSeq - 1;
    if (upTo <= request.confirmedSeq) return;
    this.confirmedThrough(request, upTo);
    if (this.direct !== undefined) this.direct.confirm(request.key, upTo);
    else {
      const store = this.store;
      void this.chain(request, () => store.confirm(request.key, upTo));
    }
  }

  /** Bookkeeping of a confirmation up to `seq` (the store is told by the caller). */
  private confirmedThrough(request: ResumableRequest, seq: number): void {
    if (seq <= request.confirmedSeq) return;
    request.confirmedSeq = seq;
    if (seq >= request.lastQueuedSeq) {
      request.confirmedBytes = request.totalBytes;
      request.marks = undefined;
      return;
    }
    // Only bytes up to a mark are known without sizing each message: a confirmation between marks frees up to the last one.
    const bytes = passMarks(request, seq);
    if (bytes > request.confirmedBytes) request.confirmedBytes = bytes;
  }

  private getStatus(params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const remoteKey = this.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.getStatusRemote(remoteKey, params?.requestId, context);
    const request = this.find(params?.resumeToken, params?.requestId, context.principal ?? undefined);
    this.stats.statusChecks++;
    if (request.waiting) this.armExpiry(request);
    return {
      requestId: request.requestId,
      status: request.status,
      hasPendingMessage: request.nextSeq - 1 > request.sentSeq,
      hasInputRequest: request.input.size > 0,
    };
  }

  /** A later attachment replaces the current one; the earlier resume gets no answer (it is superseded). */
  private takeOver(request: ResumableRequest): void {
    const previous = request.attachment;
    if (previous === undefined) return;
    request.attachment = undefined;
    request.linkDown = false;
    request.unregisterInput(previous.session);
    if (previous.resume !== undefined) {
      request.endResume(previous);
    } else {
      const inbound = previous.session.operations.inbound;
      if (inbound.get(request.requestId) === request.context) inbound.delete(request.requestId);
    }
  }

  // ---- requests another node runs (shared store) ----

  /** The store key of a token this node does not run, when the store is shared (else undefined: served locally). */
  private remoteKey(token: unknown): string | undefined {
    if (this.shared === undefined || !isPresentedToken(token)) return undefined;
    const key = this.tokens.keyOf(token);
    return this.lookup(key) !== undefined ? undefined : key;
  }

  private async remoteRecord(key: string, requestId: unknown, principal: string | undefined) {
    const stored = await this.shared!.get(key);
    if (stored === undefined || stored.kind !== "resumable" || stored.requestId !== requestId || stored.principal !== principal) {
      throw unknownResumableError();
    }
    return stored;
  }

  private async getStatusRemote(key: string, requestId: unknown, context: RequestContext): Promise<JsonObject> {
    const stored = await this.remoteRecord(key, requestId, context.principal ?? undefined);
    this.stats.statusChecks++;
    this.stats.remoteStatusChecks++;
    // Resets the running node's maxWait clock, as a status check there would.
    if (stored.node !== undefined && !stored.lost) void Promise.resolve(this.shared!.signal(stored.node, key, { type: "touch" })).catch((e: unknown) => this.report(e));
    return {
      requestId: stored.requestId,
      status: stored.status,
      hasPendingMessage: (stored.queued ?? 0) > 0,
      hasInputRequest: stored.pendingInput > 0,
    };
  }

  /**
   * requests/resume for a request another node runs: replay its unconfirmed queue from the store, then follow it
   * live until the final response, which answers the resume. The running node is told (attach, touches while
   * following, detach or delivered at the end) so it neither expires the request nor keeps it longer than needed.
   */
  private async resumeRemote(session: ServerSession, key: string, ack: number, attempt: number, context: RequestContext): Promise<JsonObject> {
    const shared = this.shared!;
    // The claim goes out with the read, on arrival: resumes are ordered by when they reached a node, not by how
    // long each took to look the request up.
    const claimed = Promise.resolve(shared.claim(key));
    claimed.catch(() => undefined);
    const stored = await this.remoteRecord(key, context.requestId, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLostError();
    const claim = await claimed;
    if (claim === 0) throw unknownResumableError();
    const epoch = attempt * CLAIMS_PER_ATTEMPT + claim;
    this.stats.resumed++;
    this.stats.remoteResumes++;
    const requestId = stored.requestId;
    const owner = stored.node;
    const tell = (signal: OwnerSignal) => {
      if (owner !== undefined) void Promise.resolve(shared.signal(owner, key, { ...signal, epoch })).catch((e: unknown) => this.report(e));
    };
    await shared.confirm(key, ack);
    const resumeOp = context as unknown as InboundOperation;
    // Its connection went while the store answered (the client may already be resuming elsewhere): no attach.
    if (resumeOp.signal.aborted) {
      if (resumeOp.signal.reason instanceof RequestCancelledError) tell({ type: "cancel", reason: String(resumeOp.signal.reason.message) });
      return {};
    }
    tell({ type: "attach", seq: ack });
    replyOf(context)?.takeOver?.();
    const proxies = new Map<RequestId, OutboundOperation>();
    return new Promise<JsonObject>((resolve, reject) => {
      let ended = false;
      const touchEvery = Math.max(250, ((stored.keepFor ?? DEFAULT_MAX_WAIT) * 1000) / 3);
      const touch = setInterval(() => tell({ type: "touch" }), touchEvery);
      touch.unref?.();
      const end = (after: () => void) => {
        if (ended) return;
        ended = true;
        clearInterval(touch);
        following.close();
        this.remoteFollows.delete(stop);
        if (this.remoteByKey.get(key) === supersede) {
          this.remoteByKey.delete(key);
          this.remoteAcks.delete(key);
        }
        resumeOp.signal.removeEventListener("abort", onAbort);
        for (const [id, op] of proxies) if (session.operations.outbound.get(id) === op) session.operations.outbound.delete(id);
        after();
      };
      const stop = () => end(() => reject(new RpcError(RESUMABLE_FAILED_CODE, "Server shutting down")));
      // Superseded by a newer resume on this node: this one gets no answer (the newer one carries the request).
      const supersede = () =>
        end(() => {
          resumeOp.state = "cancelled";
          resolve({});
        });
      this.remoteByKey.get(key)?.();
      this.remoteByKey.set(key, supersede);
      this.remoteAcks.set(key, { session, requestId, tell });
      const onAbort = () =>
        end(() => {
          const reason = resumeOp.signal.reason;
          if (reason instanceof RequestCancelledError) tell({ type: "cancel", reason: String(reason.message) });
          else tell({ type: "detach" });
          resolve({});
        });
      const following = shared.follow(key, ack, {
        message: ({ message }) => {
          const m = message as unknown as JsonObject;
          if (m.method === undefined) {
            end(() => {
              tell({ type: "delivered" });
              if (m.error !== undefined) {
                const e = m.error as JsonRpcErrorObject;
                reject(new RpcError(e.code, e.message, e.data));
              } else resolve(m.result as JsonObject);
            });
            return;
          }
          if (m.id !== undefined) proxies.set(m.id as RequestId, this.answerProxy(session, m.id as RequestId, String(m.method), tell));
          this.stats.replayed++;
          session.transmit(message, requestId).catch(() => undefined);
        },
        lost: (reason) => end(() => reject(new RpcError(RESUMABLE_FAILED_CODE, `Resumable request failed: ${reason}`, { requestId }))),
      });
      this.remoteFollows.add(stop);
      resumeOp.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Stands in, on this node, for a server-to-client request another node made: the answer goes to that node. */
  private answerProxy(session: ServerSession, id: RequestId, method: string, tell: (signal: OwnerSignal) => void): OutboundOperation {
    const op = new OutboundOperation(id, method);
    op.keeper = this.inputKeeper;
    op.resolve = (result) => tell({ type: "answer", id, message: { jsonrpc: "2.0", id, result } });
    op.reject = (error) => {
      const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, error.message);
      tell({ type: "answer", id, message: { jsonrpc: "2.0", id, error: rpc.toJSON() } });
    };
    session.operations.outbound.set(id, op);
    return op;
  }

  /** A node serving one of our requests for its client: attach, touch, detach, delivered, cancel, answer. */
  private signalled(key: string, signal: OwnerSignal): void {
    const request = this.lookup(key);
    if (request === undefined || request.freed) return;
    // From a resume a later one overtook: its client has gone elsewhere, so it may neither attach nor release.
    if (signal.epoch !== undefined && signal.type !== "cancel" && signal.type !== "answer") {
      if (signal.epoch < request.epoch) return;
      request.epoch = signal.epoch;
    }
    switch (signal.type) {
      case "attach":
        // The client is now served elsewhere: stop writing to the connection it left; expire unless touched.
        this.takeOver(request);
        this.armExpiry(request);
        break;
      case "touch":
      case "detach":
        if (request.waiting) this.armExpiry(request);
        break;
      case "delivered":
        if (request.final !== undefined && request.attachment === undefined) this.delivered(request);
        break;
      case "confirm":
        if (typeof signal.seq === "number") this.confirmUpTo(request, signal.seq);
        break;
      case "cancel":
        this.cancel(request, new RequestCancelledError(request.context.method, signal.reason ?? "cancelled on another node"));
        break;
      case "answer": {
        const pending = signal.id === undefined ? undefined : request.input.get(signal.id);
        const answer = signal.message as unknown as JsonObject | undefined;
        if (pending === undefined || answer === undefined || pending.op.state !== "active") break;
        pending.op.state = answer.error !== undefined ? "failed" : "completed";
        if (answer.error !== undefined) {
          const e = answer.error as JsonRpcErrorObject;
          pending.op.reject(new RpcError(e.code, e.message, e.data));
        } else pending.op.resolve(isObject(answer.result) ? answer.result : {});
        break;
      }
    }
  }

  // ---- lifetime ----

  /** @internal Serialize store work per request, so appends land in order even on an asynchronous store. */
  chain<T>(request: ResumableRequest, work: () => T | Promise<T>): T | Promise<T> {
    return this.writes.chain(request, work);
  }

  /** @internal The request stopped running: it no longer counts against its session's limit. */
  finished(request: ResumableRequest): void {
    if (request.counted === false) return;
    request.counted = false;
    const slot = request.origin.peekState(this.slotKey);
    if (slot !== undefined && slot.count > 0) slot.count--;
  }

  /** @internal The transport confirmed the final response reached the client: nothing is left to keep. */
  deliveryConfirmed(request: ResumableRequest): void {
    this.free(request);
  }

  /**
   * @internal The final response went out on a live connection: keep it a little, in case it was lost, unless the
   * transport will confirm delivery (deliveryConfirmed frees it then).
   */
  delivered(request: ResumableRequest, confirmed = false): void {
    this.clearExpiry(request);
    if (confirmed) return;
    this.retention.keep(request);
  }

  /** @internal Detached: cancel after maxWait unless resumed or checked on. */
  armExpiry(request: ResumableRequest): void {
    this.clearExpiry(request);
    request.expiry = setTimeout(() => this.expire(request), request.policy.maxWait * 1000);
    request.expiry.unref?.();
  }

  private expire(request: ResumableRequest): void {
    if (request.freed) return;
    this.stats.expired++;
    const error = new RpcError(RESUMABLE_FAILED_CODE, "Resumable request expired (no resume within maxWait)");
    // Still attached to a reply path without a connection (HTTP): the error is its response there, which ends that
    // path in the transport (and is what a client coming back on it reads).
    if (request.attachment !== undefined && request.final === undefined) request.send({ jsonrpc: "2.0", id: request.requestId, error: error.toJSON() });
    this.cancel(request, error);
  }

  private clearExpiry(request: ResumableRequest): void {
    this.retention.forget(request);
    if (request.expiry !== undefined) {
      clearTimeout(request.expiry);
      request.expiry = undefined;
    }
  }

  /** @internal The client cancelled the request on the connection it is attached to: it ends here. */
  peerCancelled(request: ResumableRequest): void {
    this.free(request);
  }

  private cancel(request: ResumableRequest, reason: unknown): void {
    if (request.freed) return;
    const context = request.context;
    if (context.state === "active") {
      context.state = "cancelled";
      if (context.reporter !== undefined) context.reporter.stop();
      context.abort(reason);
    }
    this.free(request);
  }

  private free(request: ResumableRequest): void {
    if (request.freed) return;
    request.freed = true;
    this.clearExpiry(request);
    const attachment = request.attachment;
    request.attachment = undefined;
    if (attachment !== undefined && request.final === undefined) request.endResume(attachment);
    if (request.input.size > 0) {
      if (attachment !== undefined) request.unregisterInput(attachment.session);
      for (const { op } of request.input.values()) op.reject(new RequestCancelledError(op.method, "the resumable request ended"));
      request.input.clear();
    }
    this.held--;
    this.finished(request);
    this.byKey.delete(request.key);
    if (this.direct !== undefined) this.direct.delete(request.key);
    else {
      // chain() tracks and forgets the work itself (and reports a failure); a .finally here would re-raise it unhandled.
      void this.chain(request, () => this.store.delete(request.key));
    }
    this.idleWaiters.settle(this.held === 0);
  }

  /** Stop every timer and forget everything (server shutdown). Running handlers are aborted. */
  close(): void {
    this.stopSignals?.();
    for (const end of [...this.remoteFollows]) end();
    this.retention.clear();
    for (const request of this.heldRequests()) this.cancel(request, new RpcError(RESUMABLE_FAILED_CODE, "Server shutting down"));
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}
