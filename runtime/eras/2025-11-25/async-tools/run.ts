// One async tool run: the tool's RequestContext, detached from every connection, and what its kept result costs.
import { Buffer } from "node:buffer";
import { ErrorCode, RpcError, type JsonObject, type RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestContext, RequestOptions } from "../../../rpc/peer.js";
import { InboundOperation, type ProgressToken } from "../../../rpc/operations.js";
import { ProgressOrderError } from "../../../rpc/errors.js";
import { PROGRESS_NOTIFICATION } from "../../../rpc/progress.js";
import type { Session } from "../../../rpc/session/session.js";
import type { OperationLog } from "../../../durable/operation.js";
import { Deadline } from "../../../durable/timers.js";
import { progressParams } from "./remote.js";
import type { AsyncTools } from "./server.js";

export type RunStatus = "processing" | "completed" | "failed" | "cancelled";

/** Counted against maxKeptResultBytes for each kept run besides its result: what a finished run held on the heap (measured about 1.5 KiB). */
const KEPT_RUN_OVERHEAD = 1536;

/** One async tool run: the tool's RequestContext, detached from every connection. */
/** A session attached to a run (the one that called, or one that joined). */
export interface Joined {
  session: Session;
  /** The request (call or join) through which the session attached: cancellation names it. */
  requestId: RequestId;
  progressToken: ProgressToken | undefined;
  /** Ends this attachment; the session's close calls it (see Attachments). */
  leave: () => void;
}

export class AsyncRun extends InboundOperation implements RequestContext {
  status: RunStatus = "processing";
  outcome: JsonObject | undefined = undefined;
  failure: RpcError | undefined = undefined;
  readonly joined = new Map<Session, Joined>();
  readonly waiters = new Set<() => void>();
  /** Its keepAlive: when it runs out the run is freed (cancelled first if still going). */
  readonly deadline = new Deadline();
  lastProgress = -Infinity;
  /** Joins on other nodes following this run (shared store). */
  remoteJoins = 0;
  /** Its record and queue in the shared store, when there is one (progress, then the final response). */
  log: OperationLog<AsyncRun> | undefined = undefined;
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
    if (typeof progress !== "number" || !Number.isFinite(progress))
      return Promise.reject(new TypeError("Progress must be a finite number"));
    if (progress <= this.lastProgress) return Promise.reject(new ProgressOrderError(progress, this.lastProgress));
    this.lastProgress = progress;
    this.log?.append({
      jsonrpc: "2.0",
      method: PROGRESS_NOTIFICATION,
      params: progressParams(undefined, progress, total, message),
    });
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
    if (first.done === true)
      return Promise.reject(new RpcError(ErrorCode.InvalidRequest, "No session is attached to this async tool call"));
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

/** The JSON size of what a finished run answers tools/async/get with, plus its bookkeeping. */
export function keptSize(run: AsyncRun): number {
  const answer: unknown = run.status === "completed" ? run.outcome : run.failure?.toJSON();
  try {
    return KEPT_RUN_OVERHEAD + Buffer.byteLength(JSON.stringify(answer) ?? "");
  } catch {
    // Not JSON (a cycle, a BigInt): it cannot be sent either, so only the bookkeeping is held.
    return KEPT_RUN_OVERHEAD;
  }
}
