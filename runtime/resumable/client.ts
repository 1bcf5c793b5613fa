// Client side of SEP-975: remember each policy, keep those requests pending across a disconnect, reconnect, resume, deduplicate.
import type { JsonObject, JsonRpcMessage, RequestId } from "../jsonrpc.js";
import { isPlainObject as isObject } from "../jsonrpc.js";
import type { Transport } from "../transport.js";
import type { RequestOptions } from "../peer.js";
import { ConnectionClosedError } from "../errors.js";
import type { InboundOperation, OperationKeeper, OperationOutlet, OperationRegistry, OutboundOperation } from "../operations.js";
import {
  GET_STATUS_REQUEST,
  LAST_SEQ_META_KEY,
  RESUME_ATTEMPT_META_KEY,
  RESUME_REQUEST,
  ResumeFailedError,
  readSeqStamp,
} from "./protocol.js";

/** Error code and `data.reason` values the HTTP client transport uses for a request whose stream it lost. */
const CONNECTION_LOST_CODE = -32000;
const LOST_REASONS = new Set(["stream-lost", "session-expired"]);

export interface ResumableClientOptions {
  /** Seconds to keep trying when a policy gave no maxWait; default 60. */
  defaultMaxWait?: number;
  /** First delay between failed reconnect attempts, ms (doubles up to 2 s, or an eighth of the shortest waiting maxWait); default 50. */
  retryDelayMs?: number;
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
  /** When the connection carrying it was lost; undefined while it is live. */
  lostAt: number | undefined = undefined;
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


/** One per ClientSession that advertised resumableRequests or can reconnect. */
export class ClientResumer {
  readonly stats = { policies: 0, resumes: 0, duplicatesDropped: 0, reconnects: 0, gaveUp: 0 };
  /** Requests parked here (each is its operation's keeper; see Parked). */
  private parkedCount = 0;
  private readonly defaultMaxWait: number;
  private readonly retryDelayMs: number;
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
    this.retryDelayMs = options.retryDelayMs ?? 50;
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  /** Requests the server made resumable that have not finished, with whether they wait for a resume. */
  pending(): { requestId: RequestId; method: string; disconnected: boolean }[] {
    return this.parked().map((p) => ({ requestId: p.op.id, method: p.op.method, disconnected: p.lostAt !== undefined }));
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
    if (parked === undefined) return Promise.reject(new Error(`No resumable request with id ${JSON.stringify(requestId)}`));
    return this.host.request(GET_STATUS_REQUEST, { requestId, resumeToken: parked.token }, options);
  }

  // ---- hooks called by the session ----

  /** notifications/requests/resumePolicy arrived. */
  policy(params: JsonObject | undefined): void {
    if (params === undefined) return;
    const id = params.requestId;
    const token = params.resumeToken;
    if ((typeof id !== "string" && typeof id !== "number") || typeof token !== "string") return;
    const op = this.host.operations.outbound.get(id);
    if (op === undefined || op.state !== "active" || op.keeper instanceof Parked) return;
    const seconds = (v: unknown, fallback: number) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : fallback);
    // As keeper it hears when the operation settles (released) and forgets it then.
    op.keeper = new Parked(this, op, token, seconds(params.minWait, 0), seconds(params.maxWait, this.defaultMaxWait));
    this.parkedCount++;
    this.stats.policies++;
  }

  /** Every inbound message: false drops it (a duplicate, or the transport's notice that a stream was lost). */
  accept(message: JsonObject): boolean {
    if (message.method === undefined) {
      const error = message.error;
      if (!isObject(error) || error.code !== CONNECTION_LOST_CODE || !isObject(error.data) || !LOST_REASONS.has(error.data.reason as string)) {
        return true;
      }
      const expired = error.data.reason === "session-expired";
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
      this.lost(parked, expired);
      return false;
    }
    if (this.parkedCount === 0) return true;
    const stamp = readSeqStamp(message);
    if (stamp === undefined) return true;
    const parked = this.parkedFor(stamp.requestId);
    if (parked === undefined) return true;
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
        if (message.jsonrpc === "2.0" && (message as { method?: unknown }).method === undefined) (parked.answers ??= new Map()).set(context.id, message);
        host.transmit(message, context.id).catch(() => undefined);
      },
      request: (method, p, options) => host.request(method, p, options),
      connectionClosed() {},
    };
    context.outlet = outlet;
  }

  /** @internal The connection closed under a resumable request. */
  connectionClosedUnder(parked: Parked, byApp: boolean): void {
    if (byApp || this.stopped) {
      this.drop(parked, new ConnectionClosedError());
      return;
    }
    parked.lostAt ??= Date.now();
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
      for (const parked of this.parked()) this.drop(parked, new ResumeFailedError(parked.op.id, "the connection closed and no reconnect is configured"));
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

  private lost(parked: Parked, reinitialize: boolean): void {
    parked.lostAt ??= Date.now();
    if (reinitialize) this.needReinit = true;
    this.startRecovery();
  }

  private startRecovery(): void {
    if (this.recovering !== undefined || this.stopped) return;
    this.recovering = this.recover().finally(() => {
      this.recovering = undefined;
      if (this.host.isOpen) this.settleWaiters(undefined);
      if (!this.stopped && (this.transportGone || this.needReinit || this.parked().some((p) => p.lostAt !== undefined))) {
        this.startRecovery();
      }
    });
  }

  private async recover(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const lost = this.parked().filter((p) => p.lostAt !== undefined);
      if (lost.length === 0 && !this.transportGone && !this.needReinit) return;
      // Wait out the longest minWait among them, counted from each disconnect.
      const now = Date.now();
      let wait = 0;
      for (const p of lost) wait = Math.max(wait, p.lostAt! + p.minWait * 1000 - now);
      if (wait > 0) await sleep(wait);
      if (this.stopped) return;
      const reconnecting = this.transportGone;
      const reinitializing = !reconnecting && this.needReinit;
      try {
        if (reconnecting) {
          const transport = await this.host.reconnectTransport!();
          this.transportGone = false;
          this.needReinit = false;
          await this.host.reattach(transport);
          this.stats.reconnects++;
        } else if (this.needReinit) {
          this.needReinit = false;
          await this.host.reinitialize();
        }
        if (this.transportGone) throw new ConnectionClosedError();
        failures = 0;
        for (const p of this.parked()) {
          if (p.lostAt === undefined) continue;
          p.lostAt = undefined;
          this.stats.resumes++;
          const params: JsonObject = { resumeToken: p.token, _meta: { [LAST_SEQ_META_KEY]: p.lastSeq, [RESUME_ATTEMPT_META_KEY]: ++p.attempts } };
          this.host.resendAs(p.op, RESUME_REQUEST, params).catch((error: unknown) => {
            if (p.op.keeper !== p) return;
            this.lost(p, sessionIsGone(error));
          });
        }
      } catch {
        failures++;
        if (reconnecting || !this.host.isOpen) this.transportGone = true;
        else if (reinitializing) this.needReinit = true;
        const now2 = Date.now();
        for (const p of this.parked()) {
          if (p.lostAt !== undefined && now2 - p.lostAt > p.maxWait * 1000) {
            this.stats.gaveUp++;
            this.drop(p, new ResumeFailedError(p.op.id, `no resume within maxWait (${p.maxWait} s)`));
          }
        }
        const waiting = this.parked().some((p) => p.lostAt !== undefined);
        if (!waiting && failures >= this.maxAttempts) {
          this.stopped = true;
          this.settleWaiters(new ConnectionClosedError("Could not reconnect"));
          this.host.closedForGood();
          return;
        }
        // Back off, but keep several attempts inside the shortest maxWait still running: a doubling delay alone
        // let a client that failed a few times in a row wake up after the server had given its request up.
        let cap = 2000;
        for (const p of this.parked()) if (p.lostAt !== undefined) cap = Math.min(cap, (p.maxWait * 1000) / 8);
        await sleep(Math.min(Math.max(cap, this.retryDelayMs), this.retryDelayMs * 2 ** (failures - 1)));
      }
    }
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
