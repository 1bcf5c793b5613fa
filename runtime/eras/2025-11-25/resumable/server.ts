// Server side of SEP-975 resumable requests: the protocol adapter over the durable engine (policy, resume, status).
import { isPlainObject as isObject } from "../../../rpc/jsonrpc.js";
import { DurableEngine } from "../../../durable/engine.js";
import { RemoteOperations, attemptRank } from "../../../durable/remote.js";
import { Retention } from "../../../durable/retention.js";
import { isPresentedToken, mintToken } from "../../../durable/token.js";
import { RpcError, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import { SENT } from "../../../rpc/transport.js";
import { InboundOperation } from "../../../rpc/operations.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import { HandlerContext } from "../../../rpc/handler-context.js";
import { SessionStateKey } from "../../../rpc/session/session.js";
import { INITIALIZE, PING, type ServerSession } from "../../../mcp/lifecycle.js";
import { MemoryOperationStore } from "../../../store/memory.js";
import type { OperationStore, OwnerSignal } from "../../../store/types.js";
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
import { DeferredPromotions, PendingResumable } from "./deferred.js";
import type { ResumePolicy, ResumableServerOptions } from "./options.js";
import { RemoteResumes } from "./remote.js";
import { DEFAULT_MAX_WAIT, clientResumable, ignore, ResumableRequest, type SessionSlot } from "./request.js";
import { attachResume, superseded, takeOver, watchLink } from "./resume.js";

export type { ResumePolicy, ResumableServerOptions } from "./options.js";

/** The client's number for this resume (see RESUME_ATTEMPT_META_KEY); 0 when it gives none. */
function resumeAttempt(meta: JsonObject | undefined): number {
  const value = meta?.[RESUME_ATTEMPT_META_KEY];
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 && value < 2 ** 20 ? value : 0;
}

/** The request a resume or status check arrived as: the session's handler context (anything else is refused). */
function handlerContext(context: RequestContext): HandlerContext {
  if (!(context instanceof HandlerContext)) throw unknownResumableError();
  return context;
}

/** Requests that are about resumable requests, or too short-lived to be worth it. */
const NEVER_RESUMABLE = new Set([RESUME_REQUEST, GET_STATUS_REQUEST, INITIALIZE, PING]);

/**
 * Makes requests resumable (SEP-975) and serves requests/resume and requests/getStatus. One instance per server
 * process, shared by every session: `install(session)` on each, then resumable requests move freely between
 * connections and sessions (the token, not the session, proves the right to resume).
 */
export class ResumableRequests {
  readonly store: OperationStore;
  readonly maxQueuedBytes: number;
  /** @internal Bytes of messages between two requests for a confirmation: a quarter of maxQueuedBytes. */
  readonly ackEveryBytes: number;

  private readonly minWait: number;
  private readonly maxWait: number;
  private readonly maxPerSession: number;
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
  /** Requests other nodes run (shared store only). */
  private readonly others: RemoteOperations<ResumableRequest> | undefined;
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

  constructor(options: ResumableServerOptions = {}) {
    this.engine = new DurableEngine<ResumableRequest>(
      options.store ?? new MemoryOperationStore(),
      (error) => this.report(error),
      (request, signal) => this.signalled(request, signal),
    );
    this.store = this.engine.store;
    this.others = RemoteOperations.of(this.engine);
    this.remote = this.others === undefined ? undefined : new RemoteResumes(this.stats, this.others);
    this.minWait = options.minWait ?? 0;
    this.maxWait = options.maxWait ?? DEFAULT_MAX_WAIT;
    this.maxPerSession = options.maxPerSession ?? 100;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
    this.ackEveryBytes = Math.max(1, Math.floor(this.maxQueuedBytes / 4));
    const retainDeliveredMs = options.retainDeliveredMs ?? Math.min(10_000, this.maxWait * 1000);
    const maxRetained = Math.max(0, options.maxRetained ?? 10_000);
    this.retention = new Retention(retainDeliveredMs, maxRetained, (request) => this.free(request));
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
      if (!(op instanceof HandlerContext)) return;
      this.stats.selected++;
      const policy = wanted === true ? undefined : wanted;
      if (!this.deferPolicy) {
        this.promote(op, session, policy);
        return;
      }
      const stub = new PendingResumable(this, op, session, policy);
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
    session.onRequest(RESUME_REQUEST, (params, context) => this.resume(session, params, handlerContext(context)));
    session.onRequest(GET_STATUS_REQUEST, (params, context) => this.getStatus(params, context));
    session.onNotification(RECEIVED_NOTIFICATION, (params) => this.received(session, params));
  }

  /**
   * Make the request a handler is serving resumable: sends the policy at once (call this before the handler
   * sends anything else). False when it cannot be: the client did not advertise resumableRequests, the
   * session is at its limit, or the request is not one this manager's sessions serve.
   */
  makeResumable(context: RequestContext, policy?: Partial<ResumePolicy>): boolean {
    if (!(context instanceof HandlerContext) || context.state !== "active") return false;
    const outlet = context.outlet;
    if (outlet instanceof PendingResumable && outlet.manager === this) return outlet.promote(policy) !== undefined;
    if (outlet !== undefined) return false;
    const session = context.owner;
    if (session.peekState(this.slotKey) === undefined) return false;
    return this.promote(context, session as ServerSession, policy) !== undefined;
  }

  /** @internal Make the request resumable: the policy goes out now, before anything else of the request. */
  promote(
    context: HandlerContext,
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
    const tokens = this.engine.tokens;
    const request = new ResumableRequest(
      this,
      this.engine,
      tokens.keyOf(token),
      context,
      session,
      context.principal ?? undefined,
      full,
      tokens.kept(token),
      slot.origin,
    );
    slot.count++;
    this.engine.add(request);
    this.stats.made++;
    context.outlet = request;
    const reply = context.reply;
    if (reply !== undefined) watchLink(this, request, request.attachment!, reply);
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

  // ---- requests/resume, requests/getStatus, notifications/requests/received ----

  private find(token: unknown, requestId: unknown, principal: string | undefined): ResumableRequest {
    // Never compared byte by byte with an early exit: by its hash (shared store), or in constant time (in-memory).
    const request = this.engine.find(token, principal);
    if (request === undefined || request.requestId !== requestId) throw unknownResumableError();
    return request;
  }

  private resume(
    session: ServerSession,
    params: JsonObject | undefined,
    context: HandlerContext,
  ): Promise<JsonObject> | JsonObject {
    const meta = isObject(params?._meta) ? params._meta : undefined;
    const lastSeq = meta?.[LAST_SEQ_META_KEY];
    const ack = typeof lastSeq === "number" ? lastSeq : 0;
    const attempt = resumeAttempt(meta);
    const remoteKey = this.engine.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.remote!.resume(session, remoteKey, ack, attempt, context);
    const request = this.find(params?.resumeToken, context.requestId, context.principal ?? undefined);
    this.stats.resumed++;
    const others = this.others;
    if (others === undefined) {
      const rank = attemptRank(attempt, 0);
      if (rank < request.epoch) return superseded(context);
      request.epoch = rank;
      return attachResume(this, session, request, ack, context);
    }
    // Other nodes may be resuming it too: the client's latest attempt wins, then the latest claim in the store,
    // whichever signal or reply arrives first.
    return others.claim(request.key).then((claim) => {
      if (request.freed || claim === 0) throw unknownResumableError();
      const rank = attemptRank(attempt, claim);
      if (rank < request.epoch) return superseded(context);
      request.epoch = rank;
      return attachResume(this, session, request, ack, context);
    });
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
      this.remote?.received(session, key, requestId, seq);
      return;
    }
    if (request.freed || request.requestId !== requestId || request.attachment?.session !== session) return;
    if (!this.engine.tokens.matches(request.keptToken, token)) return;
    request.confirmUpTo(seq);
  }

  private getStatus(params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const remoteKey = this.engine.remoteKey(params?.resumeToken);
    if (remoteKey !== undefined) return this.remote!.getStatus(remoteKey, params?.requestId, context);
    const request = this.find(params?.resumeToken, params?.requestId, context.principal ?? undefined);
    this.stats.statusChecks++;
    if (request.waiting) this.armExpiry(request);
    return {
      requestId: request.requestId,
      status: request.status,
      hasPendingMessage: request.lastSeq > request.sentSeq,
      hasInputRequest: request.input.size > 0,
    };
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
        takeOver(request);
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
      case "answer":
        request.input.answer(signal.id, signal.message);
        break;
    }
  }

  // ---- lifetime ----

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
    this.retention.forget(request);
    request.expiry.arm(request.policy.maxWait * 1000, () => this.expire(request));
  }

  /** @internal Attached again (or finished): no expiry, and no retention of a delivered response. */
  clearExpiry(request: ResumableRequest): void {
    this.retention.forget(request);
    request.expiry.clear();
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

  /** @internal The client cancelled the request on the connection it is attached to: it ends here. */
  peerCancelled(request: ResumableRequest): void {
    this.free(request);
  }

  /** @internal End the request: its handler is aborted with `reason`, then it is freed. */
  cancel(request: ResumableRequest, reason: unknown): void {
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
    if (attachment !== undefined) request.input.unregister(attachment.session);
    request.input.rejectAll("the resumable request ended");
    this.finished(request);
    this.engine.remove(request);
    request.log.delete();
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
