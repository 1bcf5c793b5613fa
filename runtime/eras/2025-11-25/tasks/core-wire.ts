// Core Tasks' wire (MCP 2025-11-25) over the one task receiver: tasks/get|result|list|cancel, CreateTaskResult's `task`, input requests carried by tasks/result, status notifications.
import { Buffer } from "node:buffer";
import { ErrorCode, RpcError, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import type { Session } from "../../../rpc/session/session.js";
import {
  MODEL_IMMEDIATE_RESPONSE_META,
  RELATED_TASK_META,
  TASKS_RESULT,
  TASK_STATUS_NOTIFICATION,
  type CreateTaskReply,
  type TaskState,
} from "./protocol.js";
import { TASK_REQUESTS } from "./methods.js";
import { lostWithConnection, type ResultWaiter, type Task } from "./task.js";
import type { TaskCore } from "./receiver.js";

/**
 * What core Tasks adds to the receiver for the tasks created on its wire. The receiver owns the tasks; this answers
 * the 2025-11-25 requests about them and carries their input requests and notifications to the requestor.
 */
export class CoreTaskWire {
  constructor(
    private readonly core: TaskCore,
    /** Send notifications/tasks/status to the requestor's connection on every change. */
    private readonly statusNotifications: boolean,
  ) {}

  /** CreateTaskResult: the task, and the model-immediate-response text when the server gave one. */
  created(task: Task, immediateResponse: string | undefined): JsonObject {
    const reply: CreateTaskReply = { task: task.state };
    if (immediateResponse !== undefined) reply._meta = { [MODEL_IMMEDIATE_RESPONSE_META]: immediateResponse };
    return reply;
  }

  /** Whether a request's own result fails its task (a tool result with isError does, as the spec says). */
  fails(method: string, result: JsonObject): boolean {
    const kind = Object.hasOwn(TASK_REQUESTS, method) ? TASK_REQUESTS[method] : undefined;
    return kind?.failed?.(result) === true;
  }

  /** The task changed: its requestor's connection hears of it. */
  changed(task: Task, state: TaskState): void {
    if (this.statusNotifications) this.core.send(task.session, TASK_STATUS_NOTIFICATION, state);
  }

  // ---- tasks/* ----

  get(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject {
    return this.find(session, params, context).state;
  }

  async result(session: Session, params: JsonObject | undefined, context: RequestContext): Promise<JsonObject> {
    let task = this.find(session, params, context);
    while (!task.terminal) {
      const waiting = task;
      await new Promise<void>((resolve) => {
        const waiter: ResultWaiter = {
          context,
          session,
          wake: () => {
            context.signal.removeEventListener("abort", waiter.wake);
            waiting.waiters.delete(waiter);
            resolve();
          },
        };
        waiting.waiters.add(waiter);
        context.signal.addEventListener("abort", waiter.wake, { once: true });
        this.pump(waiting);
      });
      if (context.signal.aborted) throw new RequestCancelledError(TASKS_RESULT, context.signal.reason);
      // Freed while waiting (its ttl ended): unknown from now on.
      task = this.find(session, params, context);
    }
    if (task.error !== undefined) throw task.error;
    const result = task.result ?? {};
    const meta = typeof result._meta === "object" && result._meta !== null ? (result._meta as JsonObject) : {};
    return { ...result, _meta: { ...meta, [RELATED_TASK_META]: { taskId: task.taskId } } };
  }

  list(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject {
    const owner = this.core.requestorOf(session, context);
    let after = 0;
    const cursor = params?.cursor;
    if (cursor !== undefined) {
      const decoded = typeof cursor === "string" ? Buffer.from(cursor, "base64url").toString("latin1") : "";
      if (!/^t[1-9][0-9]{0,15}$/.test(decoded)) throw new RpcError(ErrorCode.InvalidParams, "Invalid cursor");
      after = Number(decoded.slice(1));
    }
    const tasks: JsonObject[] = [];
    let nextCursor: string | undefined = undefined;
    const pageSize = this.core.pageSize;
    for (const task of this.core.tasksOf(owner)) {
      if (task.seq <= after || task.freed || task.wire !== "core") continue;
      if (tasks.length === pageSize) {
        nextCursor = Buffer.from(`t${task.seq - 1}`, "latin1").toString("base64url");
        break;
      }
      tasks.push(task.state);
      task.session = session;
    }
    return nextCursor === undefined ? { tasks } : { tasks, nextCursor };
  }

  cancel(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject {
    const task = this.find(session, params, context);
    if (task.terminal)
      throw new RpcError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${task.status}'`);
    this.core.cancel(task, "The task was cancelled by request.");
    return task.state;
  }

  // ---- input requests and notifications ----

  /** Send queued input requests through the tasks/result calls waiting on the task (first one first). */
  pump(task: Task): void {
    for (const input of task.inputs) {
      if (input.inFlight) continue;
      const waiter = task.waiters.values().next();
      if (waiter.done === true) return;
      const through = waiter.value;
      input.inFlight = true;
      through.context.request(input.method, input.params, input.options).then(input.resolve, (error: unknown) => {
        input.inFlight = false;
        // The connection went away under it: the next tasks/result carries it again.
        if (lostWithConnection(error) && !task.terminal && !task.freed && task.inputs.includes(input)) {
          task.waiters.delete(through);
          this.pump(task);
          return;
        }
        input.reject(error);
      });
    }
  }

  /**
   * A tasks/result on another node waits for `task`: `through` becomes one of its waiting calls (input requests
   * and notifications go through it). Returns the function that removes it, or undefined when the task ended.
   */
  attach(task: Task, through: RequestContext): (() => void) | undefined {
    if (task.terminal) return undefined;
    const waiter: ResultWaiter = {
      context: through,
      session: task.session,
      wake: () => void task.waiters.delete(waiter),
    };
    task.waiters.add(waiter);
    this.pump(task);
    return waiter.wake;
  }

  /** A notification to the requestor: through a waiting tasks/result when there is one (its stream), else its session. */
  notifyRequestor(task: Task, method: string, params: JsonObject): void {
    const waiter = task.waiters.values().next();
    if (waiter.done !== true) {
      waiter.value.context.notify(method, params).catch(() => undefined);
      return;
    }
    this.core.send(task.session, method, params);
  }

  /** The task `params.taskId` names for this requestor; any miss is the same -32602. */
  private find(session: Session, params: JsonObject | undefined, context: RequestContext): Task {
    const task = this.core.engine.find(params?.taskId, this.core.requestorOf(session, context));
    if (task === undefined || task.wire !== "core") throw this.core.unknown();
    // Notifications and input requests now follow the requestor to this connection.
    task.session = session;
    return task;
  }
}
