// One task of the Tasks extension as the client follows it: tasks/get at the server's pace, status events, input requests answered through the app's handlers and sent back with tasks/update, tasks/cancel, the outcome inlined in the terminal state.
import { ErrorCode, RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import type { RequestOptions } from "../../rpc/peer.js";
import { InvalidResultError } from "../../rpc/errors.js";
import { TaskPace, TaskWait, type NextStep } from "../../mcp/task-wait.js";
import { TASK_STATUSES, TaskCancelledError, type TaskDriver } from "../2025-11-25/tasks/handle.js";
import { isTerminal, type TaskState, type TaskStatus } from "../2025-11-25/tasks/protocol.js";

// FollowOptions carries a TaskPace: whoever builds one takes the class from here.
export { TaskPace } from "../../mcp/task-wait.js";

export const TASKS_GET = "tasks/get";
export const TASKS_UPDATE = "tasks/update";
export const TASKS_CANCEL = "tasks/cancel";

/** Input requests one task may make of the client over its life, by default. */
export const DEFAULT_MAX_TASK_INPUTS = 1_000;

/** What following a task needs of the client's 2026-07-28 wire. */
export interface TaskLink {
  /** Sends tasks/get, tasks/update or tasks/cancel with the envelope and headers; the complete result, unchecked. */
  send(method: string, params: JsonObject, options: RequestOptions): Promise<JsonObject>;
  /** One input request answered by the app's handler for its method, its params checked as an input round's. */
  answer(key: string, request: unknown, signal: AbortSignal): Promise<JsonObject>;
  /** The task's inlined result as the app reads a complete result of `method` (the same guard and stripping). */
  complete(method: string, result: JsonObject): JsonObject;
  /** Input requests one task may make over its life (ClientSessionOptions.maxTaskInputs). */
  readonly maxInputs: number;
}

/** The server asked more input of one task than `maxTaskInputs` allows: the client cancelled it. */
export class TaskInputsExceededError extends RpcError {
  constructor(taskId: string, limit: number) {
    super(ErrorCode.InternalError, `Task ${taskId} asked for more than ${limit} inputs; the client cancelled it`, {
      taskId,
      maxTaskInputs: limit,
    });
    this.name = "TaskInputsExceededError";
  }
}

/** How a task is waited on: its pace, and what the request that created it was given. */
export interface FollowOptions {
  readonly pace: TaskPace;
  /** Send tasks/cancel when `signal` aborts. */
  readonly cancelOnAbort: boolean;
  readonly signal?: AbortSignal;
  /** Milliseconds for each tasks/get, tasks/update and tasks/cancel; default the session's. */
  readonly timeout?: number;
}

/**
 * What a caller of the wire wants done with a task the server may create, carried on its request's options (a
 * symbol-keyed member, which the session and transports pass along untouched).
 */
export interface TaskIntent {
  /**
   * requestAsTask and attachTask: told the wire's link before the request goes out; a CreateTaskResult then comes
   * back as it came (`resultType: "task"`), for the caller to follow.
   */
  readonly link?: (link: TaskLink) => void;
  /** How a task the wire follows to its end itself (a plain call) is waited on. */
  readonly follow?: Omit<FollowOptions, "signal" | "timeout">;
}

const INTENT: unique symbol = Symbol("io.modelcontextprotocol/tasks intent");

/** `options` carrying `intent` (a copy: the app's object is left alone). */
export function withTaskIntent(options: RequestOptions, intent: TaskIntent): RequestOptions {
  return Object.assign({}, options, { [INTENT]: intent });
}

/** The intent a request's options carry, if any. */
export function taskIntentOf(options: RequestOptions | undefined): TaskIntent | undefined {
  const intent: unknown = options === undefined ? undefined : (options as { [INTENT]?: unknown })[INTENT];
  return typeof intent === "object" && intent !== null ? (intent as TaskIntent) : undefined;
}

/** A task as the client sees it: its state in core Tasks' shape (what TaskHandle shows), and what its status carries. */
export interface TaskView {
  readonly state: TaskState;
  /** From tasks/get (the status's payload is inlined), not a CreateTaskResult (which carries none). */
  readonly detailed: boolean;
  readonly inputRequests?: JsonObject;
  readonly result?: JsonObject;
  readonly error?: JsonObject;
}

/**
 * The task in a CreateTaskResult (`detailed` false) or a tasks/get result (true), or the InvalidResultError naming
 * what is wrong. `ttlMs` and `pollIntervalMs` become core Tasks' `ttl` and `pollInterval`, so the app reads one shape.
 */
export function taskView(method: string, value: unknown, detailed: boolean): TaskView {
  const invalid = (pointer: string, message: string) =>
    new InvalidResultError(method, "", value, [{ pointer, message }]);
  if (!isPlainObject(value)) throw invalid("", "must be an object");
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = value;
  if (typeof taskId !== "string" || taskId === "") throw invalid("/taskId", "must be a non-empty string");
  if (typeof status !== "string" || !TASK_STATUSES.has(status))
    throw invalid("/status", `must be one of ${[...TASK_STATUSES].join(", ")}`);
  if (typeof createdAt !== "string") throw invalid("/createdAt", "must be a string");
  if (typeof lastUpdatedAt !== "string") throw invalid("/lastUpdatedAt", "must be a string");
  if (ttlMs !== undefined && ttlMs !== null && !isDuration(ttlMs))
    throw invalid("/ttlMs", "must be milliseconds or null");
  if (pollIntervalMs !== undefined && !isDuration(pollIntervalMs))
    throw invalid("/pollIntervalMs", "must be milliseconds");
  if (statusMessage !== undefined && typeof statusMessage !== "string")
    throw invalid("/statusMessage", "must be a string");
  const state: TaskState = {
    taskId,
    status: status as TaskStatus,
    createdAt,
    lastUpdatedAt,
    ttl: (ttlMs as number | null | undefined) ?? null,
  };
  if (statusMessage !== undefined) state.statusMessage = statusMessage;
  if (pollIntervalMs !== undefined) state.pollInterval = pollIntervalMs as number;
  if (!detailed) return { state, detailed };
  if (status === "input_required") {
    const asked = value.inputRequests;
    if (asked !== undefined && !isPlainObject(asked)) throw invalid("/inputRequests", "must be an object");
    return asked === undefined ? { state, detailed } : { state, detailed, inputRequests: asked };
  }
  if (status === "completed") {
    if (!isPlainObject(value.result)) throw invalid("/result", "a completed task carries its result");
    return { state, detailed, result: value.result };
  }
  if (status === "failed") {
    const error = value.error;
    if (!isPlainObject(error) || !Number.isInteger(error.code) || typeof error.message !== "string")
      throw invalid("/error", "a failed task carries its JSON-RPC error (code, message)");
    return { state, detailed, error };
  }
  return { state, detailed };
}

function isDuration(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/** Why the task's own requests still in flight are dropped; a constant, since abort() would build a DOMException. */
const SETTLED = "the task was settled";

/**
 * One task of the extension. Polling (`tasks/get` at the server's `pollIntervalMs` within the floor and ceiling) runs
 * while someone waits: `result()` or a status listener. Each `input_required` state's new input keys are answered
 * once, through the app's handlers, and sent with `tasks/update`; an input the client cannot answer cancels the task
 * and fails its result. The terminal state carries the outcome: the result, the JSON-RPC error, or cancelled.
 */
export class ExtensionTask<R> extends TaskWait<R, TaskState> implements TaskDriver<R> {
  readonly taskId: string;
  private view: TaskView;
  /** Input keys answered or being answered: the server lists a request until its answer lands, keys are never reused. */
  private readonly answered = new Set<string>();

  constructor(
    private readonly link: TaskLink | undefined,
    /** The request the task runs (tools/call), for its result's guard and in errors. */
    method: string,
    view: TaskView,
    options: FollowOptions,
  ) {
    super(method, { pace: options.pace, timeout: options.timeout, settledReason: SETTLED });
    this.taskId = view.state.taskId;
    this.view = view;
    this.stopWith(options.signal, options.cancelOnAbort);
    if (view.detailed && isTerminal(view.state.status)) this.settleFrom(view);
  }

  /**
   * The server answered at once, with no task: a task already completed with `result` (as the wire delivered it).
   * Its taskId is empty, and nothing is ever sent for it.
   */
  static answered<R>(method: string, result: R, options: FollowOptions): ExtensionTask<R> {
    const now = new Date().toISOString();
    const state: TaskState = { taskId: "", status: "completed", createdAt: now, lastUpdatedAt: now, ttl: null };
    const task = new ExtensionTask<R>(undefined, method, { state, detailed: false }, options);
    task.settle({ ok: true, value: result });
    return task;
  }

  get state(): TaskState {
    return this.view.state;
  }

  /** One tasks/get; a terminal state never changes, so it is not asked about again. */
  async refresh(): Promise<TaskState> {
    if (this.final) return this.state;
    this.update(await this.get(this.timeoutOptions()));
    return this.state;
  }

  /**
   * tasks/cancel. Its ack says only that the server heard it (cancellation is eventually consistent), so one tasks/get
   * follows: a task that ended otherwise first keeps that end; any other counts as cancelled here, with no more polls.
   */
  async cancel(): Promise<TaskState> {
    if (this.final) return this.state;
    await this.sendCancel();
    const seen = await this.get(this.timeoutOptions()).catch(() => undefined);
    if (seen !== undefined) this.update(seen);
    if (!this.final) this.update({ state: { ...this.state, status: "cancelled" }, detailed: true });
    return this.state;
  }

  /** Whether the state is terminal with its outcome known. */
  private get final(): boolean {
    return this.settled || (this.view.detailed && isTerminal(this.view.state.status));
  }

  protected next(): NextStep {
    const view = this.view;
    const status = view.state.status;
    const fresh = status === "input_required" ? this.unanswered(view) : [];
    if (fresh.length > 0) return this.answer(view.inputRequests!, fresh);
    // A CreateTaskResult carries no payload: one that ended or waits for input is looked at once, not after a pause.
    return !view.detailed && (isTerminal(status) || status === "input_required") ? "poll" : "pause";
  }

  protected async poll(options: RequestOptions): Promise<void> {
    this.update(await this.get(options));
  }

  protected sendCancel(): Promise<JsonObject> {
    return this.send(TASKS_CANCEL, { taskId: this.taskId }, this.timeoutOptions());
  }

  protected ended(): boolean {
    return isTerminal(this.state.status);
  }

  /** The app's handlers hold the stop signal while they answer, and may keep it: settling always stops them. */
  protected inFlight(): boolean {
    return true;
  }

  private unanswered(view: TaskView): string[] {
    const asked = view.inputRequests;
    return asked === undefined ? [] : Object.keys(asked).filter((key) => !this.answered.has(key));
  }

  /** Answers the new input keys through the app's handlers, all at once, and sends them in one tasks/update. */
  private async answer(requests: JsonObject, keys: readonly string[]): Promise<void> {
    const link = this.link!;
    if (this.answered.size + keys.length > link.maxInputs)
      return this.abandon(new TaskInputsExceededError(this.taskId, link.maxInputs));
    for (const key of keys) this.answered.add(key);
    const responses: JsonObject = {};
    try {
      const answers = await Promise.all(keys.map((key) => link.answer(key, requests[key], this.stopSignal)));
      keys.forEach((key, i) => (responses[key] = answers[i]!));
    } catch (error) {
      return this.abandon(error);
    }
    if (this.settled) return;
    try {
      await this.send(TASKS_UPDATE, { taskId: this.taskId, inputResponses: responses }, this.callOptions());
    } catch (error) {
      this.settle({ ok: false, error });
    }
  }

  /**
   * An input the client cannot answer (no handler: -32601 naming the method; invalid params; the handler failed)
   * ends the task: the server would wait for it until the ttl. It is cancelled first, then the result fails.
   */
  private async abandon(error: unknown): Promise<void> {
    if (this.settled) return;
    await this.sendCancel().catch(() => undefined);
    this.settle({ ok: false, error });
  }

  private async get(options: RequestOptions): Promise<TaskView> {
    const reply = await this.send(TASKS_GET, { taskId: this.taskId }, options);
    const view = taskView(TASKS_GET, reply, true);
    if (view.state.taskId !== this.taskId)
      throw new InvalidResultError(TASKS_GET, "", reply, [{ pointer: "/taskId", message: `is not ${this.taskId}` }]);
    return view;
  }

  private send(method: string, params: JsonObject, options: RequestOptions): Promise<JsonObject> {
    const link = this.link;
    // Only a task the server answered at once has no link, and it is final: nothing asks to send for it.
    if (link === undefined) return Promise.reject(new RpcError(ErrorCode.InternalError, `${method}: no task to ask`));
    return link.send(method, params, options);
  }

  /** Take a newer state in: a terminal one is final, an older report is ignored. */
  private update(next: TaskView): void {
    if (this.final) return;
    const previous = this.view.state;
    if (Date.parse(next.state.lastUpdatedAt) < Date.parse(previous.lastUpdatedAt)) return;
    this.view = next;
    if (next.state.status !== previous.status || next.state.statusMessage !== previous.statusMessage)
      this.notify(next.state);
    if (next.detailed && isTerminal(next.state.status)) this.settleFrom(next);
    this.wake();
  }

  /** The outcome a terminal tasks/get carries. */
  private settleFrom(view: TaskView): void {
    const status = view.state.status;
    if (status === "cancelled") return this.settle({ ok: false, error: new TaskCancelledError(view.state) });
    if (status === "failed") {
      const { code, message, data } = view.error!;
      return this.settle({ ok: false, error: new RpcError(code as number, message as string, data) });
    }
    try {
      this.settle({ ok: true, value: this.link!.complete(this.method, view.result!) as unknown as R });
    } catch (error) {
      this.settle({ ok: false, error });
    }
  }
}
