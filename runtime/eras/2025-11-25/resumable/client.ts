// Client side of SEP-975 as a client session extension: remember each policy, keep those requests pending across a
// disconnect, resume them once the session reconnected, deduplicate what arrives twice.
import type { JsonObject, JsonRpcMessage, RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestOptions } from "../../../rpc/peer.js";
import type { Session, SessionExtension } from "../../../rpc/session/session.js";
import { ConnectionClosedError } from "../../../rpc/errors.js";
import type { InboundOperation, OperationKeeper, OperationOutlet, OutboundOperation } from "../../../rpc/operations.js";
import type { ClientExtension, ClientSessionHost } from "../../../mcp/client-extension.js";
import {
  lostStream,
  type LostWork,
  type ReconnectOptions,
  type RecoveryParticipant,
} from "../../../mcp/client-recovery.js";
import {
  GET_STATUS_REQUEST,
  LAST_SEQ_META_KEY,
  RECEIVED_NOTIFICATION,
  RESUMABLE_CAPABILITY,
  RESUME_ATTEMPT_META_KEY,
  RESUME_POLICY_NOTIFICATION,
  RESUME_REQUEST,
  ResumeFailedError,
  readSeqStamp,
} from "./protocol.js";

export interface ResumableClientOptions extends ReconnectOptions {
  /** Seconds to keep trying when a policy gave no maxWait; default 60. */
  defaultMaxWait?: number;
}

const resumers = new WeakMap<Session, ClientResumer>();

/**
 * SEP-975 resumable requests for a ClientSession: `extensions: [resumableClient()]` advertises `resumableRequests`
 * and resumes the requests the server made resumable after a disconnect (with the session's `reconnect`, on a new
 * connection; without it, only while the transport itself lives on). The retry settings also apply to reconnection.
 */
export function resumableClient(options: ResumableClientOptions = {}): ClientExtension {
  return {
    capabilities: { [RESUMABLE_CAPABILITY]: {} },
    reconnect: options,
    install(host) {
      const resumer = new ClientResumer(host, options);
      resumers.set(host.session, resumer);
      host.recovery.join(resumer);
      return resumer.extension();
    },
  };
}

/** The resumer `resumableClient()` installed on a session, if any (its stats, its pending requests). */
export function resumerOf(session: Session): ClientResumer | undefined {
  return resumers.get(session);
}

/**
 * A request the server made resumable. It is its operation's keeper, so it is found through the session's own
 * registry of requests in flight (no second table to fill and empty per request).
 */
class Parked implements OperationKeeper {
  /** Highest sequence number received: everything up to it reached the app exactly once. */
  lastSeq = 0;
  /**
   * When the connection carrying it was lost; undefined while it is live. Failed attempts leave it as it is: the
   * server's maxWait runs from the disconnect, and so does the deadline here.
   */
  lostAt: number | undefined = undefined;
  /** No resume before this time (the policy's minWait, or the server's retry hint, from the disconnect). */
  notBefore = 0;
  /** Rejects the request maxWait after the disconnect unless a resume was accepted by then. */
  deadline: ReturnType<typeof setTimeout> | undefined = undefined;
  /** A resume is on its way; `lostAgainAt`: its own connection was lost meanwhile. */
  resuming = false;
  lostAgainAt: number | undefined = undefined;
  /** Resumes sent so far; each carries its number, so the server can tell a stale one from the latest. */
  attempts = 0;
  /** Answers we gave to the server's requests made on its behalf, for when the server asks again; made on first use. */
  answers: Map<RequestId, JsonRpcMessage | undefined> | undefined = undefined;

  constructor(
    readonly resumer: ClientResumer,
    readonly op: OutboundOperation,
    readonly token: string,
    readonly minWait: number,
    readonly maxWait: number,
  ) {}

  connectionClosed(_op: OutboundOperation, byApp: boolean): void {
    this.resumer.connectionClosedUnder(this, byApp);
  }

  released(): void {
    this.resumer.forget(this);
  }
}

function clearDeadline(parked: Parked): void {
  if (parked.deadline === undefined) return;
  clearTimeout(parked.deadline);
  parked.deadline = undefined;
}

/** One per ClientSession with `resumableClient()`: the requests it keeps, as a participant in the session's recovery. */
export class ClientResumer implements RecoveryParticipant {
  readonly stats = { policies: 0, resumes: 0, duplicatesDropped: 0, gaveUp: 0 };
  /** Requests parked here (each is its operation's keeper; see Parked). */
  private parkedCount = 0;
  private readonly defaultMaxWait: number;

  constructor(
    private readonly host: ClientSessionHost,
    options: ResumableClientOptions = {},
  ) {
    this.defaultMaxWait = options.defaultMaxWait ?? 60;
  }

  /** Requests the server made resumable that have not finished, with whether they wait for a resume. */
  pending(): { requestId: RequestId; method: string; disconnected: boolean }[] {
    return this.parked().map((p) => ({
      requestId: p.op.id,
      method: p.op.method,
      disconnected: p.lostAt !== undefined,
    }));
  }

  /** Resolves when the session is connected (at once, or after the reconnection under way). */
  whenConnected(): Promise<void> {
    return this.host.recovery.whenConnected();
  }

  /** requests/getStatus for a request of ours that the server made resumable. */
  getStatus(requestId: RequestId, options?: RequestOptions): Promise<JsonObject> {
    const parked = this.parkedFor(requestId);
    if (parked === undefined)
      return Promise.reject(new Error(`No resumable request with id ${JSON.stringify(requestId)}`));
    return this.host.request(GET_STATUS_REQUEST, { requestId, resumeToken: parked.token }, options);
  }

  // ---- hooks called by the session ----

  /** The session extension through which the session calls this resumer. */
  extension(): SessionExtension {
    return {
      accept: (message) => this.accept(message),
      notification: (method, params) => {
        if (method === RESUME_POLICY_NOTIFICATION) this.policy(params);
      },
      requestStarted: (operation, params) => this.requestStarted(operation, params),
    };
  }

  /** notifications/requests/resumePolicy arrived. */
  policy(params: JsonObject | undefined): void {
    if (params === undefined) return;
    const id = params.requestId;
    const token = params.resumeToken;
    if ((typeof id !== "string" && typeof id !== "number") || typeof token !== "string") return;
    const op = this.host.operations.outbound.get(id);
    if (op === undefined || op.state !== "active" || op.keeper instanceof Parked) return;
    const seconds = (v: unknown, fallback: number) =>
      typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : fallback;
    // As keeper it hears when the operation settles (released) and forgets it then.
    op.keeper = new Parked(this, op, token, seconds(params.minWait, 0), seconds(params.maxWait, this.defaultMaxWait));
    this.parkedCount++;
    this.stats.policies++;
    // Recovered here with requests/resume, which the deadline above bounds, rather than by the transport's own retries.
    this.host.skipStreamResume(id);
  }

  /** Every inbound message: false drops it (a duplicate, or the transport's notice that a stream was lost). */
  accept(message: JsonObject): boolean {
    if (message.method === undefined) {
      const lost = lostStream(message);
      if (lost === undefined) return true;
      const id = message.id;
      const parked = typeof id === "string" || typeof id === "number" ? this.parkedFor(id) : undefined;
      // Not resumable: the session's recovery hears of it next.
      if (parked === undefined) return true;
      this.streamLost(parked, lost.expired, lost.retryMs);
      return false;
    }
    if (this.parkedCount === 0) return true;
    const stamp = readSeqStamp(message);
    if (stamp === undefined) return true;
    const parked = this.parkedFor(stamp.requestId);
    if (parked === undefined) return true;
    if (stamp.ack === true) this.confirmReceived(parked, Math.max(parked.lastSeq, stamp.seq));
    if (stamp.seq > parked.lastSeq) {
      parked.lastSeq = stamp.seq;
      if (message.id !== undefined) (parked.answers ??= new Map()).set(message.id as RequestId, undefined);
      return true;
    }
    // Seen before. A request asked again means the server may have missed our answer: give it again.
    if (message.id !== undefined) {
      const answer = parked.answers?.get(message.id as RequestId);
      if (answer !== undefined) this.host.transmit(answer).catch(() => undefined);
    }
    this.stats.duplicatesDropped++;
    return false;
  }

  /** A server-to-client request was accepted: when it belongs to a resumable request, its answer is kept. */
  requestStarted(context: InboundOperation, params: JsonObject | undefined): void {
    if (this.parkedCount === 0 || params === undefined) return;
    const stamp = readSeqStamp({ params });
    const parked = stamp === undefined ? undefined : this.parkedFor(stamp.requestId);
    if (parked === undefined) return;
    const host = this.host;
    const outlet: OperationOutlet = {
      send(message) {
        if (message.jsonrpc === "2.0" && (message as { method?: unknown }).method === undefined)
          (parked.answers ??= new Map()).set(context.id, message);
        host.transmit(message, context.id).catch(() => undefined);
      },
      request: (method, p, options) => host.request(method, p, options),
      connectionClosed() {},
    };
    context.outlet = outlet;
  }

  /**
   * The server asked (a stamp with `ack`) for a confirmation of what arrived: it then drops those messages from the
   * request's queue, which otherwise fills up on a connection where nothing else confirms them (HTTP).
   */
  private confirmReceived(parked: Parked, lastSeq: number): void {
    const params: JsonObject = { requestId: parked.op.id, resumeToken: parked.token, lastSeq };
    this.host.transmit({ jsonrpc: "2.0", method: RECEIVED_NOTIFICATION, params }).catch(() => undefined);
  }

  /** @internal The connection closed under a resumable request. */
  connectionClosedUnder(parked: Parked, byApp: boolean): void {
    if (byApp || this.host.recovery.isStopped) {
      this.drop(parked, new ConnectionClosedError());
      return;
    }
    this.markLost(parked, 0);
  }

  // ---- as a participant in the session's recovery ----

  /** The connection closed and no reconnect is configured: kept requests fail. */
  unrecoverable(): void {
    for (const parked of this.parked())
      this.drop(parked, new ResumeFailedError(parked.op.id, "the connection closed and no reconnect is configured"));
  }

  /** The app closes the session: nothing more is resumed, waiting requests fail. */
  stop(): void {
    for (const parked of this.parked()) this.drop(parked, new ConnectionClosedError());
  }

  get isRecovering(): boolean {
    return this.host.recovery.isRecovering;
  }

  waiting(): boolean {
    return this.parked().some((p) => p.lostAt !== undefined);
  }

  lost(): LostWork | undefined {
    const lost = this.parked().filter((p) => p.lostAt !== undefined && !p.resuming);
    if (lost.length === 0) return undefined;
    // Not before each request's minWait (or the server's retry hint), counted from its disconnect.
    let wait = 0;
    const now = Date.now();
    for (const p of lost) wait = Math.max(wait, p.notBefore - now);
    return {
      wait,
      resume: async () => {
        const results = await Promise.all(lost.map((p) => this.resume(p)));
        return results.find((r) => r !== undefined);
      },
    };
  }

  /** Several attempts fit in the shortest maxWait still running, and none waits past the nearest deadline. */
  retryBounds(now: number): { cap: number; nearest: number } {
    let cap = Infinity;
    let nearest = Infinity;
    for (const p of this.parked()) {
      if (p.lostAt === undefined) continue;
      cap = Math.min(cap, (p.maxWait * 1000) / 8);
      nearest = Math.min(nearest, p.lostAt + p.maxWait * 1000 - now);
    }
    return { cap, nearest };
  }

  // ---- recovery ----

  private streamLost(parked: Parked, reinitialize: boolean, retryMs = 0): void {
    this.markLost(parked, retryMs);
    this.host.recovery.lostWork(reinitialize);
  }

  /** A disconnect under the request: its maxWait starts now (unless it already runs from an earlier one). */
  private markLost(parked: Parked, retryMs: number, at = Date.now()): void {
    // Lost while a resume is on its way: the resume may still be accepted, and this loss then comes after it.
    if (parked.resuming) parked.lostAgainAt ??= at;
    if (parked.lostAt !== undefined) return;
    parked.lostAt = at;
    parked.notBefore = at + Math.max(parked.minWait * 1000, retryMs);
    parked.deadline = setTimeout(() => this.giveUp(parked), Math.max(0, at + parked.maxWait * 1000 - Date.now()));
  }

  /** A resume was accepted: the server carries the request again. */
  private markLive(parked: Parked): void {
    parked.lostAt = undefined;
    clearDeadline(parked);
  }

  /** maxWait passed since the disconnect without an accepted resume: the server may have given the request up. */
  private giveUp(parked: Parked): void {
    parked.deadline = undefined;
    if (parked.op.keeper !== parked || parked.lostAt === undefined) return;
    this.stats.gaveUp++;
    this.drop(parked, new ResumeFailedError(parked.op.id, `no resume within maxWait (${parked.maxWait} s)`));
  }

  /** Sends requests/resume; resolves with the failure, if the send failed (a failed resume is retried by the loop). */
  private async resume(p: Parked): Promise<{ error: unknown } | undefined> {
    if (p.op.keeper !== p || p.lostAt === undefined) return undefined;
    p.resuming = true;
    p.lostAgainAt = undefined;
    this.stats.resumes++;
    this.host.skipStreamResume(p.op.id);
    const params: JsonObject = {
      resumeToken: p.token,
      _meta: { [LAST_SEQ_META_KEY]: p.lastSeq, [RESUME_ATTEMPT_META_KEY]: ++p.attempts },
    };
    try {
      await this.host.resendAs(p.op, RESUME_REQUEST, params);
    } catch (error) {
      return { error };
    } finally {
      p.resuming = false;
    }
    if (p.op.keeper !== p) return undefined;
    // Accepted: the server carries the request again (and restarted its maxWait). Lost again on the way: from then.
    const again = p.lostAgainAt;
    this.markLive(p);
    if (again !== undefined) {
      this.markLost(p, 0, again);
      this.host.recovery.start();
    }
    return undefined;
  }

  /** The requests parked here, found through the session's registry of requests in flight. */
  private parked(): Parked[] {
    if (this.parkedCount === 0) return [];
    const out: Parked[] = [];
    for (const op of this.host.operations.outbound.values()) {
      const keeper = op.keeper;
      if (keeper instanceof Parked && keeper.resumer === this) out.push(keeper);
    }
    return out;
  }

  private parkedFor(id: RequestId): Parked | undefined {
    const keeper = this.host.operations.outbound.get(id)?.keeper;
    return keeper instanceof Parked && keeper.resumer === this ? keeper : undefined;
  }

  /** @internal The request settled (or is dropped): it is no longer parked. */
  forget(parked: Parked): void {
    if (parked.op.keeper !== parked) return;
    parked.op.keeper = undefined;
    this.parkedCount--;
    clearDeadline(parked);
  }

  /** Fail a kept request for good. */
  private drop(parked: Parked, error: Error): void {
    const op = parked.op;
    this.forget(parked);
    if (op.state !== "active") return;
    op.state = "closed";
    this.host.operations.releaseOutbound(op);
    op.reject(error);
  }
}
