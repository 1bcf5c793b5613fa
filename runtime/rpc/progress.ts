// Sending progress for a request we serve: monotonic values, rate-limited, last value flushed before the response.
import type { JsonObject, RequestId } from "./jsonrpc.js";
import { ProgressOrderError } from "./errors.js";
import type { ProgressToken } from "./operations.js";
import { SENT } from "./transport.js";

/** @internal */
export const PROGRESS_NOTIFICATION = "notifications/progress";
export const DEFAULT_PROGRESS_INTERVAL_MS = 50;

/** How a reporter hands a progress notification to the connection. */
export interface ProgressSink {
  sendProgress(params: JsonObject, relatedRequestId: RequestId): Promise<void>;
}

/**
 * One per inbound request that carried a progress token. At most one notification per `intervalMs`;
 * a value reported inside the window replaces any held one and goes out when the window opens, or
 * just before the response, whichever is first. After `flush()` or `stop()` it is silent for good.
 */
export class ProgressReporter {
  private last = -Infinity;
  private lastSentAt = -Infinity;
  private held: JsonObject | undefined = undefined;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private done = false;

  constructor(
    readonly token: ProgressToken,
    private readonly requestId: RequestId,
    private readonly sink: ProgressSink,
    private readonly intervalMs: number = DEFAULT_PROGRESS_INTERVAL_MS,
  ) {}

  /**
   * Resolves once the notification is handed to the connection or held for the next window; rejects with
   * ProgressOrderError when `progress` does not increase, or TypeError when it is not a finite number.
   */
  report(progress: number, total?: number, message?: string): Promise<void> {
    if (this.done) return SENT;
    if (typeof progress !== "number" || !Number.isFinite(progress)) {
      return Promise.reject(new TypeError(`Progress must be a finite number, got ${String(progress)}`));
    }
    if (progress <= this.last) return Promise.reject(new ProgressOrderError(progress, this.last));
    this.last = progress;
    const params: JsonObject = { progressToken: this.token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    const now = Date.now();
    const wait = this.lastSentAt + this.intervalMs - now;
    if (this.timer === undefined && wait <= 0) {
      this.lastSentAt = now;
      return this.sink.sendProgress(params, this.requestId);
    }
    this.held = params;
    if (this.timer === undefined) this.timer = setTimeout(sendHeld, wait, this);
    return SENT;
  }

  /** Called just before the response is sent: the held value, if any, goes out first. */
  flush(): void {
    if (this.done) return;
    this.done = true;
    this.clearTimer();
    const held = this.held;
    if (held !== undefined) {
      this.held = undefined;
      sendQuietly(this.sink.sendProgress(held, this.requestId));
    }
  }

  /** Cancelled or disconnected: drop whatever is held. */
  stop(): void {
    this.done = true;
    this.held = undefined;
    this.clearTimer();
  }

  /** @internal timer callback */
  sendHeldNow(): void {
    this.timer = undefined;
    const held = this.held;
    if (held === undefined || this.done) return;
    this.held = undefined;
    this.lastSentAt = Date.now();
    sendQuietly(this.sink.sendProgress(held, this.requestId));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}

function sendHeld(reporter: ProgressReporter): void {
  reporter.sendHeldNow();
}

// Send failures surface through the transport's onerror and the session's close; nothing to do per notification.
function ignore(): void {}

/** @internal Read a usable progress token from request params (`_meta.progressToken`), or undefined. */
export function readProgressToken(params: JsonObject | undefined): ProgressToken | undefined {
  if (params === undefined) return undefined;
  const meta = params._meta;
  if (typeof meta !== "object" || meta === null) return undefined;
  const token = (meta as JsonObject).progressToken;
  if (typeof token === "string" || (typeof token === "number" && Number.isInteger(token))) return token;
  return undefined;
}

/** @internal Copy of params with `_meta.progressToken` set; other `_meta` keys and the caller's object are left alone. */
export function withProgressToken(params: JsonObject | undefined, token: ProgressToken): JsonObject {
  if (params === undefined) return { _meta: { progressToken: token } };
  const meta = params._meta;
  const baseMeta = typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as JsonObject) : undefined;
  return {
    ...params,
    _meta: baseMeta === undefined ? { progressToken: token } : { ...baseMeta, progressToken: token },
  };
}

/** Progress is best effort: a failed send is not the handler's problem. SENT needs no handler at all. */
function sendQuietly(sent: Promise<void>): void {
  if (sent !== SENT) sent.catch(ignore);
}
