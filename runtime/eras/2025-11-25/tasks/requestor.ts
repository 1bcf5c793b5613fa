// The requestor side of tasks: send a request task-augmented and get a handle, or let the receiver's rules decide.
import { RpcError, isPlainObject, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { Peer, RequestOptions } from "../../../rpc/peer.js";
import { CapabilityError, LocalErrorCode } from "../../../rpc/errors.js";
import { ServerSession, hasCapability } from "../../../mcp/lifecycle.js";
import { ClientSession } from "../../../mcp/client-session.js";
import { limitOption } from "../../../rpc/limits.js";
import { OutboundOperation } from "../../../rpc/operations.js";
import { Session } from "../../../rpc/session/session.js";
import { TaskHandle, canObserve, readCreateTaskReply, readTaskState, type TaskWaitOptions } from "./handle.js";
import { DEFAULT_MAX_TOOL_LIST_PAGES, DEFAULT_MAX_TRACKED_TOOLS, TOOL_SUPPORT } from "./requestor-tools.js";
import { TASKS_GET, TASKS_RESULT, TASK_STATUS_NOTIFICATION, type TaskMetadata, type TaskState } from "./protocol.js";
import { attachExtensionTask, requestExtensionTask, requestOrExtensionTask } from "../../2026-07-28/client-tasks.js";

/** Status notifications kept while a task-augmented request is out (other tasks' too: its id is not known yet). */
const MAX_EARLY_STATES = 64;

export {
  TaskHandle,
  TaskCancelledError,
  DEFAULT_TASK_POLL_INTERVAL_MS,
  DEFAULT_MIN_TASK_POLL_INTERVAL_MS,
  DEFAULT_MAX_TASK_POLL_INTERVAL_MS,
  type TaskWaitOptions,
} from "./handle.js";
export { DEFAULT_MAX_TOOL_LIST_PAGES, DEFAULT_MAX_TRACKED_TOOLS, type ToolTaskSupport } from "./requestor-tools.js";

const TOOLS_CALL = "tools/call";

/**
 * Options of a task-augmented request. The RequestOptions (timeout, signal, onProgress...) apply to the request
 * that creates the task; `signal` and `timeout` also to the waiting (see TaskWaitOptions), and `onProgress` keeps
 * receiving the progress the receiver sends for the task until it ends (the spec keeps the token valid that long).
 */
export interface TaskRequestOptions extends RequestOptions, TaskWaitOptions {
  /** Sent as `params.task` (e.g. `{ ttl: 60_000 }`). */
  task: TaskMetadata;
  /** Milliseconds between polls when the receiver suggests no pollInterval; default 1 000. */
  pollIntervalMs?: number;
}

/** Options of a call that may run as a task (requestOrTask). */
export interface RequestOrTaskOptions extends RequestOptions, Omit<TaskWaitOptions, "signal" | "timeout"> {
  /** `params.task` when the call runs as a task; default `{}` (the receiver's own ttl). */
  task?: TaskMetadata;
  /**
   * When the call runs as a task and `signal` aborts: also cancel the task (`tasks/cancel`), as aborting a plain
   * call cancels it. Default true.
   */
  cancelOnAbort?: boolean;
  /** tools/list pages read at most to learn a tool's taskSupport when no list seen so far named it; default 50. */
  maxToolListPages?: number;
}

/** The capability the receiver must declare for `method` to be task-augmented: tasks.requests.<method, dotted>. */
export function taskCapability(method: string): string {
  return `tasks.requests.${method.replaceAll("/", ".")}`;
}

/** Whether `peer` is a client speaking MCP 2026-07-28, whose tasks are the Tasks extension's (its own module). */
function speaksExtension(peer: Peer): boolean {
  return peer instanceof ClientSession && peer.era === "modern";
}

/** The capabilities the receiver of our requests on `peer` declared, when the peer is a lifecycle session. */
function receiver(peer: Peer): { capabilities: JsonObject | undefined; side: "server" | "client" } | undefined {
  if (peer instanceof ClientSession) return { capabilities: peer.serverCapabilities, side: "server" };
  if (peer instanceof ServerSession) return { capabilities: peer.clientCapabilities, side: "client" };
  return undefined;
}

/**
 * Start noting each tool's `execution.taskSupport` from the tools/list results the client session receives (a
 * no-op on other peers, and when already watching). requestOrTask does it on first use; a client that calls this
 * as soon as it connects spares requestOrTask the tools/list it would otherwise send to learn about a tool.
 * `maxTools` bounds how many tools it remembers (default 10 000); tools past it are called plainly.
 */
export function watchToolTaskSupport(peer: Peer, options: { maxTools?: number } = {}): void {
  if (!(peer instanceof ClientSession)) return;
  const tracker = peer.state(TOOL_SUPPORT);
  if (options.maxTools !== undefined)
    tracker.maxTools = limitOption("maxTools", options.maxTools, DEFAULT_MAX_TRACKED_TOOLS);
}

/**
 * Sends `method` task-augmented (`params.task`); resolves with the handle once the receiver created the task.
 * On a lifecycle session whose peer did not declare tasks.requests.<method>, rejects with CapabilityError
 * without sending (the spec: requestors SHOULD only augment what the receiver declared). On a client speaking MCP
 * 2026-07-28 the server decides (the Tasks extension; `task` is not sent): the handle follows the task it made, or is
 * already completed with the answer it gave at once.
 */
export async function requestAsTask<R>(
  peer: Peer,
  method: string,
  params: JsonObject | undefined,
  options: TaskRequestOptions,
): Promise<TaskHandle<R>> {
  if (speaksExtension(peer)) {
    const { task: _decidedByTheServer, ...rest } = options;
    return requestExtensionTask<R>(peer, method, params, rest);
  }
  const side = receiver(peer);
  const capability = taskCapability(method);
  if (side !== undefined && !hasCapability(side.capabilities, capability))
    throw new CapabilityError(method, capability, side.side);
  watchToolTaskSupport(peer);
  const {
    task,
    pollIntervalMs,
    minPollIntervalMs,
    maxPollIntervalMs,
    cancelOnAbort,
    resultTimeout,
    ...requestOptions
  } = options;
  const wire: JsonObject = { ...params, task: { ...task } };
  // The session forgets the progress token once the CreateTaskResult arrives; the task keeps it (see below).
  const token = requestOptions.onProgress !== undefined && peer instanceof Session ? peer.nextRequestId : undefined;
  // A status notification may overtake the CreateTaskResult (over HTTP it travels on another stream): what arrives
  // while the request is out is kept, and the task's own states go to its handle, so a task that ended at once is
  // not waited on for a poll interval.
  const early: TaskState[] = [];
  const stopEarly = canObserve(peer)
    ? peer.observe(TASK_STATUS_NOTIFICATION, (notified) => {
        const state = readTaskState(notified);
        if (state !== undefined && early.length < MAX_EARLY_STATES) early.push(state);
      })
    : undefined;
  let reply: JsonObject;
  try {
    reply = await peer.request(method, wire, requestOptions);
  } finally {
    stopEarly?.();
  }
  const handle = new TaskHandle<R>(peer, method, readCreateTaskReply(reply, method), {
    pollIntervalMs,
    minPollIntervalMs,
    maxPollIntervalMs,
    cancelOnAbort,
    resultTimeout,
    signal: requestOptions.signal,
    timeout: requestOptions.timeout,
  });
  if (token !== undefined && peer instanceof Session) keepProgress(peer, token, method, requestOptions, handle);
  for (const state of early) handle.noteState(state);
  return handle;
}

/**
 * A handle on a task created earlier, e.g. before a reconnection or by another process: reads its state with
 * `tasks/get` (the receiver's error, -32602 for an unknown or expired id, passes through). `method` names the
 * original request in errors; default "tasks/result" (on MCP 2026-07-28 "tools/call", whose result guard it then meets).
 */
export async function attachTask<R>(
  peer: Peer,
  taskId: string,
  options: TaskWaitOptions & { method?: string } = {},
): Promise<TaskHandle<R>> {
  if (speaksExtension(peer)) return attachExtensionTask<R>(peer, taskId, options);
  const { method, ...waitOptions } = options;
  const { timeout, signal } = waitOptions;
  const requestOptions: RequestOptions = {};
  if (timeout !== undefined) requestOptions.timeout = timeout;
  if (signal !== undefined) requestOptions.signal = signal;
  const reply = await peer.request(TASKS_GET, { taskId }, requestOptions);
  const task = readTaskState(reply);
  if (task === undefined || task.taskId !== taskId)
    throw new RpcError(LocalErrorCode.InvalidResult, `Invalid result for ${TASKS_GET}: not task ${taskId}`, {
      result: reply,
    });
  return new TaskHandle<R>(peer, method ?? TASKS_RESULT, { task }, waitOptions);
}

/** Route the task's progress (same token as the creating request) to onProgress until the handle is done. */
function keepProgress(
  session: Session,
  token: string | number,
  method: string,
  options: RequestOptions,
  handle: Pick<TaskHandle<unknown>, "addCleanup">,
): void {
  const registry = session.operations.byProgressToken;
  if (registry.has(token)) return;
  const listener = new OutboundOperation(token, method);
  listener.onProgress = options.onProgress;
  registry.set(token, listener);
  handle.addCleanup(() => {
    if (registry.get(token) === listener) registry.delete(token);
  });
}

/**
 * A plain request, unless the receiver requires a task for it: a tools/call of a tool whose
 * `execution.taskSupport` is "required" on a server declaring tasks.requests.tools.call then runs as a task, and
 * this resolves with the task's result (what the plain call would have returned). The client learns each tool's
 * taskSupport from the tools/list results it receives; when none named the tool yet it reads the list once.
 * Against a server without the capability, or on a peer that is not a client session, always a plain request. On a
 * client speaking MCP 2026-07-28 a plain request whose answer may be a task of the Tasks extension, followed to its end.
 */
export async function requestOrTask<R>(
  peer: Peer,
  method: string,
  params: JsonObject | undefined,
  options: RequestOrTaskOptions = {},
): Promise<R> {
  const maxPages = limitOption("maxToolListPages", options.maxToolListPages, DEFAULT_MAX_TOOL_LIST_PAGES);
  if (speaksExtension(peer)) {
    const { task: _decidedByTheServer, ...rest } = options;
    return requestOrExtensionTask<R>(peer, method, params, rest);
  }
  if (await mustRunAsTask(peer, method, params, maxPages)) {
    const { task, ...rest } = options;
    const handle = await requestAsTask<R>(peer, method, params, {
      ...rest,
      task: task ?? {},
      cancelOnAbort: options.cancelOnAbort ?? true,
    });
    return handle.result();
  }
  return (await peer.request(method, params, plainOptions(options))) as unknown as R;
}

/** The options a plain request understands. */
function plainOptions(options: RequestOrTaskOptions): RequestOptions {
  const {
    task,
    cancelOnAbort,
    maxToolListPages,
    pollIntervalMs,
    minPollIntervalMs,
    maxPollIntervalMs,
    resultTimeout,
    ...plain
  } = options;
  return plain;
}

async function mustRunAsTask(
  peer: Peer,
  method: string,
  params: JsonObject | undefined,
  maxToolListPages: number,
): Promise<boolean> {
  // Only tools declare per-request task support; other receivers that require a task say so with an error.
  if (method !== TOOLS_CALL || !(peer instanceof ClientSession)) return false;
  if (!hasCapability(peer.serverCapabilities, taskCapability(method))) return false;
  const name = isPlainObject(params) ? params.name : undefined;
  if (typeof name !== "string") return false;
  return (await peer.state(TOOL_SUPPORT).lookup(name, maxToolListPages)) === "required";
}
