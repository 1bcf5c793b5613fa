// A task the receiver created for one of our requests: its latest state, status events, its result, cancel.
import { RpcError, isPlainObject, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { Peer, RequestOptions } from "../../../rpc/peer.js";
import { LocalErrorCode, RequestTimeoutError } from "../../../rpc/errors.js";
import { TaskPace, TaskWait, type NextStep } from "../../../mcp/task-wait.js";
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

export {
  DEFAULT_MAX_TASK_POLL_INTERVAL_MS,
  DEFAULT_MIN_TASK_POLL_INTERVAL_MS,
  DEFAULT_TASK_POLL_INTERVAL_MS,
} from "../../../mcp/task-wait.js";

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
   * Milliseconds one `tasks/result` may block (the receiver holds it until the task ends); defaults to `timeout`, else
   * the session's request timeout. When it passes before the task ended, polling goes on and `tasks/result` is asked
   * again later.
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

/** @internal The statuses a task may report (the same five on both eras' wires). */
export const TASK_STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
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
  if (typeof taskId !== "string" || typeof status !== "string" || !TASK_STATUSES.has(status)) return undefined;
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

/** Why the task's own requests still in flight are dropped; a constant, since abort() would build a DOMException. */
const SETTLED = "the task handle settled";

/**
 * What follows a task for a TaskHandle, which hands it every call: core Tasks' requests (CoreTask, below), or another
 * era's wire (the Tasks extension of MCP 2026-07-28), so the app holds the same TaskHandle on either era. The runtime
 * builds these; apps never need to.
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
  /** Who follows the task: core Tasks' requests (CoreTask), or the driver of another era's wire. */
  private readonly follower: TaskDriver<R>;

  constructor(
    peer: Peer,
    /** The method the task runs (e.g. tools/call). */
    readonly method: string,
    readonly created: CreateTaskReply,
    options: TaskWaitOptions = {},
    /** Who follows the task on another era's wire (see TaskDriver); without one, core Tasks' requests. */
    driver?: TaskDriver<R>,
  ) {
    this.taskId = created.task.taskId;
    this.follower = driver ?? new CoreTask<R>(peer, method, created, options);
  }

  /** The latest state seen (from the CreateTaskResult, a poll, a status notification or `cancel()`). */
  get state(): TaskState {
    return this.follower.state;
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
    return this.follower.pollInterval;
  }

  /**
   * Call `listener` with each new status (or status message); starts polling while listeners remain.
   * Returns the function that removes it.
   */
  onstatus(listener: (state: TaskState) => void): () => void {
    return this.follower.onstatus(listener);
  }

  /** What the original request returned (or its error), once the task ended: every call settles the same way. */
  result(): Promise<R> {
    return this.follower.result();
  }

  /** Ask the receiver for the current state once (`tasks/get`). */
  refresh(): Promise<TaskState> {
    return this.follower.refresh();
  }

  /** Send `tasks/cancel`; resolves with the state the receiver answers (cancelled). `result()` then rejects with TaskCancelledError. */
  cancel(): Promise<TaskState> {
    return this.follower.cancel();
  }

  /** @internal A state reported before the handle existed (a status notification that overtook the CreateTaskResult). */
  noteState(state: TaskState): void {
    if (this.follower instanceof CoreTask) this.follower.noteState(state);
  }

  /** @internal Run `cleanup` once the handle is done with the task (settled, or the task ended). */
  addCleanup(cleanup: () => void): void {
    this.follower.addCleanup(cleanup);
  }
}

/** A task followed with core Tasks' requests: tasks/get polls, status notifications, tasks/result, tasks/cancel. */
class CoreTask<R> extends TaskWait<R, TaskState> implements TaskDriver<R> {
  private readonly taskId: string;
  private current: TaskState;
  private resultInFlight = false;
  private unobserve: (() => void) | undefined = undefined;

  constructor(
    private readonly peer: Peer,
    method: string,
    created: CreateTaskReply,
    private readonly options: TaskWaitOptions,
  ) {
    super(method, { pace: new TaskPace(options), timeout: options.timeout, settledReason: SETTLED });
    this.taskId = created.task.taskId;
    this.current = created.task;
    this.addCleanup(() => this.unwatch());
    this.stopWith(options.signal, options.cancelOnAbort === true);
  }

  get state(): TaskState {
    return this.current;
  }

  async refresh(): Promise<TaskState> {
    const reply = await this.peer.request(TASKS_GET, { taskId: this.taskId }, this.timeoutOptions());
    const state = expectTaskState(reply, TASKS_GET);
    this.update(state);
    return this.current;
  }

  async cancel(): Promise<TaskState> {
    const state = expectTaskState(await this.sendCancel(), TASKS_CANCEL);
    this.update(state);
    return state;
  }

  noteState(state: TaskState): void {
    if (state.taskId === this.taskId) this.update(state);
  }

  protected next(): NextStep {
    const status = this.current.status;
    if (status === "cancelled") {
      this.settle({ ok: false, error: new TaskCancelledError(this.current) });
      return "stop";
    }
    // The spec: on input_required the requestor SHOULD call tasks/result at once; the receiver's requests come on it.
    if (this.wanted && !this.resultInFlight && (isTerminal(status) || status === "input_required")) this.fetchResult();
    return isTerminal(status) ? "stop" : "pause";
  }

  protected async poll(options: RequestOptions): Promise<void> {
    const reply = await this.peer.request(TASKS_GET, { taskId: this.taskId }, options);
    this.update(expectTaskState(reply, TASKS_GET));
  }

  protected sendCancel(): Promise<JsonObject> {
    return this.peer.request(TASKS_CANCEL, { taskId: this.taskId }, this.timeoutOptions());
  }

  protected ended(): boolean {
    return isTerminal(this.current.status);
  }

  protected inFlight(): boolean {
    return this.resultInFlight;
  }

  /** Status notifications update the task between polls while the loop runs. */
  protected override loopStarted(): void {
    if (this.unobserve === undefined && canObserve(this.peer)) {
      this.unobserve = this.peer.observe(TASK_STATUS_NOTIFICATION, (params) => {
        const state = readTaskState(params);
        if (state !== undefined && state.taskId === this.taskId) this.update(state);
      });
    }
  }

  protected override loopEnded(): void {
    if (!this.resultInFlight && !this.settled && !this.wanted) this.unwatch();
  }

  private fetchResult(): void {
    this.resultInFlight = true;
    this.peer.request(TASKS_RESULT, { taskId: this.taskId }, this.callOptions(this.options.resultTimeout)).then(
      async (result) => {
        // The answer means the task ended; a last look shows listeners the final status polling may have missed.
        if (!isTerminal(this.current.status) && this.listened) await this.refresh().catch(() => undefined);
        this.resultInFlight = false;
        this.settle({ ok: true, value: result as unknown as R });
      },
      (error: unknown) => {
        this.resultInFlight = false;
        if (this.settled) return;
        if (this.current.status === "cancelled")
          this.settle({ ok: false, error: new TaskCancelledError(this.current) });
        else if (error instanceof RequestTimeoutError && !isTerminal(this.current.status)) this.run();
        else this.settle({ ok: false, error });
      },
    );
  }

  /** Take a newer state in: terminal states are final, and an older report (a poll racing a notification) is ignored. */
  private update(next: TaskState): void {
    const previous = this.current;
    if (next.taskId !== this.taskId || isTerminal(previous.status)) return;
    if (Date.parse(next.lastUpdatedAt) < Date.parse(previous.lastUpdatedAt)) return;
    this.current = next;
    if (next.status === previous.status && next.statusMessage === previous.statusMessage) return;
    this.notify(next);
    if (isTerminal(next.status) && !this.wanted && !this.settled) this.unwatch();
    this.wake();
  }

  /** Stop listening to status notifications. */
  private unwatch(): void {
    this.unobserve?.();
    this.unobserve = undefined;
  }
}
