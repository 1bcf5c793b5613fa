// Resumes and status checks this node serves for resumable requests another node runs (shared store).
import { ErrorCode, RpcError, type JsonObject, type JsonRpcErrorObject, type RequestId } from "../jsonrpc.js";
import type { RequestContext } from "../peer.js";
import { InboundOperation, OutboundOperation } from "../operations.js";
import { RequestCancelledError } from "../errors.js";
import type { Session } from "../session.js";
import type { ServerSession } from "../lifecycle.js";
import type { OwnerSignal, SharedOperationStore } from "../store/types.js";
import { RESUMABLE_FAILED_CODE, nodeLostError, unknownResumableError } from "./protocol.js";
import { CLAIMS_PER_ATTEMPT, DEFAULT_MAX_WAIT, replyOf } from "./request.js";
import type { ResumableRequests } from "./server.js";

/**
 * Follows a request's queue in the shared store for the client attached here, proxies its server-to-client
 * requests' answers to the running node, and signals that node (attach, touch, detach, delivered, cancel).
 */
export class RemoteResumes {
  /** The latest resume of each request on this node: a newer one supersedes it, as takeOver does for local ones. */
  readonly byKey = new Map<string, () => void>();
  /** For those resumes: the session they serve, and how to pass the client's confirmations on to the running node. */
  readonly acks = new Map<string, { session: Session; requestId: RequestId; tell: (signal: OwnerSignal) => void }>();

  constructor(
    private readonly manager: ResumableRequests,
    private readonly shared: SharedOperationStore,
    private readonly report: (error: unknown) => void,
    /** Registers a follow with the engine, which ends it on close(); returns the function that unregisters it. */
    private readonly following: (end: () => void) => () => void,
  ) {}

  private async record(key: string, requestId: unknown, principal: string | undefined) {
    const stored = await this.shared.get(key);
    if (
      stored === undefined ||
      stored.kind !== "resumable" ||
      stored.requestId !== requestId ||
      stored.principal !== principal
    ) {
      throw unknownResumableError();
    }
    return stored;
  }

  async getStatus(key: string, requestId: unknown, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, requestId, context.principal ?? undefined);
    this.manager.stats.statusChecks++;
    this.manager.stats.remoteStatusChecks++;
    // Resets the running node's maxWait clock, as a status check there would.
    if (stored.node !== undefined && !stored.lost)
      void Promise.resolve(this.shared.signal(stored.node, key, { type: "touch" })).catch((e: unknown) =>
        this.report(e),
      );
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
  async resume(
    session: ServerSession,
    key: string,
    ack: number,
    attempt: number,
    context: RequestContext,
  ): Promise<JsonObject> {
    const shared = this.shared;
    // The claim goes out with the read, on arrival: resumes are ordered by when they reached a node, not by how
    // long each took to look the request up.
    const claimed = Promise.resolve(shared.claim(key));
    claimed.catch(() => undefined);
    const stored = await this.record(key, context.requestId, context.principal ?? undefined);
    if (stored.lost === true) throw nodeLostError();
    const claim = await claimed;
    if (claim === 0) throw unknownResumableError();
    const epoch = attempt * CLAIMS_PER_ATTEMPT + claim;
    this.manager.stats.resumed++;
    this.manager.stats.remoteResumes++;
    const requestId = stored.requestId;
    const owner = stored.node;
    const tell = (signal: OwnerSignal) => {
      if (owner !== undefined)
        void Promise.resolve(shared.signal(owner, key, { ...signal, epoch })).catch((e: unknown) => this.report(e));
    };
    await shared.confirm(key, ack);
    const resumeOp = context as unknown as InboundOperation;
    // Its connection went while the store answered (the client may already be resuming elsewhere): no attach.
    if (resumeOp.signal.aborted) {
      if (resumeOp.signal.reason instanceof RequestCancelledError)
        tell({ type: "cancel", reason: String(resumeOp.signal.reason.message) });
      return {};
    }
    tell({ type: "attach", seq: ack });
    replyOf(context)?.takeOver?.();
    const proxies = new Map<RequestId, OutboundOperation>();
    return new Promise<JsonObject>((resolve, reject) => {
      let ended = false;
      let unregister: () => void = () => undefined;
      const touchEvery = Math.max(250, ((stored.keepFor ?? DEFAULT_MAX_WAIT) * 1000) / 3);
      const touch = setInterval(() => tell({ type: "touch" }), touchEvery);
      touch.unref?.();
      const end = (after: () => void) => {
        if (ended) return;
        ended = true;
        clearInterval(touch);
        following.close();
        unregister();
        if (this.byKey.get(key) === supersede) {
          this.byKey.delete(key);
          this.acks.delete(key);
        }
        resumeOp.signal.removeEventListener("abort", onAbort);
        for (const [id, op] of proxies)
          if (session.operations.outbound.get(id) === op) session.operations.outbound.delete(id);
        after();
      };
      const stop = () => end(() => reject(new RpcError(RESUMABLE_FAILED_CODE, "Server shutting down")));
      // Superseded by a newer resume on this node: this one gets no answer (the newer one carries the request).
      const supersede = () =>
        end(() => {
          resumeOp.state = "cancelled";
          resolve({});
        });
      this.byKey.get(key)?.();
      this.byKey.set(key, supersede);
      this.acks.set(key, { session, requestId, tell });
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
          if (m.id !== undefined)
            proxies.set(m.id as RequestId, this.answerProxy(session, m.id as RequestId, String(m.method), tell));
          this.manager.stats.replayed++;
          session.transmit(message, requestId).catch(() => undefined);
        },
        lost: (reason) =>
          end(() => reject(new RpcError(RESUMABLE_FAILED_CODE, `Resumable request failed: ${reason}`, { requestId }))),
      });
      unregister = this.following(stop);
      resumeOp.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Stands in, on this node, for a server-to-client request another node made: the answer goes to that node. */
  private answerProxy(
    session: ServerSession,
    id: RequestId,
    method: string,
    tell: (signal: OwnerSignal) => void,
  ): OutboundOperation {
    const op = new OutboundOperation(id, method);
    op.keeper = this.manager.inputKeeper;
    op.resolve = (result) => tell({ type: "answer", id, message: { jsonrpc: "2.0", id, result } });
    op.reject = (error) => {
      const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, error.message);
      tell({ type: "answer", id, message: { jsonrpc: "2.0", id, error: rpc.toJSON() } });
    };
    session.operations.outbound.set(id, op);
    return op;
  }
}
