// A task the receiver created for one of our requests: its latest state, status events, its result, cancel.
import { RpcError, isPlainObject, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { Peer, RequestOptions } from "../../../rpc/peer.js";
import { LocalErrorCode, RequestCancelledError, RequestTimeoutError } from "../../../rpc/errors.js";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";
import {
  MODEL_IMMEDIATE_RESPONSE_META,
  TASKS_CANCEL,
  TASKS_GET,
  TASKS_RESULT,
  TASK_STATUS_NOTIFICATION,
  isTerminal,
  type CreateTaskReply,
  type TaskState,
  type TaskStatus,
} from "./protocol.js";

/** Milliseconds between polls when the receiver suggests no pollInterval. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1_000;
/** Floor on the poll interval: a receiver suggesting 0 must not make us spin. */
export const DEFAULT_MIN_TASK_POLL_INTERVAL_MS = 100;
/** Ceiling on the poll interval: a receiver suggesting an hour must not leave a finished task unnoticed that long. */
export const DEFAULT_MAX_TASK_POLL_INTERVAL_MS = 30_000;

/** How a requestor waits on a task. */
export interface TaskWaitOptions {
  /** Milliseconds between `tasks/get` polls when the receiver suggests none; default 1 000. */
  pollIntervalMs?: number;
  /** Lower bound on the interval, whatever the receiver suggests; default 100. */
  minPollIntervalMs?: number;
  /** Upper bound on the interval, whatever the receiver suggests; default 30 000. */
  maxPollIntervalMs?: number;
  /** Aborting stops waiting: `result()` rejects with RequestCancelledError; the task goes on unless `cancelOnAbort`. */
  signal?: AbortSignal;
  /** Also send `tasks/cancel` when `signal` aborts; default false. */
  cancelOnAbort?: boolean;
  /** Milliseconds for each `tasks/get` and `tasks/cancel`; defaults to the session's request timeout. */
  timeout?: number;
  /**
   * Milliseconds one `tasks/result` may block (the receiver holds it until the task ends); defaults to the session's
   * request timeout. When it passes before the task ended, polling goes on and `tasks/result` is asked again later.
   */
  resultTimeout?: number;
}

/** The task was cancelled (by `cancel()` or by the receiver) before a result was fetched. */
export class TaskCancelledError extends RpcError {
  constructor(readonly state: TaskState) {
    super(
      LocalErrorCode.RequestCancelled,
      `Task ${state.taskId} was cancelled${state.statusMessage === undefined ? "" : `: ${state.statusMessage}`}`,
      { taskId: state.taskId },
    );
    this.name = "TaskCancelledError";
  }
}

const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);

/** The task state in `value` (a Task, a tasks/get result, a status notification's params), or undefined. */
export function readTaskState(value: unknown): TaskState | undefined {
  if (!isPlainObject(value)) return undefined;
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval } = value;
  if (typeof taskId !== "string" || typeof status !== "string" || !STATUSES.has(status)) return undefined;
  if (typeof createdAt !== "string" || typeof lastUpdatedAt !== "string") return undefined;
  if (ttl !== undefined && ttl !== null && typeof ttl !== "number") return undefined;
  const state: TaskState = { taskId, status: status as TaskStatus, createdAt, lastUpdatedAt, ttl: ttl ?? null };
  if (typeof statusMessage === "string") state.statusMessage = statusMessage;
  if (typeof pollInterval === "number" && Number.isFinite(pollInterval)) state.pollInterval = pollInterval;
  return state;
}

/** The CreateTaskResult in `value`, or a local InvalidResult error naming what is wrong. */
export function readCreateTaskReply(value: unknown, method: string): CreateTaskReply {
  const task = isPlainObject(value) ? readTaskState(value.task) : undefined;
  if (task === undefined)
    throw new RpcError(LocalErrorCode.InvalidResult, `Invalid result for task-augmented ${method}: no task in it`, {
      result: value,
    });
  const meta = (value as JsonObject)._meta;
  return isPlainObject(meta) ? { task, _meta: meta } : { task };
}

function expectTaskState(value: unknown, method: string): TaskState {
  const state = readTaskState(value);
  if (state === undefined)
    throw new RpcError(LocalErrorCode.InvalidResult, `Invalid result for ${method}: not a task`, { result: value });
  return state;
}

/** A peer that can also watch a notification without displacing its handler (Session.observe). */
interface Observable {
  observe(method: string, listener: (params: JsonObject | undefined) => void): () => void;
}

/** @internal */
export function canObserve(peer: Peer): peer is Peer & Observable {
  return typeof (peer as Partial<Observable>).observe === "function";
}

/** Why the handle's own requests still in flight are dropped; a constant, since abort() would build a DOMException. */
const SETTLED = "the task handle settled";

type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * What follows a task on another era's wire (the Tasks extension of MCP 2026-07-28): a handle built with one hands it
 * every call, so the app holds the same TaskHandle on either era. The runtime builds these; apps never need to.
 */
export interface TaskDriver<R> {
  readonly state: TaskState;
  readonly pollInterval: number;
  onstatus(listener: (state: TaskState) => void): () => void;
  result(): Promise<R>;
  refresh(): Promise<TaskState>;
  cancel(): Promise<TaskState>;
  addCleanup(cleanup: () => void): void;
}

/**
 * A task the receiver created for one of our requests. Polling (`tasks/get`, at the receiver's `pollInterval`
 * within the floor and ceiling) runs while someone waits: `result()` or a status listener; status notifications
 * the receiver sends update it early. `result()` fetches `tasks/result` once the task ended, or as soon as it
 * needs input (the receiver delivers its requests through that call), and settles with what the original request
 * would have returned: its result, or its JSON-RPC error as RpcError. On a client speaking MCP 2026-07-28 the Tasks
 * extension follows the task instead (eras/2026-07-28/client-task.ts), behind the same methods.
 */
export class TaskHandle<R> {
  readonly taskId: string;
  private current: TaskState;
  private readonly listeners = new Set<(state: TaskState) => void>();
  private outcome: Outcome<R> | undefined = undefined;
  private waiter: { promise: Promise<R>; resolve: (value: R) => void; reject: (error: unknown) => void } | undefined;
  private running = false;
  private resultInFlight = false;
  private pollInFlight = false;
  /** Aborted once the handle settled: stops the poll pause and the requests in flight. */
  private readonly stopper = new AbortController();
  private wakeUp: (() => void) | undefined = undefined;
  private unobserve: (() => void) | undefined = undefined;
  private readonly cleanups: (() => void)[] = [];
  private readonly fallbackInterval: number;
  private readonly minInterval: number;
  private readonly maxInterval: number;

  constructor(
    private readonly peer: Peer,
    /** The method the task runs (e.g. tools/call). */
    readonly method: string,
    readonly created: CreateTaskReply,
    private readonly options: TaskWaitOptions = {},
    /** Who follows the task on another era's wire (see TaskDriver); without one, core Tasks' requests. */
    private readonly driver?: TaskDriver<R>,
  ) {
    this.fallbackInterval = limitOption(
      "pollIntervalMs",
      options.pollIntervalMs,
      DEFAULT_TASK_POLL_INTERVAL_MS,
      MAX_TIMER_MS,
    );
    this.minInterval = limitOption(
      "minPollIntervalMs",
      options.minPollIntervalMs,
      DEFAULT_MIN_TASK_POLL_INTERVAL_MS,
      MAX_TIMER_MS,
    );
    this.maxInterval = Math.max(
      this.minInterval,
      limitOption("maxPollIntervalMs", options.maxPollIntervalMs, DEFAULT_MAX_TASK_POLL_INTERVAL_MS, MAX_TIMER_MS),
    );
    this.taskId = created.task.taskId;
    this.current = created.task;
    const signal = driver === undefined ? options.signal : undefined;
    if (signal !== undefined) {
      const onAbort = (): void => this.aborted(signal.reason);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        this.cleanups.push(() => signal.removeEventListener("abort", onAbort));
      }
    }
  }

  /** The latest state seen (from the CreateTaskResult, a poll, a status notification or `cancel()`). */
  get state(): TaskState {
    return this.driver?.state ?? this.current;
  }

  get status(): TaskStatus {
    return this.state.status;
  }

  /** The text the receiver offered to hand the model while the task runs (model-immediate-response), if any. */
  get immediateResponse(): string | undefined {
    const value = this.created._meta?.[MODEL_IMMEDIATE_RESPONSE_META];
    return typeof value === "string" ? value : undefined;
  }

  /** Milliseconds to the next poll: the receiver's pollInterval (or pollIntervalMs) within the floor and ceiling. */
  get pollInterval(): number {
    if (this.driver !== undefined) return this.driver.pollInterval;
    const suggested = this.current.pollInterval ?? this.fallbackInterval;
    return Math.min(this.maxInterval, Math.max(this.minInterval, suggested));
  }

  /**
   * Call `listener` with each new status (or status message); starts polling while listeners remain.
   * Returns the function that removes it.
   */
  onstatus(listener: (state: TaskState) => void): () => void {
    if (this.driver !== undefined) return this.driver.onstatus(listener);
    this.listeners.add(listener);
    this.run();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** What the original request returned (or its error), once the task ended; the same promise on every call. */
  result(): Promise<R> {
    if (this.driver !== undefined) return this.driver.result();
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

  /** Ask the receiver for the current state once (`tasks/get`). */
  async refresh(): Promise<TaskState> {
    if (this.driver !== undefined) return this.driver.refresh();
    const { timeout } = this.options;
    const reply = await this.peer.request(TASKS_GET, { taskId: this.taskId }, timeout === undefined ? {} : { timeout });
    const state = expectTaskState(reply, TASKS_GET);
    this.update(state);
    return this.current;
  }

  /** Send `tasks/cancel`; resolves with the state the receiver answers (cancelled). `result()` then rejects with TaskCancelledError. */
  async cancel(): Promise<TaskState> {
    if (this.driver !== undefined) return this.driver.cancel();
    const { timeout } = this.options;
    const reply = await this.peer.request(
      TASKS_CANCEL,
      { taskId: this.taskId },
      timeout === undefined ? {} : { timeout },
    );
    const state = expectTaskState(reply, TASKS_CANCEL);
    this.update(state);
    return state;
  }

  /** @internal A state reported before the handle existed (a status notification that overtook the CreateTaskResult). */
  noteState(state: TaskState): void {
    if (this.driver === undefined && state.taskId === this.taskId) this.update(state);
  }

  /** @internal Run `cleanup` once the handle is done with the task (settled, or the task ended). */
  addCleanup(cleanup: () => void): void {
    if (this.driver !== undefined) return this.driver.addCleanup(cleanup);
    if (this.outcome !== undefined) cleanup();
    else this.cleanups.push(cleanup);
  }

  /** For the handle's own polls and result fetch: they stop when it settles. */
  private callOptions(timeout = this.options.timeout): RequestOptions {
    return timeout === undefined ? { signal: this.stopper.signal } : { signal: this.stopper.signal, timeout };
  }

  /** Take a newer state in: terminal states are final, and an older report (a poll racing a notification) is ignored. */
  private update(next: TaskState): void {
    const previous = this.current;
    if (next.taskId !== this.taskId || isTerminal(previous.status)) return;
    if (Date.parse(next.lastUpdatedAt) < Date.parse(previous.lastUpdatedAt)) return;
    this.current = next;
    if (next.status === previous.status && next.statusMessage === previous.statusMessage) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure is its own; the others and the wait go on.
      }
    }
    if (isTerminal(next.status) && this.waiter === undefined && this.outcome === undefined) this.quiet();
    this.wakeUp?.();
  }

  private run(): void {
    if (this.running || this.outcome !== undefined) return;
    this.running = true;
    if (this.unobserve === undefined && canObserve(this.peer)) {
      this.unobserve = this.peer.observe(TASK_STATUS_NOTIFICATION, (params) => {
        const state = readTaskState(params);
        if (state !== undefined && state.taskId === this.taskId) this.update(state);
      });
    }
    void this.loop().finally(() => {
      this.running = false;
      if (!this.resultInFlight && this.outcome === undefined && this.waiter === undefined) this.quiet();
    });
  }

  private async loop(): Promise<void> {
    while (this.outcome === undefined) {
      const status = this.current.status;
      if (status === "cancelled") {
        this.settle({ ok: false, error: new TaskCancelledError(this.current) });
        return;
      }
      // The spec: on input_required the requestor SHOULD call tasks/result at once; the receiver's requests come on it.
      if (this.waiter !== undefined && !this.resultInFlight && (isTerminal(status) || status === "input_required"))
        this.fetchResult();
      if (isTerminal(status)) return;
      if (this.waiter === undefined && this.listeners.size === 0) return;
      // Woken early by news (a status notification, a result): look at it before asking again.
      if (await this.pause(this.pollInterval)) continue;
      let state: TaskState;
      this.pollInFlight = true;
      try {
        state = expectTaskState(
          await this.peer.request(TASKS_GET, { taskId: this.taskId }, this.callOptions()),
          TASKS_GET,
        );
      } catch (error) {
        if (this.outcome === undefined) this.settle({ ok: false, error });
        return;
      } finally {
        this.pollInFlight = false;
      }
      this.update(state);
    }
  }

  private fetchResult(): void {
    this.resultInFlight = true;
    this.peer.request(TASKS_RESULT, { taskId: this.taskId }, this.callOptions(this.options.resultTimeout)).then(
      async (result) => {
        // The answer means the task ended; a last look shows listeners the final status polling may have missed.
        if (!isTerminal(this.current.status) && this.listeners.size > 0) await this.refresh().catch(() => undefined);
        this.resultInFlight = false;
        this.settle({ ok: true, value: result as unknown as R });
      },
      (error: unknown) => {
        this.resultInFlight = false;
        if (this.outcome !== undefined) return;
        if (this.current.status === "cancelled")
          this.settle({ ok: false, error: new TaskCancelledError(this.current) });
        else if (error instanceof RequestTimeoutError && !isTerminal(this.current.status)) this.run();
        else this.settle({ ok: false, error });
      },
    );
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

  private aborted(reason: unknown): void {
    if (this.outcome !== undefined) return;
    this.settle({ ok: false, error: new RequestCancelledError(this.method, reason) });
    if (this.options.cancelOnAbort === true && !isTerminal(this.current.status)) {
      const { timeout } = this.options;
      // Best effort: the caller has already been told the wait ended; a failed cancel has no one left to tell.
      this.peer
        .request(TASKS_CANCEL, { taskId: this.taskId }, timeout === undefined ? {} : { timeout })
        .catch(() => undefined);
    }
  }

  private settle(outcome: Outcome<R>): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    // Aborting costs an event dispatch; the usual way here (the result arrived) has nothing left to stop.
    if (this.pollInFlight || this.resultInFlight) this.stopper.abort(SETTLED);
    this.wakeUp?.();
    this.quiet();
    const waiter = this.waiter;
    if (waiter !== undefined) {
      if (outcome.ok) waiter.resolve(outcome.value);
      else waiter.reject(outcome.error);
    }
  }

  /** Stop listening: notifications, the caller's signal, anything the requestor attached. */
  private quiet(): void {
    this.unobserve?.();
    this.unobserve = undefined;
    if (this.outcome === undefined) return;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}
