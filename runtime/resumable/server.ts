// Server side of SEP-975 resumable requests: policy, per-request queue in a store, resume, status, expiry.
import { randomBytes } from "node:crypto";
import { isPlainObject as isObject } from "../jsonrpc.js";
import { DurableEngine } from "../durable/engine.js";
import { Retention } from "../durable/retention.js";
import { isPresentedToken, mintToken } from "../durable/token.js";
import { RpcError, type JsonObject, type JsonRpcErrorObject, type JsonRpcMessage } from "../jsonrpc.js";
import type { RequestContext } from "../peer.js";
import { SENT, type ReplyChannel } from "../transport.js";
import { InboundOperation, type OperationKeeper } from "../operations.js";
import { RequestCancelledError } from "../errors.js";
import { SessionStateKey, type Session } from "../session.js";
import type { ServerSession } from "../lifecycle.js";
import { MemoryOperationStore } from "../store/memory.js";
import {
  whenReady,
  type OperationStore,
  type SyncOperationStore,
  type OwnerSignal,
  type SharedOperationStore,
} from "../store/types.js";
import {
  GET_STATUS_REQUEST,
  LAST_SEQ_META_KEY,
  RECEIVED_NOTIFICATION,
  RESUME_ATTEMPT_META_KEY,
  RESUMABLE_FAILED_CODE,
  RESUME_POLICY_NOTIFICATION,
  RESUME_REQUEST,
  unknownResumableError,
} from "./protocol.js";
import { RemoteResumes } from "./remote.js";
import {
  CLAIMS_PER_ATTEMPT,
  DEFAULT_MAX_WAIT,
  DeferredPromotions,
  clientResumable,
  ignore,
  PendingResumable,
  replyOf,
  passMarks,
  ResumableRequest,
  type Attachment,
  type SessionSlot,
} from "./request.js";

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

/** The client's number for this resume (see RESUME_ATTEMPT_META_KEY); 0 when it gives none. */
function resumeAttempt(meta: JsonObject | undefined): number {
  const value = meta?.[RESUME_ATTEMPT_META_KEY];
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 && value < 2 ** 20 ? value : 0;
}

/** Requests that are about resumable requests, or too short-lived to be worth it. */
const NEVER_RESUMABLE = new Set([RESUME_REQUEST, GET_STATUS_REQUEST, "initialize", "ping"]);

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
  /** The requests this node runs, by store key, with the store, tokens and write ordering. */
  private readonly engine: DurableEngine<ResumableRequest>;
  /** The state each installed session keeps for this manager. */
  private readonly slotKey = new SessionStateKey<SessionSlot>("resumable", (session) => ({
    count: 0,
    origin: { session },
    caps: undefined,
    resumable: false,
  }));
  /** The policy of requests that set none of their own, shared (read only). */
  private readonly defaultPolicy: ResumePolicy;
  private readonly retention: Retention<ResumableRequest>;
  /** Resumes and status checks this node serves for requests other nodes run (shared store only). */
  private readonly remote: RemoteResumes | undefined;
  /** Policy-selected requests waiting for the end of their first macrotask (see PendingResumable). */
  private readonly deferred = new DeferredPromotions();
  /** Counters for tests and benchmarks: `selected` by the policy, `made` resumable, `answeredPlain` (deferPolicy) before that. */
  readonly stats = {
    selected: 0,
    made: 0,
    answeredPlain: 0,
    resumed: 0,
    replayed: 0,
    expired: 0,
    statusChecks: 0,
    remoteResumes: 0,
    remoteStatusChecks: 0,
  };
  /** Set when the store is shared between nodes. */
  private readonly shared: SharedOperationStore | undefined;

  constructor(options: ResumableServerOptions = {}) {
    this.engine = new DurableEngine<ResumableRequest>(
      options.store ?? new MemoryOperationStore(),
      (error) => this.report(error),
      (request, signal) => this.signalled(request, signal),
    );
    this.store = this.engine.store;
    this.direct = this.engine.direct;
    this.shared = this.engine.shared;
    this.remote =
      this.shared === undefined
        ? undefined
        : new RemoteResumes(
            this,
            this.shared,
            (error) => this.report(error),
            (end) => this.engine.following(end),
          );
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
  }

  /**
   * What a transport serving these sessions needs to know (spread into the HTTP server's options): a resume carries
   * the id of the request it resumes, which may still be in flight there.
   */
  readonly transportOptions: { readonly reusableIdMethods: readonly string[] } = {
    reusableIdMethods: [RESUME_REQUEST],
  };

  /** Resumable requests held (running, or finished and waiting to be collected). */
  get size(): number {
    return this.engine.size;
  }

  /** Bytes of messages queued and not yet confirmed, over every request held (for metrics and tests). */
  get queuedBytes(): number {
    let n = 0;
    for (const request of this.engine.values()) n += request.queuedBytes;
    return n;
  }

  /** Resolves once nothing is held. */
  idle(): Promise<void> {
    return this.engine.idle();
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
      this.deferred.add(stub);
    };
    session.use({
      requestStarted,
      // A resume reuses the id of the request it resumes (while that one outlives its connection here), or of an
      // earlier resume of it that the new one supersedes.
      mayReuseId: (method, existing) =>
        method === RESUME_REQUEST && (existing.outlet !== undefined || existing.method === RESUME_REQUEST),
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

  /** @internal Make the request resumable: the policy goes out now, before anything else of the request. */
  promote(
    context: InboundOperation & RequestContext,
    session: ServerSession,
    policy: Partial<ResumePolicy> | undefined,
  ): ResumableRequest | undefined {
    if (context.state !== "active" || !session.isOpen) return undefined;
    const slot = session.peekState(this.slotKey);
    if (slot === undefined || !clientResumable(slot, session) || slot.count >= this.maxPerSession) return undefined;
    const full: ResumePolicy =
      policy === undefined
        ? this.defaultPolicy
        : { minWait: policy.minWait ?? this.minWait, maxWait: policy.maxWait ?? this.maxWait };
    const token = mintToken();
    const key = this.engine.tokens.keyOf(token);
    const request = new ResumableRequest(
      this,
      key,
      context,
      session,
      context.principal ?? undefined,
      full,
      this.engine.tokens.kept(token),
      slot.origin,
    );
    slot.count++;
    this.engine.add(request);
    this.stats.made++;
    const record = {
      kind: "resumable" as const,
      requestId: context.id,
      status: "processing" as const,
      pendingInput: 0,
      keepFor: full.maxWait,
    };
    if (request.principal !== undefined) (record as { principal?: string }).principal = request.principal;
    if (this.shared !== undefined) (record as { node?: string }).node = this.shared.nodeId;
    if (this.direct !== undefined) request.entry = this.direct.open(key, record);
    else this.chain(request, () => this.store.create(key, record));
    context.outlet = request;
    const reply = replyOf(context);
    if (reply !== undefined) this.watchLink(request, request.attachment!, reply);
    // The policy goes out before anything else of the request, and is not itself queued: without it there is no resume.
    const params: JsonObject = {
      requestId: context.id,
      resumeToken: token,
      minWait: full.minWait,
      maxWait: full.maxWait,
    };
    const sent = session.transmit({ jsonrpc: "2.0", method: RESUME_POLICY_NOTIFICATION, params }, context.id);
    if (sent !== SENT) sent.catch(ignore);
    return request;
  }

  // ---- requests/resume and requests/getStatus ----

  private find(token: unknown, requestId: unknown, principal: string | undefined): ResumableRequest {
    // Never compared byte by byte with an early exit: by its hash (shared store), or in constant time (in-memory).
    const request = this.engine.find(token, principal);
    if (request === undefined || request.requestId !== requestId) throw unknownResumableError();
    return request;
  }

  private resume(
    session: ServerSession,
    params: JsonObject | undefined,
    context: RequestContext,
  ): Promise<JsonObject> | JsonObject {
    const meta = isObject(params?._meta) ? params._meta : undefined;
    const ack =
      meta !== undefined && typeof meta[LAST_SEQ_META_KEY] === "number" ? (meta[LAST_SEQ_META_KEY] as number) : 0;
    const attempt = resumeAttempt(meta);
    const remoteKey = this.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.remote!.resume(session, remoteKey, ack, attempt, context);
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

  private attachResume(
    session: ServerSession,
    request: ResumableRequest,
    ack: number,
    context: RequestContext,
  ): Promise<JsonObject> {
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
    return Promise.resolve(
      this.chain(request, () =>
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
            if (request.final !== undefined && !finalDone)
              request.deliver(request.final, finalSeq > 0 ? finalSeq : request.nextSeq - 1);
          }),
        ),
      ),
    ).then(() => answered);
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
    const key = this.engine.tokens.keyOf(token);
    const request = this.engine.get(key);
    if (request === undefined) {
      const remote = this.remote?.acks.get(key);
      if (remote !== undefined && remote.session === session && remote.requestId === requestId)
        remote.tell({ type: "confirm", seq });
      return;
    }
    if (request.freed || request.requestId !== requestId || request.attachment?.session !== session) return;
    if (!this.engine.tokens.matches(request.keptToken, token)) return;
    request.confirmUpTo(seq);
  }

  private getStatus(params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const remoteKey = this.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.remote!.getStatus(remoteKey, params?.requestId, context);
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
    return this.engine.remoteKey(token);
  }

  /** A node serving one of our requests for its client: attach, touch, detach, delivered, cancel, answer. */
  private signalled(request: ResumableRequest, signal: OwnerSignal): void {
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
        if (typeof signal.seq === "number") request.confirmUpTo(signal.seq);
        break;
      case "cancel":
        this.cancel(
          request,
          new RequestCancelledError(request.context.method, signal.reason ?? "cancelled on another node"),
        );
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
    return this.engine.writes.chain(request, work);
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
    if (request.attachment !== undefined && request.final === undefined)
      request.send({ jsonrpc: "2.0", id: request.requestId, error: error.toJSON() });
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
      for (const { op } of request.input.values())
        op.reject(new RequestCancelledError(op.method, "the resumable request ended"));
      request.input.clear();
    }
    this.finished(request);
    this.engine.remove(request);
    if (this.direct !== undefined) this.direct.delete(request.key);
    else {
      // chain() tracks and forgets the work itself (and reports a failure); a .finally here would re-raise it unhandled.
      void this.chain(request, () => this.store.delete(request.key));
    }
  }

  /** Stop every timer and forget everything (server shutdown). Running handlers are aborted. */
  close(): void {
    this.engine.close();
    this.retention.clear();
    for (const request of this.engine.values())
      this.cancel(request, new RpcError(RESUMABLE_FAILED_CODE, "Server shutting down"));
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}
