// Joins, gets and cancels this node serves for async tool runs another node holds (shared store).
import { ErrorCode, RpcError, type JsonObject } from "../jsonrpc.js";
import type { RequestContext } from "../peer.js";
import type { ProgressToken } from "../operations.js";
import { PROGRESS_NOTIFICATION, readProgressToken } from "../progress.js";
import { CANCELLED_NOTIFICATION, type SessionStateKey } from "../session.js";
import type { ServerSession } from "../lifecycle.js";
import { nodeLostError } from "../durable/errors.js";
import type { OwnerSignal, SharedOperationStore, StoredOperation } from "../store/types.js";

/** The outcome of a run that was cancelled, as recorded for other nodes: they tell their joined sessions. */
export const CANCELLED_STATUS = "cancelled";

export function unknownRun(): RpcError {
  return new RpcError(ErrorCode.InvalidParams, "Unknown or expired async tool call");
}

export function progressParams(
  token: ProgressToken | undefined,
  progress: number,
  total: unknown,
  message: unknown,
): JsonObject {
  const params: JsonObject = token === undefined ? { progress } : { progressToken: token, progress };
  if (typeof total === "number") params.total = total;
  if (typeof message === "string") params.message = message;
  return params;
}

export function nodeLost(): RpcError {
  return nodeLostError("Async tool call");
}

/** What the remote side needs of the manager. */
export interface RemoteRunsHost {
  /** The keepAlive granted for a requested one, seconds. */
  grant(requested: unknown): number;
  /** Store work whose failure is reported, not thrown. */
  write(work: () => unknown): void;
  /** Registers a follow the engine ends on close(); returns the function that unregisters it. */
  following(end: () => void): () => void;
  /** A join was served (stats). */
  joined(): void;
  /** Each session's joins, by run key (`remote:` and store key here): the session's close ends them. */
  readonly joinsKey: SessionStateKey<Map<string, () => void>>;
}

/** Serves tools/async/join|get and tools/async/cancel for runs other nodes hold, by following their queues. */
export class RemoteRuns {
  constructor(
    private readonly shared: SharedOperationStore,
    private readonly host: RemoteRunsHost,
  ) {}

  private grant(requested: unknown): number {
    return this.host.grant(requested);
  }

  private write(work: () => unknown): void {
    this.host.write(work);
  }

  private following(end: () => void): () => void {
    return this.host.following(end);
  }

  private joined(): void {
    this.host.joined();
  }

  private get joinsKey(): SessionStateKey<Map<string, () => void>> {
    return this.host.joinsKey;
  }

  private async record(key: string, principal: string | undefined): Promise<StoredOperation> {
    const stored = await this.shared.get(key);
    if (stored === undefined || stored.kind !== "async" || stored.principal !== principal) throw unknownRun();
    return stored;
  }

  tell(owner: string | undefined, key: string, signal: OwnerSignal): void {
    if (owner === undefined) return;
    this.write(() => this.shared.signal(owner, key, signal));
  }

  /**
   * Follows a run's queue on the shared store from `afterSeq`: `progress` for each progress message, then
   * `end` once with the final message, or with undefined when the follow stopped first (`stop()`).
   */
  private followRun(
    key: string,
    afterSeq: number,
    progress: (params: JsonObject) => void,
    end: (final: JsonObject | undefined) => void,
  ): () => void {
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
    const following = this.shared.follow(key, afterSeq, {
      message: ({ message }) => {
        const m = message as unknown as JsonObject;
        if (m.method === undefined) finish(m);
        else if (m.method === PROGRESS_NOTIFICATION && typeof m.params === "object" && m.params !== null)
          progress(m.params as JsonObject);
      },
      lost: () => finish({ jsonrpc: "2.0", error: nodeLost().toJSON() }),
    });
    unregister = this.following(stop);
    return stop;
  }

  async get(key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLost();
    const timeout = typeof params.timeout === "number" && params.timeout >= 0 ? params.timeout : undefined;
    const final = await new Promise<JsonObject | undefined>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Only the final message matters here: start at the last one queued (queues of runs are never trimmed, so
      // the length is the last seq), not at the run's whole progress history, which a polling get re-read each time.
      const stop = this.followRun(
        key,
        Math.max(0, (stored.queued ?? 0) - 1),
        () => undefined,
        (m) => {
          if (timer !== undefined) clearTimeout(timer);
          context.signal.removeEventListener("abort", stop);
          resolve(m);
        },
      );
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

  async join(session: ServerSession, key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, context.principal ?? undefined);
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
        session
          .transmit({
            jsonrpc: "2.0",
            method: PROGRESS_NOTIFICATION,
            params: progressParams(progressToken, Number(p.progress), p.total, p.message),
          })
          .catch(() => undefined);
      },
      (final) => {
        if (joins.get(joinKey) === stop) joins.delete(joinKey);
        if (final === undefined) this.tell(owner, key, { type: "detach" });
        const error = final?.error as { data?: { status?: unknown } } | undefined;
        if (error?.data?.status === CANCELLED_STATUS) {
          session
            .transmit({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params: { requestId, reason: "cancelled" } })
            .catch(() => undefined);
        }
      },
    );
    joins.set(joinKey, stop);
    this.joined();
    return { accepted: true, token: params.token as string, keepAlive };
  }

  async cancel(key: string, principal: string | undefined): Promise<void> {
    const stored = await this.shared.get(key);
    if (
      stored === undefined ||
      stored.kind !== "async" ||
      stored.principal !== principal ||
      stored.status !== "processing" ||
      stored.lost === true
    )
      return;
    this.tell(stored.node, key, { type: "cancel", reason: "Cancelled by the client" });
  }
}
