// One task a receiver runs: its state, outcome, waiting tasks/result calls, queued input requests, and the handler's context.
import { ErrorCode, RpcError, type JsonObject, type RequestId } from "../../../rpc/jsonrpc.js";
import type { RequestContext, RequestOptions } from "../../../rpc/peer.js";
import type { AuthGrant } from "../../../rpc/transport.js";
import type { DurableOperation } from "../../../durable/engine.js";
import type { ProgressToken } from "../../../rpc/operations.js";
import type { Session } from "../../../rpc/session/session.js";
import { ConnectionClosedError, ProgressOrderError, RequestCancelledError } from "../../../rpc/errors.js";
import { PROGRESS_NOTIFICATION } from "../../../rpc/progress.js";
import { RELATED_TASK_META, isTerminal, type TaskState, type TaskStatus } from "./protocol.js";

/** What a task's handler can do besides what every request handler can (McpContext exposes it as `ctx.task`). */
export interface TaskControl {
  readonly taskId: string;
  /** The task's state as tasks/get reports it now. */
  readonly state: TaskState;
  /** Set the task's statusMessage (requestors see it in tasks/get and status notifications). */
  status(message: string): void;
}

/** A tasks/result call waiting for the task to end: input requests of the task go out through it. */
export interface ResultWaiter {
  readonly context: RequestContext;
  readonly session: Session;
  readonly wake: () => void;
}

/** A request the task's handler sends to the requestor (elicitation, sampling), queued until a tasks/result carries it. */
export interface InputRequest {
  readonly method: string;
  readonly params: JsonObject;
  readonly options: RequestOptions | undefined;
  readonly resolve: (result: JsonObject) => void;
  readonly reject: (error: unknown) => void;
  /** Sent through a tasks/result call and not answered yet. */
  inFlight: boolean;
}

/** What the receiver does for a task (the task calls back into it for every change). */
export interface TaskHost {
  /** Move the task to `to` (statusMessage `message`) when the status machine allows it; false when it does not. */
  transition(task: Task, to: TaskStatus, message?: string): boolean;
  /** The state changed without a new status (statusMessage): record it and tell the requestor. */
  touched(task: Task): void;
  /** Send queued input requests through waiting tasks/result calls. */
  pump(task: Task): void;
  /** A notification to the requestor's current connection. */
  notifyRequestor(task: Task, method: string, params: JsonObject): void;
}

/** `params` with the related-task `_meta` of `taskId` added. */
export function withRelatedTask(params: JsonObject | undefined, taskId: string): JsonObject {
  const meta = params?._meta;
  const base = typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as JsonObject) : {};
  return { ...params, _meta: { ...base, [RELATED_TASK_META]: { taskId } } };
}

export class Task implements DurableOperation {
  status: TaskStatus = "working";
  statusMessage: string | undefined = undefined;
  readonly createdAt: number;
  lastUpdatedAt: number;
  /** The answer tasks/result gives once the task is terminal: a result, or the JSON-RPC error. */
  result: JsonObject | undefined = undefined;
  error: RpcError | undefined = undefined;
  freed = false;
  /** The connection the requestor last used for this task: notifications and progress go there. */
  session: Session;
  readonly waiters = new Set<ResultWaiter>();
  readonly inputs: InputRequest[] = [];
  readonly abort = new AbortController();
  expiry: ReturnType<typeof setTimeout> | undefined = undefined;
  readonly context: TaskContext;

  constructor(
    readonly host: TaskHost,
    /** The task id: a minted token, so it is unguessable. */
    readonly taskId: string,
    readonly key: string,
    readonly keptToken: string,
    /** Who may see it: the principal, else the session, as the receiver names them. */
    readonly principal: string,
    /** The client it counts against (see maxTasksPerPrincipal): the principal, else the address, else the session. */
    readonly client: string,
    /** Order of creation among all tasks of the receiver (tasks/list pages by it). */
    readonly seq: number,
    readonly method: string,
    readonly ttl: number | null,
    readonly pollInterval: number | undefined,
    session: Session,
    origin: RequestContext,
    progressToken: ProgressToken | undefined,
  ) {
    this.createdAt = this.lastUpdatedAt = Date.now();
    this.session = session;
    this.context = new TaskContext(this, origin, progressToken);
  }

  get terminal(): boolean {
    return isTerminal(this.status);
  }

  /** The schema's Task. */
  get state(): TaskState {
    const state: TaskState = {
      taskId: this.taskId,
      status: this.status,
      createdAt: new Date(this.createdAt).toISOString(),
      lastUpdatedAt: new Date(this.lastUpdatedAt).toISOString(),
      ttl: this.ttl,
    };
    if (this.statusMessage !== undefined) state.statusMessage = this.statusMessage;
    if (this.pollInterval !== undefined) state.pollInterval = this.pollInterval;
    return state;
  }

  /** Wake every tasks/result call waiting (the task ended, or was freed). */
  wakeAll(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter.wake();
  }

  /** Fail every queued or unanswered input request (the task ended). */
  dropInputs(reason: unknown): void {
    const inputs = this.inputs.splice(0);
    for (const input of inputs) input.reject(reason);
  }
}

/**
 * The RequestContext a task's handler runs with: detached from the request that created the task (which was
 * answered with CreateTaskResult at once). Its signal fires on tasks/cancel, ttl expiry or shutdown; progress
 * keeps the original progress token and goes to the requestor's current connection; requests to the requestor
 * move the task to input_required and travel through its tasks/result calls.
 */
export class TaskContext implements RequestContext, TaskControl {
  readonly requestId: RequestId;
  readonly method: string;
  readonly principal?: string;
  readonly auth?: AuthGrant;
  readonly sessionId?: string;
  readonly clientAddress?: string;
  private lastProgress = -Infinity;

  constructor(
    private readonly task: Task,
    origin: RequestContext,
    private readonly progressToken: ProgressToken | undefined,
  ) {
    this.requestId = origin.requestId;
    this.method = origin.method;
    if (origin.principal !== undefined) this.principal = origin.principal;
    if (origin.auth !== undefined) this.auth = origin.auth;
    if (origin.sessionId !== undefined) this.sessionId = origin.sessionId;
    if (origin.clientAddress !== undefined) this.clientAddress = origin.clientAddress;
  }

  get taskId(): string {
    return this.task.taskId;
  }

  get state(): TaskState {
    return this.task.state;
  }

  get signal(): AbortSignal {
    return this.task.abort.signal;
  }

  status(message: string): void {
    const task = this.task;
    if (task.terminal || task.freed || task.statusMessage === message) return;
    task.statusMessage = message;
    task.host.touched(task);
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    const task = this.task;
    if (this.progressToken === undefined || task.terminal || task.freed) return Promise.resolve();
    if (typeof progress !== "number" || !Number.isFinite(progress))
      return Promise.reject(new TypeError("Progress must be a finite number"));
    if (progress <= this.lastProgress) return Promise.reject(new ProgressOrderError(progress, this.lastProgress));
    this.lastProgress = progress;
    const params: JsonObject = { progressToken: this.progressToken, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    task.host.notifyRequestor(task, PROGRESS_NOTIFICATION, params);
    return Promise.resolve();
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    const task = this.task;
    if (task.terminal || task.freed)
      return Promise.reject(new RpcError(ErrorCode.InvalidRequest, `Task is ${task.status}: it cannot ask for input`));
    return new Promise<JsonObject>((resolve, reject) => {
      const input: InputRequest = {
        method,
        params: withRelatedTask(params, task.taskId),
        options,
        inFlight: false,
        resolve: (result) => settle(() => resolve(result)),
        reject: (error) => settle(() => reject(error)),
      };
      const settle = (then: () => void): void => {
        const at = task.inputs.indexOf(input);
        if (at >= 0) task.inputs.splice(at, 1);
        // Answered: the task works again once nothing else waits for input.
        if (task.inputs.length === 0 && task.status === "input_required") task.host.transition(task, "working");
        then();
      };
      const signal = options?.signal;
      if (signal !== undefined) {
        if (signal.aborted) return reject(new RequestCancelledError(method, signal.reason));
        signal.addEventListener("abort", () => input.reject(new RequestCancelledError(method, signal.reason)), {
          once: true,
        });
      }
      task.inputs.push(input);
      if (task.status === "working") task.host.transition(task, "input_required");
      task.host.pump(task);
    });
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    const task = this.task;
    if (task.freed) return Promise.resolve();
    task.host.notifyRequestor(task, method, withRelatedTask(params, task.taskId));
    return Promise.resolve();
  }
}

/** Whether a failed input request should wait for the next tasks/result instead of failing the handler's call. */
export function lostWithConnection(error: unknown): boolean {
  return error instanceof ConnectionClosedError;
}
