// The waiting behind a task handle on either era's wire: status listeners, the one result, polls while someone waits.
import type { RequestOptions } from "../rpc/peer.js";
import { RequestCancelledError } from "../rpc/errors.js";
import { MAX_TIMER_MS, limitOption } from "../rpc/limits.js";

/** Milliseconds between polls when the receiver suggests no pollInterval. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1_000;
/** Floor on the poll interval: a receiver suggesting 0 must not make us spin. */
export const DEFAULT_MIN_TASK_POLL_INTERVAL_MS = 100;
/** Ceiling on the poll interval: a receiver suggesting an hour must not leave a finished task unnoticed that long. */
export const DEFAULT_MAX_TASK_POLL_INTERVAL_MS = 30_000;

/** The poll interval's options as the app passes them (TaskWaitOptions names and documents them). */
export interface PaceOptions {
  readonly pollIntervalMs?: number;
  readonly minPollIntervalMs?: number;
  readonly maxPollIntervalMs?: number;
}

/** The poll interval's bounds, checked where the app passed them. */
export class TaskPace {
  private readonly fallback: number;
  private readonly min: number;
  private readonly max: number;

  constructor(options: PaceOptions) {
    this.fallback = limitOption("pollIntervalMs", options.pollIntervalMs, DEFAULT_TASK_POLL_INTERVAL_MS, MAX_TIMER_MS);
    this.min = limitOption(
      "minPollIntervalMs",
      options.minPollIntervalMs,
      DEFAULT_MIN_TASK_POLL_INTERVAL_MS,
      MAX_TIMER_MS,
    );
    this.max = Math.max(
      this.min,
      limitOption("maxPollIntervalMs", options.maxPollIntervalMs, DEFAULT_MAX_TASK_POLL_INTERVAL_MS, MAX_TIMER_MS),
    );
  }

  /** Milliseconds to the next poll: the receiver's suggestion (or the fallback) within the floor and ceiling. */
  of(suggested: number | undefined): number {
    return Math.min(this.max, Math.max(this.min, suggested ?? this.fallback));
  }
}

/**
 * What the wire makes of the latest state before the next poll: "stop" (nothing to poll for: the task ended or the
 * wait settled), "pause" (poll after the interval), "poll" (at once), or work under way (answering the task's input
 * requests), after which the state is looked at again.
 */
export type NextStep = "stop" | "pause" | "poll" | Promise<void>;

/** How a wait settled: with the task's result, or with the error its result() rejects with. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** How a wait is set up by its wire. */
export interface WaitSetup {
  readonly pace: TaskPace;
  /** Milliseconds for each request the wait makes; default the session's. */
  readonly timeout?: number;
  /** Why its requests in flight are dropped once it settled; a constant, since abort() would build a DOMException. */
  readonly settledReason: string;
}

/**
 * A task waited on: polling runs while someone waits (`result()` or a status listener), paused at the receiver's pace
 * and cut short by news; `result()` is one promise, settled once. The wire (core Tasks, the Tasks extension) says how
 * to poll, what a state means before the next poll, what a terminal state settles with, and how to cancel.
 */
export abstract class TaskWait<R, S extends { readonly pollInterval?: number }> {
  private readonly listeners = new Set<(state: S) => void>();
  private outcome: Outcome<R> | undefined = undefined;
  private waiter: { promise: Promise<R>; resolve: (value: R) => void; reject: (error: unknown) => void } | undefined;
  private running = false;
  private polling = false;
  /** Aborted once settled: stops the requests in flight (and whatever else the wire handed its signal). */
  private readonly stopper = new AbortController();
  private wakeUp: (() => void) | undefined = undefined;
  private readonly cleanups: (() => void)[] = [];

  protected constructor(
    /** The request the task runs, named in errors. */
    readonly method: string,
    private readonly setup: WaitSetup,
  ) {}

  /** The latest state seen. */
  abstract get state(): S;

  /** Milliseconds to the next poll: the state's pollInterval (or the fallback) within the floor and ceiling. */
  get pollInterval(): number {
    return this.setup.pace.of(this.state.pollInterval);
  }

  /** Call `listener` with each new status (or status message); polls while listeners remain. Returns its remover. */
  onstatus(listener: (state: S) => void): () => void {
    this.listeners.add(listener);
    this.run();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** What the task's request returned (or its error), once the task ended: every call settles the same way. */
  result(): Promise<R> {
    const outcome = this.outcome;
    if (outcome !== undefined) return outcome.ok ? Promise.resolve(outcome.value) : Promise.reject(outcome.error);
    if (this.waiter === undefined) {
      let resolve!: (value: R) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<R>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.waiter = { promise, resolve, reject };
      // A poll pause under way (status listeners) may be long: someone now wants the result, look again at once.
      this.wakeUp?.();
    }
    this.run();
    return this.waiter.promise;
  }

  /** Run `cleanup` once the wait settled (at once when it already has). */
  addCleanup(cleanup: () => void): void {
    if (this.outcome !== undefined) cleanup();
    else this.cleanups.push(cleanup);
  }

  /** Before each poll: what the latest state asks for (see NextStep). */
  protected abstract next(): NextStep;
  /** One poll with `options` (they carry the stop signal), its state taken in. */
  protected abstract poll(options: RequestOptions): Promise<void>;
  /** The wire's cancel request, as is. */
  protected abstract sendCancel(): Promise<unknown>;
  /** Whether the task ended (an abort then sends no cancel). */
  protected abstract ended(): boolean;
  /** Whether work the wire started with the stop signal may still run: settling then aborts it. */
  protected abstract inFlight(): boolean;
  /** The polling loop starts or ends (a wire that also hears of the task between polls listens meanwhile). */
  protected loopStarted(): void {}
  protected loopEnded(): void {}

  protected get settled(): boolean {
    return this.outcome !== undefined;
  }

  /** Someone waits for the result. */
  protected get wanted(): boolean {
    return this.waiter !== undefined;
  }

  protected get listened(): boolean {
    return this.listeners.size > 0;
  }

  /** Aborted once the wait settled. */
  protected get stopSignal(): AbortSignal {
    return this.stopper.signal;
  }

  /** For the wait's own requests: they stop when it settles. */
  protected callOptions(timeout = this.setup.timeout): RequestOptions {
    return timeout === undefined ? { signal: this.stopper.signal } : { signal: this.stopper.signal, timeout };
  }

  /** For requests that outlive the wait (the app's refresh and cancel, a cancel sent on the way out). */
  protected timeoutOptions(): RequestOptions {
    const timeout = this.setup.timeout;
    return timeout === undefined ? {} : { timeout };
  }

  /** Aborting `signal` ends the wait (`result()` rejects with RequestCancelledError); the task goes on unless told. */
  protected stopWith(signal: AbortSignal | undefined, cancelOnAbort: boolean): void {
    if (signal === undefined) return;
    const onAbort = (): void => this.aborted(signal.reason, cancelOnAbort);
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      this.cleanups.push(() => signal.removeEventListener("abort", onAbort));
    }
  }

  /** Tell the status listeners of a new status (or status message). */
  protected notify(state: S): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(state);
      } catch {
        // A listener's failure is its own; the others and the wait go on.
      }
    }
  }

  /** News arrived: a poll pause under way ends, so the loop looks at it before asking again. */
  protected wake(): void {
    this.wakeUp?.();
  }

  /** Poll while someone waits, unless the loop already runs or the wait settled. */
  protected run(): void {
    if (this.running || this.outcome !== undefined) return;
    this.running = true;
    this.loopStarted();
    void this.loop().finally(() => {
      this.running = false;
      this.loopEnded();
    });
  }

  /** End the wait with `outcome` (the first one counts): stop what runs for it, clean up, answer result(). */
  protected settle(outcome: Outcome<R>): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    // Aborting costs an event dispatch; the usual way here (the result arrived) has nothing left to stop.
    if (this.polling || this.inFlight()) this.stopper.abort(this.setup.settledReason);
    this.wakeUp?.();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    const waiter = this.waiter;
    if (waiter === undefined) return;
    if (outcome.ok) waiter.resolve(outcome.value);
    else waiter.reject(outcome.error);
  }

  private async loop(): Promise<void> {
    while (this.outcome === undefined) {
      const step = this.next();
      if (step === "stop") return;
      if (typeof step !== "string") {
        await step;
        continue;
      }
      if (this.waiter === undefined && this.listeners.size === 0) return;
      // Woken early by news (a status notification, a result wanted, a cancel): look at it before asking again.
      if (step === "pause" && (await this.pause(this.pollInterval))) continue;
      if (this.outcome !== undefined) return;
      this.polling = true;
      try {
        await this.poll(this.callOptions());
      } catch (error) {
        this.settle({ ok: false, error });
        return;
      } finally {
        this.polling = false;
      }
    }
  }

  /** Resolves true when woken before `ms` passed. */
  private pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (early: boolean): void => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(early);
      };
      const timer = setTimeout(done, ms, false);
      this.wakeUp = () => done(true);
    });
  }

  private aborted(reason: unknown, cancelOnAbort: boolean): void {
    if (this.outcome !== undefined) return;
    const cancel = cancelOnAbort && !this.ended();
    this.settle({ ok: false, error: new RequestCancelledError(this.method, reason) });
    // Best effort: the caller has already been told the wait ended; a failed cancel has no one left to tell.
    if (cancel) this.sendCancel().catch(() => undefined);
  }
}
