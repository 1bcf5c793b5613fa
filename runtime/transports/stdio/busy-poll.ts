// Adaptive busy polling for pipe transports: after a message goes out, keep the event loop polling briefly so the reply is read without an idle-CPU wake-up.
import { availableParallelism } from "node:os";

/**
 * Why: on a machine whose cores go idle between messages (most VMs), waking a process blocked in
 * epoll costs far more than the work of a round trip (measured here: a C pipe ping-pong takes ~55 us
 * across two idle cores and ~6 us on one busy core). Polling for a short window after a send keeps this
 * process on its core, so a quick reply is read at once. It only pays when the peer runs on another core
 * and answers within the window, so it is off on a single core, and it backs off when windows expire
 * without a reply (a slow peer, or a peer competing for this core), trying again now and then.
 */
export const DEFAULT_BUSY_POLL_MICROS = 100;

/** Credits gained per reply caught while polling, lost per window that expired; polling needs a positive balance. */
const MAX_CREDIT = 16;
const MISS_COST = 2;
/** Room for a few slow first exchanges (a cold peer compiling its code) before backing off. */
const INITIAL_CREDIT = 8;
/** While backed off, one send in this many polls again, so a peer that became fast (warmed up) is noticed soon. */
const RETRY_EVERY = 32;

/** @internal */
export class BusyPoller {
  private readonly windowMs: number;
  private credit = INITIAL_CREDIT;
  private skipped = 0;
  private deadline = 0;
  private polling = false;
  private received = false;
  private stopped = false;
  /** Windows in which something arrived, and windows that expired with nothing; for tests and benchmarks. */
  hits = 0;
  misses = 0;

  /** `micros` <= 0, or a process limited to one core, disables polling. */
  constructor(micros: number = DEFAULT_BUSY_POLL_MICROS, cores: number = availableParallelism()) {
    this.windowMs = cores >= 2 && micros > 0 ? micros / 1000 : 0;
  }

  get enabled(): boolean {
    return this.windowMs > 0 && !this.stopped;
  }

  /** Whether a window is open now (the event loop is polling). */
  get active(): boolean {
    return this.polling;
  }

  /** A message was written: poll for a reply unless backed off. */
  sent(): void {
    if (this.windowMs === 0 || this.stopped) return;
    if (this.credit <= 0) {
      if (++this.skipped < RETRY_EVERY) return;
      this.skipped = 0;
      this.credit = 1;
    }
    this.deadline = performance.now() + this.windowMs;
    this.received = false;
    if (!this.polling) {
      this.polling = true;
      setImmediate(this.tick);
    }
  }

  /**
   * Bytes arrived while polling: a hit, and the window starts over, since more may follow at once (a
   * resumable request's policy notification comes just before its response; a burst of progress).
   */
  arrived(): void {
    if (!this.polling) return;
    this.deadline = performance.now() + this.windowMs;
    if (this.received) return;
    this.received = true;
    this.hits++;
    if (this.credit < MAX_CREDIT) this.credit++;
  }

  stop(): void {
    this.stopped = true;
  }

  private readonly tick = (): void => {
    if (this.stopped) {
      this.polling = false;
      return;
    }
    if (performance.now() >= this.deadline) {
      this.polling = false;
      // Only a window in which nothing arrived counts against polling.
      if (!this.received) {
        this.misses++;
        this.credit -= MISS_COST;
      }
      return;
    }
    // A pending (ref'd) immediate makes libuv poll with a zero timeout instead of blocking; an unref'd one
    // would not. The window is short, so holding the loop open for it cannot keep a process from exiting.
    setImmediate(this.tick);
  };
}
