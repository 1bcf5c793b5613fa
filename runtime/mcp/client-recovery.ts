// Keeping a client session going after its transport closed by itself: reconnect with backoff, initialize again,
// then let the features that kept work across the break (resumable requests) resume it.
import { RpcError, isPlainObject as isObject, ErrorCode, type JsonObject } from "../rpc/jsonrpc.js";
import type { Transport } from "../rpc/transport.js";
import { ConnectionClosedError } from "../rpc/errors.js";
import type { SessionExtension } from "../rpc/session/extension.js";

/** Delays and attempts of reconnection. */
export interface ReconnectOptions {
  /**
   * First delay between failed attempts to reconnect or resume, ms; default 50. It doubles per failure in a row up to
   * maxRetryDelayMs (or less, when a feature's deadline is near: see RecoveryParticipant.retryBounds), and each
   * delay is jittered down to between half and all of it.
   */
  retryDelayMs?: number;
  /** Longest delay between two attempts, ms; default 2000. */
  maxRetryDelayMs?: number;
  /** Reconnect attempts in a row when no feature has work waiting (plain auto-reconnect); default 5. */
  maxAttempts?: number;
}

/** What recovery needs from the client session it serves (ClientSession provides it). */
export interface RecoveryHost {
  readonly isOpen: boolean;
  /** Present when the app can make a new connection. */
  readonly reconnectTransport: (() => Promise<Transport>) | undefined;
  /** Continue on a new transport: connect and run the initialize handshake again. */
  reattach(transport: Transport): Promise<void>;
  /** Run the initialize handshake again on the current transport (its server session is gone). */
  reinitialize(): Promise<void>;
  /** Give up the current transport as lost (not closed by the app): the next attempt makes a new one. */
  dropTransport(): void;
  /** Recovery gave up: the session is closed for good (fires onclose). */
  closedForGood(): void;
}

/** Work lost with the connection, ready to be resumed once connected. */
export interface LostWork {
  /** Milliseconds before it may be resumed (a policy's minimum wait); 0 when it may now. */
  readonly wait: number;
  /** Resume it on the connection now open; resolves with the failure of a send that failed, if any. */
  resume(): Promise<{ error: unknown } | undefined>;
}

/** A feature that keeps work across a disconnect and resumes it (resumable requests). */
export interface RecoveryParticipant {
  /** The work lost and not yet on its way back, or undefined when there is none. */
  lost(): LostWork | undefined;
  /** Whether any work waits for a resume: recovery does not give up after maxAttempts while it does. */
  waiting(): boolean;
  /** Limits for the next retry delay: at most `cap`, and not past the nearest deadline (`nearest` ms from now). */
  retryBounds(now: number): { cap: number; nearest: number };
  /** The connection closed and cannot be recovered (no reconnect configured). */
  unrecoverable(): void;
  /** The app closed the session: nothing more is resumed. */
  stop(): void;
}

/** Error code and `data.reason` values the HTTP client transport uses for a request whose stream it lost. */
const LOST_REASONS = new Set(["stream-lost", "session-expired"]);

/** The transport's notice that the reply stream of a request was lost (HTTP), or undefined for any other message. */
export function lostStream(message: JsonObject): { expired: boolean; retryMs: number } | undefined {
  if (message.method !== undefined) return undefined;
  const error = message.error;
  if (
    !isObject(error) ||
    error.code !== ErrorCode.ConnectionLost ||
    !isObject(error.data) ||
    !LOST_REASONS.has(error.data.reason as string)
  ) {
    return undefined;
  }
  const retryMs = typeof error.data.retryMs === "number" && error.data.retryMs >= 0 ? error.data.retryMs : 0;
  return { expired: error.data.reason === "session-expired", retryMs };
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

/** A send failed without any answer from the server (refused, reset, unreachable): the connection is no good. */
function unreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  return error.name !== "HttpStatusError" && error.name !== "SessionExpiredError" && !(error instanceof RpcError);
}

/** One per ClientSession that can reconnect or has a feature that keeps work across a disconnect. */
export class ClientRecovery {
  readonly stats = { reconnects: 0 };
  private readonly participants: RecoveryParticipant[] = [];
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxAttempts: number;
  private recovering: Promise<void> | undefined = undefined;
  private transportGone = false;
  private needReinit = false;
  private stopped = false;
  private connectedWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(
    private readonly host: RecoveryHost,
    options: ReconnectOptions = {},
  ) {
    this.retryDelayMs = Math.max(1, options.retryDelayMs ?? 50);
    this.maxRetryDelayMs = Math.max(this.retryDelayMs, options.maxRetryDelayMs ?? 2000);
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  /** Add a feature whose lost work is resumed after each reconnection. */
  join(participant: RecoveryParticipant): void {
    this.participants.push(participant);
  }

  /** The hooks through which the session tells recovery what happened. */
  extension(): SessionExtension {
    return {
      accept: (message) => {
        const lost = lostStream(message);
        // Not a request kept for resume (a participant took those): it fails as it would anyway, but the session
        // behind it must be opened again.
        if (lost !== undefined && lost.expired) this.sessionExpired();
        return true;
      },
      sessionExpired: () => this.sessionExpired(),
      closed: (byApp) => !byApp && this.transportLost(),
    };
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get isRecovering(): boolean {
    return this.recovering !== undefined;
  }

  /** Resolves when the session is connected (at once, or after the reconnection under way). */
  whenConnected(): Promise<void> {
    if (this.host.isOpen && this.recovering === undefined) return Promise.resolve();
    if (this.stopped) return Promise.reject(new ConnectionClosedError());
    return new Promise((resolve, reject) => this.connectedWaiters.push({ resolve, reject }));
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
    this.start();
  }

  /** A participant lost work with the connection; `reinitialize`: the server forgot the session too. */
  lostWork(reinitialize: boolean): void {
    if (reinitialize) this.needReinit = true;
    this.start();
  }

  /** The transport closed by itself; true when recovery takes over (the session stays usable). */
  transportLost(): boolean {
    if (this.stopped) return false;
    if (this.host.reconnectTransport === undefined) {
      for (const p of this.participants) p.unrecoverable();
      return false;
    }
    this.transportGone = true;
    this.start();
    return true;
  }

  /** The app closes the session: nothing more is resumed, waiting work fails. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const p of this.participants) p.stop();
    this.settleWaiters(new ConnectionClosedError());
  }

  private waiting(): boolean {
    return this.participants.some((p) => p.waiting());
  }

  /** Start the recovery loop unless it runs already. */
  start(): void {
    if (this.recovering !== undefined || this.stopped) return;
    this.recovering = this.recover().finally(() => {
      this.recovering = undefined;
      if (this.host.isOpen) this.settleWaiters(undefined);
      if (!this.stopped && (this.transportGone || this.needReinit || this.waiting())) this.start();
    });
  }

  private collectLost(): LostWork[] {
    const out: LostWork[] = [];
    for (const p of this.participants) {
      const work = p.lost();
      if (work !== undefined) out.push(work);
    }
    return out;
  }

  private async recover(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const lost = this.collectLost();
      if (lost.length === 0 && !this.transportGone && !this.needReinit) return;
      // Not before each feature's minimum wait, counted from its disconnect.
      let wait = 0;
      for (const w of lost) wait = Math.max(wait, w.wait);
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
        const results = await Promise.all(lost.map((w) => w.resume()));
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
        if (!this.waiting() && failures >= this.maxAttempts) {
          this.stopped = true;
          this.settleWaiters(new ConnectionClosedError("Could not reconnect"));
          this.host.closedForGood();
          return;
        }
        await sleep(this.retryDelay(failures));
      }
    }
  }

  /**
   * Exponential backoff with jitter: several attempts fit in the shortest deadline still running (a doubling delay
   * alone let a client wake up after the server had given its request up), and none waits past the nearest one.
   */
  private retryDelay(failures: number): number {
    let cap = this.maxRetryDelayMs;
    let nearest = Infinity;
    const now = Date.now();
    for (const p of this.participants) {
      const bounds = p.retryBounds(now);
      cap = Math.min(cap, bounds.cap);
      nearest = Math.min(nearest, bounds.nearest);
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
}
