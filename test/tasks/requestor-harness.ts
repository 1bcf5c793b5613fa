// A scripted task receiver on a raw server session (the test drives each task's status), and a client wired to it.
import { ErrorCode, RpcError, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { Session } from "../../runtime/rpc/session/session.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { sessionKit, type ConnectOptions, type ConnectedPair } from "../kit/sessions.js";
import {
  RELATED_TASK_META,
  TASK_STATUS_NOTIFICATION,
  canTransition,
  isTerminal,
  type TaskState,
  type TaskStatus,
} from "../../runtime/eras/2025-11-25/tasks/protocol.js";

export const TASK_CAPABILITIES: JsonObject = {
  tools: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};

export type TaskOutcome = { result: JsonObject } | { error: { code: number; message: string; data?: unknown } };

/** What the receiver keeps of one task. */
export interface ScriptedTask {
  state: TaskState;
  params: JsonObject;
  outcome?: TaskOutcome;
  /** Settles every tasks/result waiting on the task. */
  ended: Promise<void>;
  end: () => void;
}

export interface ToolEntry {
  name: string;
  taskSupport?: "required" | "optional" | "forbidden";
}

/** A receiver whose tasks move only when the test says so; counts every tasks/* request. */
export class ScriptedReceiver {
  readonly tasks = new Map<string, ScriptedTask>();
  readonly calls = { create: 0, plain: 0, get: 0, result: 0, cancel: 0, list: 0, toolsList: 0 };
  /** The params of every request of the task-augmentable method, in order. */
  readonly received: JsonObject[] = [];
  /** The params of every tasks/get, tasks/result and tasks/cancel, in order. */
  readonly taskRequests: (JsonObject | undefined)[] = [];
  /** pollInterval the receiver suggests; undefined for none. */
  pollInterval: number | undefined = 5;
  /** Send notifications/tasks/status on each change. */
  notify = false;
  /** Runs on each tasks/get before it is answered (a test advances the task from here). */
  onGet: ((task: ScriptedTask) => void) | undefined = undefined;
  /** Runs when tasks/result arrives, with the request's context (a test asks for input from here). */
  onResult: ((task: ScriptedTask, context: RequestContext) => Promise<void> | void) | undefined = undefined;
  /** Runs when a task is created. */
  onCreate: ((task: ScriptedTask, context: RequestContext) => void) | undefined = undefined;
  tools: ToolEntry[] = [];
  /** tools/list page size (cursor = index of the next tool). */
  pageSize = 100;
  private next = 0;
  private server: Session | undefined;

  /** Serve `method` (task-augmentable) and tasks/* on `server` (a client session, when the server is the requestor). */
  install(server: Session, method = "tools/call"): void {
    this.server = server;
    server.onRequest(method, (params, context) => {
      const p = params ?? {};
      this.received.push(p);
      const tool = this.tools.find((t) => t.name === p.name);
      if (p.task === undefined) {
        if (tool?.taskSupport === "required") throw new RpcError(ErrorCode.MethodNotFound, "Tool requires a task");
        this.calls.plain++;
        return { content: [{ type: "text", text: `plain ${String(p.name)}` }] };
      }
      this.calls.create++;
      const task = this.create(p);
      this.onCreate?.(task, context);
      return { task: task.state };
    });
    server.onRequest("tools/list", (params) => {
      this.calls.toolsList++;
      const start = typeof params?.cursor === "string" ? Number(params.cursor) : 0;
      const page = this.tools.slice(start, start + this.pageSize).map((t) => ({
        name: t.name,
        inputSchema: { type: "object" },
        ...(t.taskSupport === undefined ? {} : { execution: { taskSupport: t.taskSupport } }),
      }));
      const end = start + this.pageSize;
      return end < this.tools.length ? { tools: page, nextCursor: String(end) } : { tools: page };
    });
    server.onRequest("tasks/get", (params) => {
      this.calls.get++;
      this.taskRequests.push(params);
      const task = this.find(params);
      this.onGet?.(task);
      return { ...task.state };
    });
    server.onRequest("tasks/result", async (params, context) => {
      this.calls.result++;
      this.taskRequests.push(params);
      const task = this.find(params);
      await this.onResult?.(task, context);
      await task.ended;
      const outcome = task.outcome!;
      if ("error" in outcome) throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
      return { ...outcome.result, _meta: { [RELATED_TASK_META]: { taskId: task.state.taskId } } };
    });
    server.onRequest("tasks/cancel", (params) => {
      this.calls.cancel++;
      this.taskRequests.push(params);
      const task = this.find(params);
      if (isTerminal(task.state.status))
        throw new RpcError(ErrorCode.InvalidParams, `Cannot cancel task: already ${task.state.status}`);
      this.move(task, "cancelled", "Cancelled by request");
      task.outcome = { error: { code: ErrorCode.InvalidRequest, message: "Task was cancelled" } };
      task.end();
      return { ...task.state };
    });
  }

  private create(params: JsonObject): ScriptedTask {
    const now = new Date().toISOString();
    const ttl = (params.task as JsonObject).ttl;
    const state: TaskState = {
      taskId: `task-${++this.next}`,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttl: typeof ttl === "number" ? ttl : 60_000,
    };
    if (this.pollInterval !== undefined) state.pollInterval = this.pollInterval;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const task: ScriptedTask = { state, params, ended, end };
    this.tasks.set(state.taskId, task);
    return task;
  }

  private find(params: JsonObject | undefined): ScriptedTask {
    const task = typeof params?.taskId === "string" ? this.tasks.get(params.taskId) : undefined;
    if (task === undefined) throw new RpcError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
    return task;
  }

  /** The only task created so far. */
  get only(): ScriptedTask {
    const [task, ...more] = this.tasks.values();
    if (task === undefined || more.length > 0) throw new Error(`expected one task, have ${this.tasks.size}`);
    return task;
  }

  /**
   * Change a task's status as the spec's state machine allows, or only its message (a test asking for another
   * change is a test bug).
   */
  move(task: ScriptedTask, status: TaskStatus, statusMessage?: string): void {
    const from = task.state.status;
    if (!canTransition(from, status) && (from !== status || isTerminal(from)))
      throw new Error(`${task.state.status} -> ${status} not allowed`);
    const state: TaskState = { ...task.state, status, lastUpdatedAt: new Date().toISOString() };
    if (statusMessage === undefined) delete state.statusMessage;
    else state.statusMessage = statusMessage;
    task.state = state;
    if (this.notify) void this.server?.notify(TASK_STATUS_NOTIFICATION, { ...state }).catch(() => undefined);
  }

  complete(task: ScriptedTask, result: JsonObject, status: "completed" | "failed" = "completed"): void {
    this.move(task, status);
    task.outcome = { result };
    task.end();
  }

  fail(task: ScriptedTask, error: { code: number; message: string; data?: unknown }): void {
    this.move(task, "failed", error.message);
    task.outcome = { error };
    task.end();
  }
}

/** The generated method tables, as a client session is wired with them. */
export const clientWiring = { inbound: serverToClient, outbound: clientToServer, isMessage };
/** The generated method tables, as a server session is wired with them. */
export const serverWiring = { inbound: clientToServer, outbound: serverToClient, isMessage };
const kit = sessionKit({ clientToServer, serverToClient, isMessage });

/** A client session talking to `receiver` over an in-memory pair; `capabilities` replace the receiver's default. */
export async function connectToReceiver(
  receiver: ScriptedReceiver,
  options: { capabilities?: JsonObject } & Omit<ConnectOptions, "setup"> = {},
): Promise<ConnectedPair> {
  return kit.connectedPair({
    ...options,
    server: { capabilities: options.capabilities ?? TASK_CAPABILITIES, ...options.server },
    setup: (server) => receiver.install(server),
  });
}
