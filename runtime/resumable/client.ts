// Client side of SEP-975: remember each policy, keep those requests pending across a disconnect, reconnect, resume, deduplicate.
import type { JsonObject, JsonRpcMessage, RequestId } from "../jsonrpc.js";
import { ErrorCode, RpcError, isPlainObject as isObject } from "../jsonrpc.js";
import type { Transport } from "../transport.js";
import type { RequestOptions } from "../peer.js";
import type { SessionExtension } from "../session.js";
import { ConnectionClosedError } from "../errors.js";
import type {
  InboundOperation,
  OperationKeeper,
  OperationOutlet,
  OperationRegistry,
  OutboundOperation,
} from "../operations.js";
import {
  GET_STATUS_REQUEST,
  LAST_SEQ_META_KEY,
  RECEIVED_NOTIFICATION,
  RESUME_ATTEMPT_META_KEY,
  RESUME_POLICY_NOTIFICATION,
  RESUME_REQUEST,
  ResumeFailedError,
  readSeqStamp,
} from "./protocol.js";

/** Error code and `data.reason` values the HTTP client transport uses for a request whose stream it lost. */
const CONNECTION_LOST_CODE = ErrorCode.ConnectionLost;
const LOST_REASONS = new Set(["stream-lost", "session-expired"]);

export interface ResumableClientOptions {
  /** Seconds to keep trying when a policy gave no maxWait; default 60. */
  defaultMaxWait?: number;
  /**
   * First delay between failed attempts to reconnect or resume, ms; default 50. It doubles per failure in a row up to
   * maxRetryDelayMs (or an eighth of the shortest maxWait still running, so several attempts fit in it), and each
   * delay is jittered down to between half and all of it.
   */
  retryDelayMs?: number;
  /** Longest delay between two attempts, ms; default 2000. */
  maxRetryDelayMs?: number;
  /** Reconnect attempts in a row when no resumable request is waiting (plain auto-reconnect); default 5. */
  maxAttempts?: number;
}

/** What the resumer needs from the client session it serves (ClientSession implements it). */
export interface ResumerHost {
  readonly operations: OperationRegistry;
  readonly isOpen: boolean;
  /** Present when the app can make a new connection. */
  readonly reconnectTransport: (() => Promise<Transport>) | undefined;
  /** Continue on a new transport: connect and run the initialize handshake again. */
  reattach(transport: Transport): Promise<void>;
  /** Run the initialize handshake again on the current transport (its server session is gone). */
  reinitialize(): Promise<void>;
  /** Give up the current transport as lost (not closed by the app): the next attempt makes a new one. */
  dropTransport(): void;
  /** Tell the transport that a lost reply stream of this request is recovered here (Transport.skipStreamResume). */
  skipStreamResume(requestId: RequestId): void;
  resendAs(op: OutboundOperation, method: string, params: JsonObject | undefined): Promise<void>;
  transmit(message: JsonRpcMessage, relatedRequestId?: RequestId): Promise<void>;
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject>;
  /** Recovery gave up: the session is closed for good (fires onclose). */
  closedForGood(): void;
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A send failed because the server no longer knows the session (HTTP 404, or 400 for a session-less request). */
function sessionIsGone(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "SessionExpiredError") return true;
  const status = (error as { status?: unknown }).status;
  return error.name === "HttpStatusError" && (status === 400 || status === 404);
}

function clearDeadline(parked: Parked): void {
  if (parked.deadline === undefined) return;
  clearTimeout(parked.deadline);
  parked.deadline = undefined;
}

/** A send failed without any answer from the server (refused, reset, unreachable): the connection is no good. */
function unreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  return error.name !== "HttpStatusError" && error.name !== "SessionExpiredError" && !(error instanceof RpcError);
}

/** One per ClientSession that advertised resumableRequests or can reconnect. */
export class ClientResumer {
  readonly stats = { policies: 0, resumes: 0, duplicatesDropped: 0, reconnects: 0, gaveUp: 0 };
  /** Requests parked here (each is its operation's keeper; see Parked). */
  private parkedCount = 0;
  private readonly defaultMaxWait: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxAttempts: number;
  private recovering: Promise<void> | undefined = undefined;
  private transportGone = false;
  private needReinit = false;
  private stopped = false;
  private connectedWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(
    private readonly host: ResumerHost,
    options: ResumableClientOptions = {},
  ) {
    this.defaultMaxWait = options.defaultMaxWait ?? 60;
    this.retryDelayMs = Math.max(1, options.retryDelayMs ?? 50);
    this.maxRetryDelayMs = Math.max(this.retryDelayMs, options.maxRetryDelayMs ?? 2000);
    this.maxAttempts = options.maxAttempts ?? 5;
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
    if (this.host.isOpen && this.recovering === undefined) return Promise.resolve();
    if (this.stopped) return Promise.reject(new ConnectionClosedError());
    return new Promise((resolve, reject) => this.connectedWaiters.push({ resolve, reject }));
  }

  /** requests/getStatus for a request of ours that the server made resumable. */
  getStatus(requestId: RequestId, options?: RequestOptions): Promise<JsonObject> {
    const parked = this.parkedFor(requestId);
    if (parked === undefined)
      return Promise.reject(new Error(`No resumable request with id ${JSON.stringify(requestId)}`));
    return this.host.request(GET_STATUS_REQUEST, { requestId, resumeToken: parked.token }, options);
  }

  // ---- hooks called by the session ----

  /** The session extension through which the session calls this resumer; `resumable`: it serves resumable requests. */
  extension(resumable: boolean): SessionExtension {
    const extension: SessionExtension = {
      accept: (message) => this.accept(message),
      notification: (method, params) => {
        if (method === RESUME_POLICY_NOTIFICATION) this.policy(params);
      },
      sessionExpired: () => this.sessionExpired(),
      closed: (byApp) => !byApp && this.transportLost(),
    };
    if (resumable) extension.requestStarted = (operation, params) => this.requestStarted(operation, params);
    return extension;
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
      const error = message.error;
      if (
        !isObject(error) ||
        error.code !== CONNECTION_LOST_CODE ||
        !isObject(error.data) ||
        !LOST_REASONS.has(error.data.reason as string)
      ) {
        return true;
      }
      const expired = error.data.reason === "session-expired";
      const retryMs = typeof error.data.retryMs === "number" && error.data.retryMs >= 0 ? error.data.retryMs : 0;
      const id = message.id;
      const parked = typeof id === "string" || typeof id === "number" ? this.parkedFor(id) : undefined;
      if (parked === undefined) {
        // Not resumable: the request fails as it would anyway, but the session behind it must be opened again.
        if (expired && this.host.reconnectTransport !== undefined && !this.stopped) {
          this.needReinit = true;
          this.startRecovery();
        }
        return true;
      }
      this.lost(parked, expired, retryMs);
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
    if (byApp || this.stopped) {
      this.drop(parked, new ConnectionClosedError());
      return;
    }
    this.markLost(parked, 0);
  }

  /**
   * The server forgot the session while the transport lives on (HTTP 404): run initialize again before anything
   * else goes out. Requests in flight hear it through their own lost responses; this covers the case where
   * none was (found by a GET stream or a notification), which otherwise left every later request refused for
   * want of a session id.
   */
  sessionExpired(): void {
    if (this.stopped || this.host.reconnectTransport === undefined) return;
    this.needReinit = true;
    this.startRecovery();
  }

  /** The transport closed by itself; true when recovery takes over (the session stays usable). */
  transportLost(): boolean {
    if (this.stopped) return false;
    if (this.host.reconnectTransport === undefined) {
      for (const parked of this.parked())
        this.drop(parked, new ResumeFailedError(parked.op.id, "the connection closed and no reconnect is configured"));
      return false;
    }
    this.transportGone = true;
    this.startRecovery();
    return true;
  }

  /** The app closes the session: nothing more is resumed, waiting requests fail. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const parked of this.parked()) this.drop(parked, new ConnectionClosedError());
    this.settleWaiters(new ConnectionClosedError());
  }

  get isRecovering(): boolean {
    return this.recovering !== undefined;
  }

  // ---- recovery ----

  private lost(parked: Parked, reinitialize: boolean, retryMs = 0): void {
    this.markLost(parked, retryMs);
    if (reinitialize) this.needReinit = true;
    this.startRecovery();
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

  private startRecovery(): void {
    if (this.recovering !== undefined || this.stopped) return;
    this.recovering = this.recover().finally(() => {
      this.recovering = undefined;
      if (this.host.isOpen) this.settleWaiters(undefined);
      if (
        !this.stopped &&
        (this.transportGone || this.needReinit || this.parked().some((p) => p.lostAt !== undefined))
      ) {
        this.startRecovery();
      }
    });
  }

  private async recover(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const lost = this.parked().filter((p) => p.lostAt !== undefined && !p.resuming);
      if (lost.length === 0 && !this.transportGone && !this.needReinit) return;
      // Not before each request's minWait (or the server's retry hint), counted from its disconnect.
      let wait = 0;
      const now = Date.now();
      for (const p of lost) wait = Math.max(wait, p.notBefore - now);
      if (wait > 0) {
        await sleep(wait);
        continue; // what is lost may have changed meanwhile (given up, resumed)
      }
      const reconnecting = this.transportGone;
      const reinitializing = !reconnecting && this.needReinit;
      try {
        if (reconnecting) {
          const transport = await this.host.reconnectTransport!();
          this.transportGone = false;
          this.needReinit = false;
          await this.host.reattach(transport);
          this.stats.reconnects++;
        } else if (reinitializing) {
          this.needReinit = false;
          await this.host.reinitialize();
        }
        if (this.transportGone) throw new ConnectionClosedError();
        const results = await Promise.all(lost.map((p) => this.resume(p)));
        const failed = results.find((r) => r !== undefined);
        if (failed !== undefined) throw failed.error;
        failures = 0;
      } catch (error) {
        failures++;
        if (reconnecting || !this.host.isOpen) this.transportGone = true;
        else if (reinitializing || sessionIsGone(error)) this.needReinit = true;
        else if (unreachable(error) && this.host.reconnectTransport !== undefined) {
          // Nothing answers on this connection: the app's reconnect hook makes the next one (perhaps elsewhere).
          this.transportGone = true;
          this.host.dropTransport();
        }
        const waiting = this.parked().some((p) => p.lostAt !== undefined);
        if (!waiting && failures >= this.maxAttempts) {
          this.stopped = true;
          this.settleWaiters(new ConnectionClosedError("Could not reconnect"));
          this.host.closedForGood();
          return;
        }
        await sleep(this.retryDelay(failures));
      }
    }
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
      this.startRecovery();
    }
    return undefined;
  }

  /**
   * Exponential backoff with jitter: several attempts fit in the shortest maxWait still running (a doubling delay
   * alone let a client wake up after the server had given its request up), and none waits past the nearest deadline.
   */
  private retryDelay(failures: number): number {
    let cap = this.maxRetryDelayMs;
    let nearest = Infinity;
    const now = Date.now();
    for (const p of this.parked()) {
      if (p.lostAt === undefined) continue;
      cap = Math.min(cap, (p.maxWait * 1000) / 8);
      nearest = Math.min(nearest, p.lostAt + p.maxWait * 1000 - now);
    }
    const base = Math.min(Math.max(cap, this.retryDelayMs), this.retryDelayMs * 2 ** Math.min(failures - 1, 30));
    const jittered = base * (0.5 + Math.random() * 0.5);
    return Math.max(this.retryDelayMs / 2, Math.min(jittered, nearest));
  }

  private settleWaiters(error: Error | undefined): void {
    const waiters = this.connectedWaiters;
    if (waiters.length === 0) return;
    this.connectedWaiters = [];
    for (const w of waiters) {
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
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
