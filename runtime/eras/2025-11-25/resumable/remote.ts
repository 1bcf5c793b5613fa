// Resumes and status checks this node serves for resumable requests another node runs (shared store).
import { RpcError, type JsonObject, type RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import type { OutboundOperation } from "../../../rpc/operations.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import type { HandlerContext } from "../../../rpc/handler-context.js";
import type { Session } from "../../../rpc/session/session.js";
import type { ServerSession } from "../../../mcp/lifecycle.js";
import { outcome } from "../../../durable/messages.js";
import { attemptRank, type RemoteOperations } from "../../../durable/remote.js";
import type { OwnerSignal } from "../../../store/types.js";
import { RESUMABLE_FAILED_CODE, nodeLostError, unknownResumableError } from "./protocol.js";
import { DEFAULT_MAX_WAIT, type ResumableRequest } from "./request.js";

/** The counters of the manager this serves (see ResumableRequests.stats). */
interface Stats {
  resumed: number;
  replayed: number;
  statusChecks: number;
  remoteResumes: number;
  remoteStatusChecks: number;
}

/** The latest resume on this node of a request another node runs. */
interface RemoteResume {
  session: Session;
  requestId: RequestId;
  /** Signals the running node, with this resume's rank. */
  tell(signal: OwnerSignal): void;
  /** A newer resume on this node took over: this one ends with no answer. */
  supersede(): void;
}

/**
 * Follows a request's queue in the shared store for the client attached here, proxies its server-to-client
 * requests' answers to the running node, and signals that node (attach, touch, detach, delivered, cancel).
 */
export class RemoteResumes {
  /** The latest resume of each request on this node: a newer one supersedes it, as takeOver does for local ones. */
  private readonly byKey = new Map<string, RemoteResume>();

  constructor(
    private readonly stats: Stats,
    private readonly others: RemoteOperations<ResumableRequest>,
  ) {}

  private record(key: string, requestId: unknown, principal: string | undefined) {
    return this.others.record(
      key,
      "resumable",
      principal,
      unknownResumableError,
      (stored) => stored.requestId === requestId,
    );
  }

  async getStatus(key: string, requestId: unknown, context: RequestContext): Promise<JsonObject> {
    const stored = await this.record(key, requestId, context.principal ?? undefined);
    this.stats.statusChecks++;
    this.stats.remoteStatusChecks++;
    // Resets the running node's maxWait clock, as a status check there would.
    if (!stored.lost) this.others.tell(stored.node, key, { type: "touch" });
    return {
      requestId: stored.requestId,
      status: stored.status,
      hasPendingMessage: (stored.queued ?? 0) > 0,
      hasInputRequest: stored.pendingInput > 0,
    };
  }

  /** notifications/requests/received for a request resumed here: passed on to the running node. */
  received(session: Session, key: string, requestId: unknown, seq: number): void {
    const resume = this.byKey.get(key);
    if (resume !== undefined && resume.session === session && resume.requestId === requestId)
      resume.tell({ type: "confirm", seq });
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
    resumeOp: HandlerContext,
  ): Promise<JsonObject> {
    const others = this.others;
    // The claim goes out with the read, on arrival: resumes are ordered by when they reached a node, not by how
    // long each took to look the request up.
    const claimed = others.claim(key);
    claimed.catch(() => undefined);
    const stored = await this.record(key, resumeOp.requestId, resumeOp.principal ?? undefined);
    if (stored.lost === true) throw nodeLostError();
    const claim = await claimed;
    if (claim === 0) throw unknownResumableError();
    const epoch = attemptRank(attempt, claim);
    this.stats.resumed++;
    this.stats.remoteResumes++;
    const requestId = stored.requestId;
    const tell = (signal: OwnerSignal) => others.tell(stored.node, key, { ...signal, epoch });
    await others.shared.confirm(key, ack);
    // Its connection went while the store answered (the client may already be resuming elsewhere): no attach.
    if (resumeOp.signal.aborted) {
      if (resumeOp.signal.reason instanceof RequestCancelledError)
        tell({ type: "cancel", reason: String(resumeOp.signal.reason.message) });
      return {};
    }
    tell({ type: "attach", seq: ack });
    resumeOp.reply?.takeOver?.();
    const proxies = new Map<RequestId, OutboundOperation>();
    return new Promise<JsonObject>((resolve, reject) => {
      const touchEvery = Math.max(250, ((stored.keepFor ?? DEFAULT_MAX_WAIT) * 1000) / 3);
      const touch = setInterval(() => tell({ type: "touch" }), touchEvery);
      touch.unref?.();
      let current: RemoteResume | undefined = undefined;
      let onAbort: () => void = () => undefined;
      const follow = others.follow(key, ack, {
        message: ({ message }) => {
          if ("id" in message && "method" in message)
            proxies.set(message.id, others.proxy(session, message.id, message.method, tell));
          this.stats.replayed++;
          session.transmit(message, requestId).catch(() => undefined);
        },
        final: (response) => {
          tell({ type: "delivered" });
          try {
            resolve(outcome(response));
          } catch (error) {
            reject(error);
          }
        },
        lost: (reason) =>
          reject(new RpcError(RESUMABLE_FAILED_CODE, `Resumable request failed: ${reason}`, { requestId })),
        closed: () => reject(new RpcError(RESUMABLE_FAILED_CODE, "Server shutting down")),
        ended: () => {
          clearInterval(touch);
          if (this.byKey.get(key) === current) this.byKey.delete(key);
          resumeOp.signal.removeEventListener("abort", onAbort);
          for (const [id, op] of proxies)
            if (session.operations.outbound.get(id) === op) session.operations.outbound.delete(id);
        },
      });
      // Superseded by a newer resume on this node: this one gets no answer (the newer one carries the request).
      current = {
        session,
        requestId,
        tell,
        supersede: () =>
          follow.end(() => {
            resumeOp.state = "cancelled";
            resolve({});
          }),
      };
      this.byKey.get(key)?.supersede();
      this.byKey.set(key, current);
      onAbort = () =>
        follow.end(() => {
          const reason = resumeOp.signal.reason;
          if (reason instanceof RequestCancelledError) tell({ type: "cancel", reason: String(reason.message) });
          else tell({ type: "detach" });
          resolve({});
        });
      resumeOp.signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
