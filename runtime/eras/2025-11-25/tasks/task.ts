// One task a receiver runs: its state, outcome, waiting tasks/result calls, queued input requests, and the handler's context.
import { ErrorCode, RpcError, type JsonObject, type RequestId } from "../../../rpc/jsonrpc.js";
import type { PeerIdentity, RequestContext, RequestOptions, TraceContext } from "../../../rpc/peer.js";
import type { AuthGrant } from "../../../rpc/transport.js";
import type { DurableOperation } from "../../../durable/engine.js";
import type { ProgressToken } from "../../../rpc/operations.js";
import type { Session } from "../../../rpc/session/session.js";
import {
  CapabilityError,
  ConnectionClosedError,
  ProgressOrderError,
  RequestCancelledError,
} from "../../../rpc/errors.js";
import { hasCapability } from "../../../mcp/capabilities.js";
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

/**
 * A request the task's handler sends to the requestor (elicitation, sampling): on the core wire queued until a
 * tasks/result carries it; on the extension's, listed under its key in tasks/get until a tasks/update answers it.
 */
export interface InputRequest {
  /** Its key in the task's inputRequests (extension wire): unique over the task's life. */
  readonly key: string | undefined;
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

/**
 * Which wire the task was created on: core (2025-11-25: tasks/result carries its input requests, status
 * notifications follow it) or extension (2026-07-28's Tasks extension: tasks/get lists them, tasks/update answers).
 */
export type TaskWireKind = "core" | "extension";

/** The capability a client needs for each request a task may ask of it (what its envelope must declare). */
const ASK_CAPABILITIES: { readonly [method: string]: string } = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

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
  /** Made when the handler first reads its signal: most tasks never do, and a controller is a large part of a kept task. */
  private controller: AbortController | undefined = undefined;
  /** Why the task was stopped, once it was (cancelled, expired, shut down). */
  private stopReason: { readonly reason: unknown } | undefined = undefined;
  expiry: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The number in the key of the next input request (extension wire). */
  nextInputKey = 0;

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
    readonly wire: TaskWireKind = "core",
    /** Whose active and kept tasks it counts among (the limits per requestor); default its principal. */
    readonly requestor: string = principal,
  ) {
    this.createdAt = this.lastUpdatedAt = Date.now();
    this.session = session;
  }

  /**
   * The context its handler runs with, made from the request that created the task. The task does not keep it: once
   * the handler is done nothing else needs it, and a task is kept long after (for its result) in great numbers.
   */
  contextFor(origin: RequestContext, progressToken: ProgressToken | undefined): TaskContext {
    return new TaskContext(this, origin, progressToken);
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

  /** The signal its handler runs with: aborted once the task is stopped. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.stopReason !== undefined) this.controller.abort(this.stopReason.reason);
    }
    return this.controller.signal;
  }

  /** Stop the handler's work: its signal aborts with `reason` (now, or when it is first read). */
  stop(reason: unknown): void {
    if (this.stopReason !== undefined) return;
    this.stopReason = { reason };
    this.controller?.abort(reason);
  }

  /** Wake every tasks/result call waiting (the task ended, or was freed). */
  wakeAll(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter.wake();
  }

  /** The outstanding input requests by key, as tasks/get lists them (extension wire). */
  get inputRequests(): JsonObject | undefined {
    if (this.inputs.length === 0) return undefined;
    const out: JsonObject = {};
    for (const input of this.inputs) {
      if (input.key !== undefined) out[input.key] = { method: input.method, params: input.params };
    }
    return out;
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
  readonly peerIdentity?: PeerIdentity;
  /** The trace context of the request the task came from. */
  readonly trace?: TraceContext;
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
    if (origin.peerIdentity !== undefined) this.peerIdentity = origin.peerIdentity;
    if (origin.trace !== undefined) this.trace = origin.trace;
  }

  get taskId(): string {
    return this.task.taskId;
  }

  get state(): TaskState {
    return this.task.state;
  }

  get signal(): AbortSignal {
    return this.task.signal;
  }

  status(message: string): void {
    const task = this.task;
    if (task.terminal || task.freed || task.statusMessage === message) return;
    task.statusMessage = message;
    task.host.touched(task);
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    const task = this.task;
    // The extension carries no progress for tasks: tasks/get's statusMessage (ctx.task.status) says how it goes.
    if (this.progressToken === undefined || task.terminal || task.freed || task.wire === "extension")
      return Promise.resolve();
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
    const extension = task.wire === "extension";
    if (extension) {
      // The client's envelope said what it can answer; a request it cannot is refused here, as a round's would be.
      const capability = Object.hasOwn(ASK_CAPABILITIES, method) ? ASK_CAPABILITIES[method] : undefined;
      if (capability === undefined || !hasCapability(this.peerIdentity?.capabilities, capability))
        return Promise.reject(new CapabilityError(method, capability ?? method, "client"));
    }
    return new Promise<JsonObject>((resolve, reject) => {
      const input: InputRequest = {
        key: extension ? `input-${task.nextInputKey++}` : undefined,
        method,
        // The extension's inputRequests sit under their task: no related-task `_meta` is needed there.
        params: extension ? (params ?? {}) : withRelatedTask(params, task.taskId),
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
        else if (extension && at >= 0 && !task.terminal) task.host.touched(task);
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
      else if (extension) task.host.touched(task);
      task.host.pump(task);
    });
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    const task = this.task;
    // The extension has no channel to the requestor but tasks/get (its notifications are the task's own states).
    if (task.freed || task.wire === "extension") return Promise.resolve();
    task.host.notifyRequestor(task, method, withRelatedTask(params, task.taskId));
    return Promise.resolve();
  }
}

/** Whether a failed input request should wait for the next tasks/result instead of failing the handler's call. */
export function lostWithConnection(error: unknown): boolean {
  return error instanceof ConnectionClosedError;
}
