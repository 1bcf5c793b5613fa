// Joins, gets and cancels this node serves for async tool runs another node holds (shared store).
import { ErrorCode, RpcError, type JsonObject, type JsonRpcResponse } from "../../../rpc/jsonrpc.js";
import { isPlainObject } from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import type { ProgressToken } from "../../../rpc/operations.js";
import { PROGRESS_NOTIFICATION, readProgressToken } from "../../../rpc/progress.js";
import { CANCELLED_NOTIFICATION } from "../../../rpc/session/session.js";
import type { ServerSession } from "../../../mcp/lifecycle.js";
import type { Attachments } from "../../../durable/attachments.js";
import { nodeLostError } from "../../../durable/errors.js";
import { outcome } from "../../../durable/messages.js";
import type { RemoteOperations } from "../../../durable/remote.js";
import type { StoredOperation } from "../../../store/types.js";
import type { AsyncRun } from "./run.js";

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

/** Whether a recorded final response says the run was cancelled (its joined sessions are told so). */
function wasCancelled(response: JsonRpcResponse): boolean {
  if (!("error" in response)) return false;
  const data = response.error.data;
  return isPlainObject(data) && data.status === CANCELLED_STATUS;
}

/** What the remote side needs of the manager. */
export interface RemoteRunsHost {
  /** The keepAlive granted for a requested one, seconds. */
  grant(requested: unknown): number;
  /** A join was served (stats). */
  joined(): void;
  /** The sessions' attachments to runs (here keyed `remote:` and the store key): a session's close ends them. */
  readonly attachments: Attachments;
}

/** Serves tools/async/join|get and tools/async/cancel for runs other nodes hold, by following their queues. */
export class RemoteRuns {
  constructor(
    private readonly remote: RemoteOperations<AsyncRun>,
    private readonly host: RemoteRunsHost,
  ) {}

  private record(key: string, principal: string | undefined): Promise<StoredOperation> {
    return this.remote.record(key, "async", principal, unknownRun);
  }

  async get(key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLost();
    const timeout = typeof params.timeout === "number" && params.timeout >= 0 ? params.timeout : undefined;
    const final = await new Promise<JsonRpcResponse | undefined>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Only the final message matters here: start at the last one queued (queues of runs are never trimmed, so
      // the length is the last seq), not at the run's whole progress history, which a polling get re-read each time.
      const follow = this.remote.follow(key, Math.max(0, (stored.queued ?? 0) - 1), {
        message: () => undefined,
        final: resolve,
        lost: () => resolve({ jsonrpc: "2.0", error: nodeLost().toJSON() }),
        closed: () => resolve(undefined),
        ended: () => {
          if (timer !== undefined) clearTimeout(timer);
          context.signal.removeEventListener("abort", stop);
        },
      });
      const stop = () => follow.end(() => resolve(undefined));
      if (timeout !== undefined) timer = setTimeout(stop, timeout * 1000);
      context.signal.addEventListener("abort", stop, { once: true });
    });
    if (final === undefined) return { content: [], isPending: true };
    return outcome(final);
  }

  async join(session: ServerSession, key: string, params: JsonObject, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLost();
    const owner = stored.node;
    const keepAlive = Math.max(
      stored.keepFor ?? 0,
      params.keepAlive === undefined ? 0 : this.host.grant(params.keepAlive),
    );
    const progressToken = readProgressToken(params);
    const requestId = context.requestId;
    // Runs' queues are never trimmed, so their length is the last seq: the join hears progress from now on.
    const from = stored.queued ?? 0;
    const attachments = this.host.attachments;
    const joinKey = `remote:${key}`;
    const tell = this.remote.tell.bind(this.remote, owner, key);
    let leave: () => void = () => undefined;
    const follow = this.remote.follow(key, from, {
      message: ({ message }) => {
        if (progressToken === undefined || !("method" in message) || message.method !== PROGRESS_NOTIFICATION) return;
        const p = message.params;
        if (p === undefined) return;
        session
          .transmit({
            jsonrpc: "2.0",
            method: PROGRESS_NOTIFICATION,
            params: progressParams(progressToken, Number(p.progress), p.total, p.message),
          })
          .catch(() => undefined);
      },
      final: (response) => {
        if (!wasCancelled(response)) return;
        session
          .transmit({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params: { requestId, reason: "cancelled" } })
          .catch(() => undefined);
      },
      lost: () => undefined,
      closed: () => tell({ type: "detach" }),
      ended: () => attachments.release(session, joinKey, leave),
    });
    // A session that leaves (or joins again) detaches: the running node may then let the run expire.
    leave = () => follow.end(() => tell({ type: "detach" }));
    tell({ type: "attach", keepAlive });
    attachments.attach(session, joinKey, leave, true);
    this.host.joined();
    return { accepted: true, token: params.token as string, keepAlive };
  }

  async cancel(key: string, principal: string | undefined): Promise<void> {
    const stored = await this.remote.shared.get(key);
    if (
      stored === undefined ||
      stored.kind !== "async" ||
      stored.principal !== principal ||
      stored.status !== "processing" ||
      stored.lost === true
    )
      return;
    this.remote.tell(stored.node, key, { type: "cancel", reason: "Cancelled by the client" });
  }
}
