// Server side of async tool calls (PR #617): tools/async/call|join|get and the tools/async/cancel notification.
import { Buffer } from "node:buffer";
import { limitOption } from "../limits.js";
import { DurableEngine } from "../durable/engine.js";
import { ErrorCode, RpcError, type JsonObject, type JsonRpcMessage, type RequestId } from "../jsonrpc.js";
import type { RequestContext, RequestOptions } from "../peer.js";
import { InboundOperation } from "../operations.js";
import { ProgressOrderError, RequestCancelledError } from "../errors.js";
import { PROGRESS_NOTIFICATION, readProgressToken } from "../progress.js";
import type { ProgressToken } from "../operations.js";
import { CANCELLED_NOTIFICATION, SessionStateKey, type Session } from "../session.js";
import type { ServerSession } from "../lifecycle.js";
import { isPresentedToken, mintToken, TokenScheme } from "../durable/token.js";
import { MemoryOperationStore } from "../store/memory.js";
import { nodeLostError } from "../durable/errors.js";
import { type OperationStore, type OwnerSignal, type SharedOperationStore, type StoredOperation } from "../store/types.js";

export const ASYNC_CALL = "tools/async/call";
export const ASYNC_JOIN = "tools/async/join";
export const ASYNC_GET = "tools/async/get";
export const ASYNC_CANCEL = "tools/async/cancel";

/** Runs a tool the way tools/call would: params are `{ name, arguments }`; the result is a CallToolResult. */
export type AsyncToolRunner = (params: JsonObject, context: RequestContext) => Promise<JsonObject> | JsonObject;

export interface AsyncToolsOptions {
  /** Largest keepAlive granted, seconds (advertised as async.maxKeepAliveTime); default 3600. */
  maxKeepAlive?: number;
  /** keepAlive when the client asks for none, seconds; default 60. */
  defaultKeepAlive?: number;
  /** Return a reason to refuse the call (`accepted: false`; the reason is what tools/async/get then says). */
  accept?: (name: string, args: JsonObject | undefined) => true | string;
  /**
   * Tool calls running at once in this process, all principals together; past it calls are refused. Finished
   * runs (kept for their result) and refused calls do not count. Default 1000.
   */
  maxRuns?: number;
  /**
   * Tool calls running at once per principal, or per session when the connection has no principal; past it
   * that principal's (session's) calls are refused until one of its runs ends. Default 100.
   */
  maxRunsPerPrincipal?: number;
  /**
   * Memory for finished runs kept for tools/async/get: the JSON size of each result (or error) plus a fixed
   * allowance per run, over all runs. Past it the oldest finished runs are dropped (they then read as expired);
   * a result larger than the whole bound reaches only the gets already waiting for it. Default 32 MiB.
   */
  maxKeptResultBytes?: number;
  /** Refused calls whose reason tools/async/get can still tell; past it the oldest are forgotten. Default 1000. */
  maxRefusals?: number;
  /**
   * A store shared between nodes (runtime/store/redis.ts): runs are recorded there with their progress and
   * outcome, so tools/async/join|get|cancel work on any node. Default: none (runs live in this process only).
   */
  store?: OperationStore;
  onerror?: (error: Error) => void;
}

/** The outcome of a run that was cancelled, as recorded for other nodes: they tell their joined sessions. */
const CANCELLED_STATUS = "cancelled";

type RunStatus = "processing" | "completed" | "failed" | "cancelled";

/** Counted against maxKeptResultBytes for each kept run besides its result: what a finished run held on the heap (measured about 1.5 KiB). */
const KEPT_RUN_OVERHEAD = 1536;

/** Who a running call counts against: its principal, or the session it came in on when there is none. */
type RunOwner = string | Session;

/** A refused call: only what tools/async/get needs to tell why, until it expires. */
interface Refusal {
  /** What the TokenScheme keeps of its token. */
  readonly token: string;
  readonly reason: string;
  readonly principal: string | undefined;
  readonly keepAlive: number;
  /** Date.now() after which the token reads as unknown. */
  readonly expires: number;
}

interface Joined {
  session: Session;
  /** The request (call or join) through which the session attached: cancellation names it. */
  requestId: RequestId;
  progressToken: ProgressToken | undefined;
  /** Its entry in the session's joins (see AsyncTools.joinsKey): the session's close calls it. */
  leave: () => void;
}

function sessionToolRunner(session: Session): AsyncToolRunner {
  return (params, context) => {
    const handler = session.requestHandler("tools/call");
    if (handler === undefined) throw new RpcError(ErrorCode.MethodNotFound, "This server has no tools/call handler");
    return handler(params, context);
  };
}

function unknownRun(): RpcError {
  return new RpcError(ErrorCode.InvalidParams, "Unknown or expired async tool call");
}

/** One async tool run: the tool's RequestContext, detached from every connection. */
class AsyncRun extends InboundOperation implements RequestContext {
  status: RunStatus = "processing";
  outcome: JsonObject | undefined = undefined;
  failure: RpcError | undefined = undefined;
  readonly joined = new Map<Session, Joined>();
  readonly waiters = new Set<() => void>();
  keepTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  lastProgress = -Infinity;
  /** Joins on other nodes following this run (shared store). */
  remoteJoins = 0;
  /** Next sequence number of the run's queue in the shared store. */
  nextSeq = 1;
  /** Its key in the shared store (the token's hash), when there is one. */
  storeKey: string | undefined = undefined;
  /** What it counts against maxKeptResultBytes once finished and kept. */
  keptBytes = 0;
  /** Forgotten (expired, dropped, or shut down): nothing may re-arm it. */
  freed = false;

  /** What the manager's TokenScheme keeps of the token. */
  readonly keptToken: string;

  constructor(
    readonly manager: AsyncTools,
    token: string,
    /** Its key in the manager's runs (and in the shared store, when there is one). */
    readonly key: string,
    id: RequestId,
    public keepAlive: number,
    readonly principal: string | undefined,
  ) {
    super(id, "tools/call");
    this.keptToken = manager.tokens.kept(token);
  }

  get requestId(): RequestId {
    return this.id;
  }

  get done(): boolean {
    return this.status !== "processing";
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    if (this.done) return Promise.resolve();
    if (typeof progress !== "number" || !Number.isFinite(progress)) return Promise.reject(new TypeError("Progress must be a finite number"));
    if (progress <= this.lastProgress) return Promise.reject(new ProgressOrderError(progress, this.lastProgress));
    this.lastProgress = progress;
    this.manager.record(this, { jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params: progressParams(undefined, progress, total, message) });
    for (const j of this.joined.values()) {
      if (j.progressToken === undefined) continue;
      const params: JsonObject = { progressToken: j.progressToken, progress };
      if (total !== undefined) params.total = total;
      if (message !== undefined) params.message = message;
      j.session.transmit({ jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params }).catch(() => undefined);
    }
    return Promise.resolve();
  }

  /** Server-to-client requests go to the first joined session (the one that is most likely listening). */
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    const first = this.joined.values().next();
    if (first.done === true) return Promise.reject(new RpcError(ErrorCode.InvalidRequest, "No session is attached to this async tool call"));
    return first.value.session.request(method, params, options);
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    for (const j of this.joined.values()) j.session.notify(method, params).catch(() => undefined);
    return Promise.resolve();
  }

  settle(status: RunStatus, outcome: JsonObject | undefined, failure: RpcError | undefined): void {
    if (this.done) return;
    this.status = status;
    this.outcome = outcome;
    this.failure = failure;
    this.manager.recordEnd(this);
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
    this.manager.keep(this);
  }
}

function progressParams(token: ProgressToken | undefined, progress: number, total: unknown, message: unknown): JsonObject {
  const params: JsonObject = token === undefined ? { progress } : { progressToken: token, progress };
  if (typeof total === "number") params.total = total;
  if (typeof message === "string") params.message = message;
  return params;
}

/** The JSON size of what a finished run answers tools/async/get with, plus its bookkeeping. */
function keptSize(run: AsyncRun): number {
  const answer: unknown = run.status === "completed" ? run.outcome : run.failure?.toJSON();
  try {
    return KEPT_RUN_OVERHEAD + Buffer.byteLength(JSON.stringify(answer) ?? "");
  } catch {
    // Not JSON (a cycle, a BigInt): it cannot be sent either, so only the bookkeeping is held.
    return KEPT_RUN_OVERHEAD;
  }
}

function nodeLost(): RpcError {
  return nodeLostError("Async tool call");
}

/**
 * Async tool calls for every session it is installed on: runs outlive connections, any session that knows
 * the token (and, with principals, is the same principal) may join, get or cancel.
 */
export class AsyncTools {
  readonly maxKeepAlive: number;
  private readonly defaultKeepAlive: number;
  private readonly acceptCall: AsyncToolsOptions["accept"];
  private readonly maxRuns: number;
  private readonly maxRunsPerPrincipal: number;
  private readonly maxKeptResultBytes: number;
  private readonly maxRefusals: number;
  /** Runs held, by the key of their token, with the store and the token scheme. */
  private readonly engine: DurableEngine<AsyncRun>;
  /** @internal */
  readonly tokens: TokenScheme;
  /** Runs whose handler has not returned yet, by owner; an owner with none has no entry. */
  private readonly runningBy = new Map<RunOwner, number>();
  private runningCount = 0;
  /** Finished runs kept for their result, oldest first, and their total keptBytes. */
  private readonly kept = new Set<AsyncRun>();
  private keptTotal = 0;
  /** Refused calls by token, oldest first. */
  private readonly refusals = new Map<string, Refusal>();
  private readonly shared: SharedOperationStore | undefined;
  private readonly onerror: ((error: Error) => void) | undefined;
  /**
   * What each installed session is joined to, by run key (or `remote:` and store key for a run on another node):
   * the function that ends that join, called when the session's connection closes.
   */
  private readonly joinsKey = new SessionStateKey<Map<string, () => void>>("async-tools", () => new Map());
  /** evicted: finished runs dropped before their keepAlive ended, to stay within maxKeptResultBytes. */
  readonly stats = { accepted: 0, rejected: 0, joins: 0, cancelled: 0, expired: 0, evicted: 0 };

  /** `runTool` defaults to the tools/call handler registered on the session that receives the call. */
  constructor(
    private readonly runTool: AsyncToolRunner | undefined,
    options: AsyncToolsOptions = {},
  ) {
    this.maxKeepAlive = options.maxKeepAlive ?? 3600;
    this.defaultKeepAlive = Math.min(options.defaultKeepAlive ?? 60, this.maxKeepAlive);
    this.acceptCall = options.accept;
    this.maxRuns = limitOption("maxRuns", options.maxRuns, 1000);
    this.maxRunsPerPrincipal = limitOption("maxRunsPerPrincipal", options.maxRunsPerPrincipal, 100);
    this.maxKeptResultBytes = limitOption("maxKeptResultBytes", options.maxKeptResultBytes, 32 * 1024 * 1024);
    this.maxRefusals = limitOption("maxRefusals", options.maxRefusals, 1000);
    this.onerror = options.onerror;
    // Without a store, runs live in this process only (the engine is given an in-memory one it never writes).
    this.engine = new DurableEngine<AsyncRun>(options.store ?? new MemoryOperationStore(), (error) => this.report(error), (run, signal) =>
      this.signalled(run, signal),
    );
    this.tokens = this.engine.tokens;
    this.shared = this.engine.shared;
  }

  /** What to merge into the server's capabilities: `{ async: { maxKeepAliveTime } }`. */
  capabilities(): JsonObject {
    return { async: { maxKeepAliveTime: this.maxKeepAlive } };
  }

  /** Runs held: running, or finished and kept for their result. */
  get size(): number {
    return this.engine.size;
  }

  /** Runs whose handler has not returned yet (a cancelled handler counts until it returns). */
  get running(): number {
    return this.runningCount;
  }

  /** What the kept finished runs count against maxKeptResultBytes. */
  get keptBytes(): number {
    return this.keptTotal;
  }

  /** Resolves once no run is held. */
  idle(): Promise<void> {
    return this.engine.idle();
  }

  install(session: ServerSession): void {
    if (session.peekState(this.joinsKey) !== undefined) return;
    const joins = session.state(this.joinsKey);
    session.use({
      closed: () => {
        const ends = [...joins.values()];
        joins.clear();
        for (const end of ends) end();
      },
    });
    session.registerCapabilities(this.capabilities());
    session.onRequest(ASYNC_CALL, (params, context) => this.call(session, params ?? {}, context));
    session.onRequest(ASYNC_JOIN, (params, context) => {
      const key = this.remoteKey(params?.token);
      return key === undefined ? this.join(session, params ?? {}, context) : this.joinRemote(session, key, params ?? {}, context);
    });
    session.onRequest(ASYNC_GET, (params, context) => {
      const key = this.remoteKey(params?.token);
      return key === undefined ? this.get(params ?? {}, context) : this.getRemote(key, params ?? {}, context);
    });
    session.onNotification(ASYNC_CANCEL, (params, sender) => {
      const key = this.remoteKey(params?.token);
      const principal = sender.principal ?? undefined;
      if (key === undefined) this.cancelByToken(params, principal);
      else void this.cancelRemote(key, principal).catch((error: unknown) => this.report(error));
    });
  }

  private grant(requested: unknown): number {
    const wanted = typeof requested === "number" && Number.isFinite(requested) && requested >= 0 ? Math.floor(requested) : this.defaultKeepAlive;
    return Math.min(wanted, this.maxKeepAlive);
  }

  private call(session: ServerSession, params: JsonObject, context: RequestContext): JsonObject {
    const name = String(params.name);
    const args = typeof params.arguments === "object" && params.arguments !== null ? (params.arguments as JsonObject) : undefined;
    const keepAlive = this.grant(params.keepAlive);
    const token = mintToken();
    const key = this.tokens.keyOf(token);
    const principal = context.principal ?? undefined;
    const owner: RunOwner = principal ?? session;
    const verdict = this.verdict(owner, name, args);
    if (verdict !== true) {
      // Refused, but with a token: tools/async/get tells why, for keepAlive seconds (this node only).
      this.stats.rejected++;
      this.refuse(key, { token: this.tokens.kept(token), reason: verdict, principal, keepAlive, expires: Date.now() + keepAlive * 1000 });
      return { accepted: false, token, keepAlive };
    }
    const run = new AsyncRun(this, token, key, context.requestId, keepAlive, principal);
    this.engine.add(run);
    this.runningCount++;
    this.runningBy.set(owner, (this.runningBy.get(owner) ?? 0) + 1);
    if (this.shared !== undefined) {
      run.storeKey = key;
      const record: StoredOperation = { kind: "async", requestId: context.requestId, status: "processing", pendingInput: 0, node: this.shared.nodeId, keepFor: keepAlive };
      if (run.principal !== undefined) record.principal = run.principal;
      this.write(() => this.shared!.create(key, record));
    }
    this.stats.accepted++;
    this.attach(run, session, context.requestId, readProgressToken(params));
    const toolParams: JsonObject = args === undefined ? { name } : { name, arguments: args };
    const runner = this.runTool ?? sessionToolRunner(session);
    Promise.resolve()
      .then(() => runner(toolParams, run))
      .then(
        (result) => {
          this.release(owner);
          run.settle("completed", result, undefined);
        },
        (error: unknown) => {
          this.release(owner);
          if (run.status === "cancelled") return;
          const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
          run.settle("failed", undefined, rpc);
        },
      )
      .finally(() => this.armKeepAlive(run));
    return { accepted: true, token, keepAlive };
  }

  /**
   * A handler returned: its slot is free again, before anyone hears the result. A cancelled handler keeps its
   * slot until it returns, since it may still be working.
   */
  private release(owner: RunOwner): void {
    this.runningCount--;
    const left = (this.runningBy.get(owner) ?? 1) - 1;
    if (left === 0) this.runningBy.delete(owner);
    else this.runningBy.set(owner, left);
  }

  /** true, or why the call is refused: the caller's running calls, everyone's, then the app's own rule. */
  private verdict(owner: RunOwner, name: string, args: JsonObject | undefined): true | string {
    if ((this.runningBy.get(owner) ?? 0) >= this.maxRunsPerPrincipal) {
      const whose = typeof owner === "string" ? "for this principal" : "in this session";
      return `Too many async tool calls running ${whose} (limit ${this.maxRunsPerPrincipal}); call again once one has finished`;
    }
    if (this.runningCount >= this.maxRuns) return `Too many async tool calls running on this server (limit ${this.maxRuns}); call again later`;
    return this.acceptCall?.(name, args) ?? true;
  }

  /** Keep a refusal's reason, forgetting expired ones at the front and the oldest past maxRefusals. */
  private refuse(key: string, refusal: Refusal): void {
    if (this.maxRefusals <= 0) return;
    const now = Date.now();
    for (const [old, r] of this.refusals) {
      if (this.refusals.size < this.maxRefusals && r.expires > now) break;
      this.refusals.delete(old);
    }
    this.refusals.set(key, refusal);
  }

  private refusal(token: unknown, principal: string | undefined): Refusal | undefined {
    if (!isPresentedToken(token)) return undefined;
    const key = this.tokens.keyOf(token);
    const refusal = this.refusals.get(key);
    if (refusal === undefined || refusal.principal !== principal || !this.tokens.matches(refusal.token, token)) return undefined;
    if (refusal.expires <= Date.now()) {
      this.refusals.delete(key);
      return undefined;
    }
    return refusal;
  }

  /** The run a presented token names for this principal (by key, then the whole token in constant time). */
  private find(token: unknown, principal: string | undefined): AsyncRun {
    const run = this.engine.find(token, principal);
    if (run === undefined) throw unknownRun();
    return run;
  }

  private join(session: ServerSession, params: JsonObject, context: RequestContext): JsonObject {
    const refused = this.refusal(params.token, context.principal ?? undefined);
    if (refused !== undefined) return { accepted: false, token: params.token as string, keepAlive: refused.keepAlive };
    const run = this.find(params.token, context.principal ?? undefined);
    if (params.keepAlive !== undefined) run.keepAlive = Math.max(run.keepAlive, this.grant(params.keepAlive));
    this.stats.joins++;
    this.attach(run, session, context.requestId, readProgressToken(params));
    return { accepted: true, token: params.token as string, keepAlive: run.keepAlive };
  }

  private async get(params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const refused = this.refusal(params.token, context.principal ?? undefined);
    if (refused !== undefined) return { content: [{ type: "text", text: refused.reason }], isError: true };
    const run = this.find(params.token, context.principal ?? undefined);
    if (!run.done) {
      const timeout = typeof params.timeout === "number" && params.timeout >= 0 ? params.timeout : undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          context.signal.removeEventListener("abort", wake);
          run.waiters.delete(wake);
          resolve();
        };
        const timer = timeout === undefined ? undefined : setTimeout(wake, timeout * 1000);
        run.waiters.add(wake);
        context.signal.addEventListener("abort", wake, { once: true });
      });
      if (!run.done) return { content: [], isPending: true };
    }
    if (run.status === "completed") return run.outcome!;
    throw run.failure ?? new RpcError(ErrorCode.InternalError, "Async tool call failed");
  }

  private cancelByToken(params: JsonObject | undefined, principal: string | undefined): void {
    const run = this.engine.find(params?.token, principal);
    // Like a cancellation of an unknown request id: nothing to answer, nothing revealed. Another principal's
    // run is unknown to this one, as for join and get; a notification cannot be refused, so it is ignored.
    if (run === undefined || run.principal !== principal || run.done) return;
    this.cancel(run, "Cancelled by the client");
  }

  // ---- shared store: recording runs, and serving runs other nodes hold ----

  /** @internal Record a message of a run (progress) in the shared store. */
  record(run: AsyncRun, message: JsonRpcMessage): void {
    const shared = this.shared;
    const key = run.storeKey;
    if (shared === undefined || key === undefined) return;
    const seq = run.nextSeq++;
    this.write(() => shared.append(key, { seq, message }));
  }

  /** @internal The run settled: record its outcome as the queue's final message, then its status. */
  recordEnd(run: AsyncRun): void {
    const shared = this.shared;
    const key = run.storeKey;
    if (shared === undefined || key === undefined) return;
    let final: JsonRpcMessage;
    if (run.status === "completed") final = { jsonrpc: "2.0", id: run.id, result: run.outcome ?? {} };
    else {
      const error = (run.failure ?? new RpcError(ErrorCode.InternalError, "Async tool call failed")).toJSON();
      final = { jsonrpc: "2.0", id: run.id, error: run.status === "cancelled" ? { ...error, data: { status: CANCELLED_STATUS } } : error };
    }
    const seq = run.nextSeq++;
    this.write(() => shared.append(key, { seq, message: final }));
    this.write(() => shared.update(key, { status: run.status === "completed" ? "completed" : "failed" }));
  }

  /** Store writes of runs: nothing reads a run's record back on this node, so they need no ordering between them. */
  private write(work: () => unknown): void {
    this.engine.writes.write(work);
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  /** The store key of a token this node does not hold, when the store is shared; else undefined (served here). */
  private remoteKey(token: unknown): string | undefined {
    return this.engine.remoteKey(token, (key) => this.refusals.has(key));
  }

  private async remoteRecord(key: string, principal: string | undefined): Promise<StoredOperation> {
    const stored = await this.shared!.get(key);
    if (stored === undefined || stored.kind !== "async" || stored.principal !== principal) throw unknownRun();
    return stored;
  }

  private tell(owner: string | undefined, key: string, signal: OwnerSignal): void {
    if (owner === undefined) return;
    this.write(() => this.shared!.signal(owner, key, signal));
  }

  /**
   * Follows a run's queue on the shared store from `afterSeq`: `progress` for each progress message, then
   * `end` once with the final message, or with undefined when the follow stopped first (`stop()`).
   */
  private followRun(key: string, afterSeq: number, progress: (params: JsonObject) => void, end: (final: JsonObject | undefined) => void): () => void {
    let ended = false;
    let unregister: () => void = () => undefined;
    const finish = (final: JsonObject | undefined) => {
      if (ended) return;
      ended = true;
      following.close();
      unregister();
      end(final);
    };
    const stop = () => finish(undefined);
    const following = this.shared!.follow(key, afterSeq, {
      message: ({ message }) => {
        const m = message as unknown as JsonObject;
        if (m.method === undefined) finish(m);
        else if (m.method === PROGRESS_NOTIFICATION && typeof m.params === "object" && m.params !== null) progress(m.params as JsonObject);
      },
      lost: () => finish({ jsonrpc: "2.0", error: nodeLost().toJSON() }),
    });
    unregister = this.engine.following(stop);
    return stop;
  }

  private async getRemote(key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.remoteRecord(key, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLost();
    const timeout = typeof params.timeout === "number" && params.timeout >= 0 ? params.timeout : undefined;
    const final = await new Promise<JsonObject | undefined>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Only the final message matters here: start at the last one queued (queues of runs are never trimmed, so
      // the length is the last seq), not at the run's whole progress history, which a polling get re-read each time.
      const stop = this.followRun(key, Math.max(0, (stored.queued ?? 0) - 1), () => undefined, (m) => {
        if (timer !== undefined) clearTimeout(timer);
        context.signal.removeEventListener("abort", stop);
        resolve(m);
      });
      if (timeout !== undefined) timer = setTimeout(stop, timeout * 1000);
      context.signal.addEventListener("abort", stop, { once: true });
    });
    if (final === undefined) return { content: [], isPending: true };
    if (final.error !== undefined) {
      const e = final.error as { code: number; message: string; data?: unknown };
      throw new RpcError(e.code, e.message, e.data);
    }
    return final.result as JsonObject;
  }

  private async joinRemote(session: ServerSession, key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.remoteRecord(key, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLost();
    const owner = stored.node;
    const keepAlive = Math.max(stored.keepFor ?? 0, params.keepAlive === undefined ? 0 : this.grant(params.keepAlive));
    const progressToken = readProgressToken(params);
    const requestId = context.requestId;
    // Runs' queues are never trimmed, so their length is the last seq: the join hears progress from now on.
    const from = stored.queued ?? 0;
    const joins = session.state(this.joinsKey);
    const joinKey = `remote:${key}`;
    const previous = joins.get(joinKey);
    if (previous !== undefined) {
      joins.delete(joinKey);
      previous();
    }
    this.tell(owner, key, { type: "attach", keepAlive });
    const stop = this.followRun(
      key,
      from,
      (p) => {
        if (progressToken === undefined) return;
        session.transmit({ jsonrpc: "2.0", method: PROGRESS_NOTIFICATION, params: progressParams(progressToken, Number(p.progress), p.total, p.message) }).catch(() => undefined);
      },
      (final) => {
        if (joins.get(joinKey) === stop) joins.delete(joinKey);
        if (final === undefined) this.tell(owner, key, { type: "detach" });
        const error = final?.error as { data?: { status?: unknown } } | undefined;
        if (error?.data?.status === CANCELLED_STATUS) {
          session.transmit({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params: { requestId, reason: "cancelled" } }).catch(() => undefined);
        }
      },
    );
    joins.set(joinKey, stop);
    this.stats.joins++;
    return { accepted: true, token: params.token as string, keepAlive };
  }

  private async cancelRemote(key: string, principal: string | undefined): Promise<void> {
    const stored = await this.shared!.get(key);
    if (stored === undefined || stored.kind !== "async" || stored.principal !== principal || stored.status !== "processing" || stored.lost === true) return;
    this.tell(stored.node, key, { type: "cancel", reason: "Cancelled by the client" });
  }

  /** Signals from nodes serving our runs' joins and cancels. */
  private signalled(run: AsyncRun, signal: OwnerSignal): void {
    if (signal.type === "attach") {
      run.remoteJoins++;
      if (typeof signal.keepAlive === "number") run.keepAlive = Math.max(run.keepAlive, Math.min(signal.keepAlive, this.maxKeepAlive));
      if (run.keepTimer !== undefined && !run.done) {
        clearTimeout(run.keepTimer);
        run.keepTimer = undefined;
      }
    } else if (signal.type === "detach") {
      run.remoteJoins = Math.max(0, run.remoteJoins - 1);
      if (run.remoteJoins === 0 && run.joined.size === 0) this.armKeepAlive(run);
    } else if (signal.type === "cancel") {
      this.cancel(run, signal.reason ?? "Cancelled by the client");
    }
  }

  /** Cancel a run: its signal fires, every joined session is told with notifications/cancelled. */
  cancel(run: AsyncRun, reason: string): void {
    if (run.done) return;
    this.stats.cancelled++;
    run.settle("cancelled", undefined, new RpcError(ErrorCode.InvalidRequest, `Async tool call cancelled: ${reason}`));
    run.abort(new RequestCancelledError("tools/call", reason));
    for (const j of run.joined.values()) {
      j.session.transmit({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params: { requestId: j.requestId, reason } }).catch(() => undefined);
    }
    this.armKeepAlive(run);
  }

  private attach(run: AsyncRun, session: Session, requestId: RequestId, progressToken: ProgressToken | undefined): void {
    if (run.keepTimer !== undefined) {
      clearTimeout(run.keepTimer);
      run.keepTimer = undefined;
    }
    if (run.done) this.armKeepAlive(run);
    // A second join of the same session replaces its first (the token keys the session's joins).
    const leave = (): void => this.detach(run, session, leave);
    session.state(this.joinsKey).set(run.key, leave);
    run.joined.set(session, { session, requestId, progressToken, leave });
  }

  private detach(run: AsyncRun, session: Session, leave: () => void): void {
    const joined = run.joined.get(session);
    if (joined === undefined || joined.leave !== leave) return;
    run.joined.delete(session);
    if (run.joined.size === 0) this.armKeepAlive(run);
  }

  /**
   * Finished, or nobody attached: keep the run (and its result) keepAlive seconds, then free it; a run still
   * going with nobody attached is cancelled then. A join restarts the clock.
   */
  private armKeepAlive(run: AsyncRun): void {
    if (run.freed) return;
    if (run.keepTimer !== undefined) clearTimeout(run.keepTimer);
    run.keepTimer = setTimeout(() => {
      run.keepTimer = undefined;
      if ((run.joined.size > 0 || run.remoteJoins > 0) && !run.done) return;
      this.stats.expired++;
      if (!run.done) {
        run.settle("cancelled", undefined, new RpcError(ErrorCode.InvalidRequest, "Async tool call expired"));
        run.abort(new RequestCancelledError("tools/call", "keepAlive expired"));
      }
      this.free(run);
    }, run.keepAlive * 1000);
    run.keepTimer.unref?.();
  }

  /** @internal A run just finished: count its result against maxKeptResultBytes, dropping the oldest past it. */
  keep(run: AsyncRun): void {
    if (run.freed) return;
    const size = keptSize(run);
    if (size > this.maxKeptResultBytes) {
      // Never kept; freed once whoever settled it has told its joined sessions (cancel does after settling).
      this.stats.evicted++;
      queueMicrotask(() => this.free(run));
      return;
    }
    run.keptBytes = size;
    this.kept.add(run);
    this.keptTotal += size;
    for (const oldest of this.kept) {
      if (this.keptTotal <= this.maxKeptResultBytes) break;
      this.stats.evicted++;
      this.free(oldest);
    }
  }

  private free(run: AsyncRun): void {
    if (run.freed) return;
    run.freed = true;
    if (run.keepTimer !== undefined) {
      clearTimeout(run.keepTimer);
      run.keepTimer = undefined;
    }
    if (this.kept.delete(run)) this.keptTotal -= run.keptBytes;
    const key = run.storeKey;
    if (key !== undefined) this.write(() => this.shared!.delete(key));
    for (const j of run.joined.values()) {
      const joins = j.session.peekState(this.joinsKey);
      if (joins !== undefined && joins.get(run.key) === j.leave) joins.delete(run.key);
    }
    run.joined.clear();
    this.engine.remove(run);
  }

  /** Server shutdown: cancel everything and free it. */
  close(): void {
    this.engine.close();
    for (const run of this.engine.values()) {
      this.cancel(run, "Server shutting down");
      this.free(run);
    }
    this.refusals.clear();
  }
}
