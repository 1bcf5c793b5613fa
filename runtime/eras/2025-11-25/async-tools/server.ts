// Server side of async tool calls (PR #617): tools/async/call|join|get and the tools/async/cancel notification.
import { limitOption } from "../../../rpc/limits.js";
import { Attachments } from "../../../durable/attachments.js";
import { DurableEngine } from "../../../durable/engine.js";
import { OperationLog } from "../../../durable/operation.js";
import { RemoteOperations } from "../../../durable/remote.js";
import { AsyncRun, keptSize } from "./run.js";
import { CANCELLED_STATUS, RemoteRuns, unknownRun } from "./remote.js";
import { ErrorCode, RpcError, type JsonObject, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import { readProgressToken } from "../../../rpc/progress.js";
import type { ProgressToken } from "../../../rpc/operations.js";
import { CANCELLED_NOTIFICATION, type Session } from "../../../rpc/session/session.js";
import type { ServerSession } from "../../../mcp/lifecycle.js";
import { isPresentedToken, mintToken, TokenScheme } from "../../../durable/token.js";
import { MemoryOperationStore } from "../../../store/memory.js";
import type { OperationStore, OwnerSignal, SharedOperationStore } from "../../../store/types.js";

/** @internal */
export const ASYNC_CALL = "tools/async/call";
/** @internal */
export const ASYNC_JOIN = "tools/async/join";
/** @internal */
export const ASYNC_GET = "tools/async/get";
/** @internal */
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

function sessionToolRunner(session: Session): AsyncToolRunner {
  return (params, context) => {
    const handler = session.requestHandler("tools/call");
    if (handler === undefined) throw new RpcError(ErrorCode.MethodNotFound, "This server has no tools/call handler");
    return handler(params, context);
  };
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
  /** Serves runs other nodes hold (shared store only). */
  private readonly remote: RemoteRuns | undefined;
  private readonly onerror: ((error: Error) => void) | undefined;
  /**
   * The sessions joined to runs, by run key (or `remote:` and store key for a run on another node): a session's
   * close ends its joins.
   */
  private readonly attachments = new Attachments("async-tools");
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
    this.engine = new DurableEngine<AsyncRun>(
      options.store ?? new MemoryOperationStore(),
      (error) => this.report(error),
      (run, signal) => this.signalled(run, signal),
    );
    this.tokens = this.engine.tokens;
    this.shared = this.engine.shared;
    const remote = RemoteOperations.of(this.engine);
    this.remote =
      remote === undefined
        ? undefined
        : new RemoteRuns(remote, {
            grant: (requested) => this.grant(requested),
            joined: () => void this.stats.joins++,
            attachments: this.attachments,
          });
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
    if (this.attachments.installed(session)) return;
    this.attachments.install(session);
    session.registerCapabilities(this.capabilities());
    session.onRequest(ASYNC_CALL, (params, context) => this.call(session, params ?? {}, context));
    session.onRequest(ASYNC_JOIN, (params, context) => {
      const key = this.remoteKey(params?.token);
      return key === undefined
        ? this.join(session, params ?? {}, context)
        : this.remote!.join(session, key, params ?? {}, context);
    });
    session.onRequest(ASYNC_GET, (params, context) => {
      const key = this.remoteKey(params?.token);
      return key === undefined ? this.get(params ?? {}, context) : this.remote!.get(key, params ?? {}, context);
    });
    session.onNotification(ASYNC_CANCEL, (params, sender) => {
      const key = this.remoteKey(params?.token);
      const principal = sender.principal ?? undefined;
      if (key === undefined) this.cancelByToken(params, principal);
      else void this.remote!.cancel(key, principal).catch((error: unknown) => this.report(error));
    });
  }

  private grant(requested: unknown): number {
    const wanted =
      typeof requested === "number" && Number.isFinite(requested) && requested >= 0
        ? Math.floor(requested)
        : this.defaultKeepAlive;
    return Math.min(wanted, this.maxKeepAlive);
  }

  private call(session: ServerSession, params: JsonObject, context: RequestContext): JsonObject {
    const name = String(params.name);
    const args =
      typeof params.arguments === "object" && params.arguments !== null ? (params.arguments as JsonObject) : undefined;
    const keepAlive = this.grant(params.keepAlive);
    const token = mintToken();
    const key = this.tokens.keyOf(token);
    const principal = context.principal ?? undefined;
    const owner: RunOwner = principal ?? session;
    const verdict = this.verdict(owner, name, args);
    if (verdict !== true) {
      // Refused, but with a token: tools/async/get tells why, for keepAlive seconds (this node only).
      this.stats.rejected++;
      this.refuse(key, {
        token: this.tokens.kept(token),
        reason: verdict,
        principal,
        keepAlive,
        expires: Date.now() + keepAlive * 1000,
      });
      return { accepted: false, token, keepAlive };
    }
    const run = new AsyncRun(this, token, key, context.requestId, keepAlive, principal);
    this.engine.add(run);
    this.runningCount++;
    this.runningBy.set(owner, (this.runningBy.get(owner) ?? 0) + 1);
    // Recorded only where other nodes read it: in this process the run itself is the record.
    if (this.shared !== undefined)
      run.log = new OperationLog(this.engine, run, {
        kind: "async",
        requestId: context.requestId,
        status: "processing",
        pendingInput: 0,
        keepFor: keepAlive,
      });
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
          const rpc =
            error instanceof RpcError
              ? error
              : new RpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
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
    if (this.runningCount >= this.maxRuns)
      return `Too many async tool calls running on this server (limit ${this.maxRuns}); call again later`;
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
    if (refusal === undefined || refusal.principal !== principal || !this.tokens.matches(refusal.token, token))
      return undefined;
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

  /** @internal The run settled: record its outcome as the queue's final message, then its status. */
  recordEnd(run: AsyncRun): void {
    const log = run.log;
    if (log === undefined) return;
    let final: JsonRpcMessage;
    if (run.status === "completed") final = { jsonrpc: "2.0", id: run.id, result: run.outcome ?? {} };
    else {
      const error = (run.failure ?? new RpcError(ErrorCode.InternalError, "Async tool call failed")).toJSON();
      final = {
        jsonrpc: "2.0",
        id: run.id,
        error: run.status === "cancelled" ? { ...error, data: { status: CANCELLED_STATUS } } : error,
      };
    }
    log.finish(log.nextSeq++, final, run.status === "completed" ? "completed" : "failed");
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  /** The store key of a token this node does not hold, when the store is shared; else undefined (served here). */
  private remoteKey(token: unknown): string | undefined {
    return this.engine.remoteKey(token, (key) => this.refusals.has(key));
  }

  /** Signals from nodes serving our runs' joins and cancels. */
  private signalled(run: AsyncRun, signal: OwnerSignal): void {
    if (signal.type === "attach") {
      run.remoteJoins++;
      if (typeof signal.keepAlive === "number")
        run.keepAlive = Math.max(run.keepAlive, Math.min(signal.keepAlive, this.maxKeepAlive));
      if (!run.done) run.deadline.clear();
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
      j.session
        .transmit({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params: { requestId: j.requestId, reason } })
        .catch(() => undefined);
    }
    this.armKeepAlive(run);
  }

  private attach(
    run: AsyncRun,
    session: Session,
    requestId: RequestId,
    progressToken: ProgressToken | undefined,
  ): void {
    run.deadline.clear();
    if (run.done) this.armKeepAlive(run);
    // A second join of the same session replaces its first (the run's key names the session's attachment).
    const leave = (): void => this.detach(run, session, leave);
    this.attachments.attach(session, run.key, leave);
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
    run.deadline.arm(run.keepAlive * 1000, () => {
      if ((run.joined.size > 0 || run.remoteJoins > 0) && !run.done) return;
      this.stats.expired++;
      if (!run.done) {
        run.settle("cancelled", undefined, new RpcError(ErrorCode.InvalidRequest, "Async tool call expired"));
        run.abort(new RequestCancelledError("tools/call", "keepAlive expired"));
      }
      this.free(run);
    });
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
    run.deadline.clear();
    if (this.kept.delete(run)) this.keptTotal -= run.keptBytes;
    run.log?.delete();
    for (const j of run.joined.values()) this.attachments.release(j.session, run.key, j.leave);
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
