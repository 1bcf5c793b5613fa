// The requestor's calls (requestAsTask, requestOrTask, attachTask) on a client speaking MCP 2026-07-28, where tasks are the Tasks extension's: the same TaskHandle, followed on that wire.
import { RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import { LocalErrorCode } from "../../rpc/errors.js";
import type { Peer, RequestOptions } from "../../rpc/peer.js";
import { TaskHandle, type TaskWaitOptions } from "../2025-11-25/tasks/handle.js";
import type { CreateTaskReply } from "../2025-11-25/tasks/protocol.js";
import {
  ExtensionTask,
  TASKS_GET,
  TaskPace,
  taskView,
  withTaskIntent,
  type FollowOptions,
  type TaskLink,
} from "./client-task.js";

/** The one request the extension makes tasks of (what an attached task ran, unless the app names another). */
const TOOLS_CALL = "tools/call";

/** The options requestAsTask passes on (its `task` has no counterpart here: the server alone decides). */
export type ExtensionTaskOptions = RequestOptions & TaskWaitOptions;

/** requestOrTask's options, less its `task`, which means nothing on this wire. */
export type ExtensionCallOptions = RequestOptions &
  Omit<TaskWaitOptions, "signal" | "timeout"> & { cancelOnAbort?: boolean; maxToolListPages?: number };

/**
 * `method` sent as is (the envelope declares the extension); resolves with a handle on the task the server made of
 * it, or, when it answered at once, on a task already completed with that answer (empty taskId, nothing to poll).
 */
export async function requestExtensionTask<R>(
  peer: Peer,
  method: string,
  params: JsonObject | undefined,
  options: ExtensionTaskOptions,
): Promise<TaskHandle<R>> {
  const {
    pollIntervalMs,
    minPollIntervalMs,
    maxPollIntervalMs,
    cancelOnAbort,
    resultTimeout: _noBlockingResult,
    ...requestOptions
  } = options;
  const wait: TaskWaitOptions = { pollIntervalMs, minPollIntervalMs, maxPollIntervalMs, cancelOnAbort };
  const follow = followOf(wait, cancelOnAbort === true, requestOptions);
  const linked: { link?: TaskLink } = {};
  const reply = await peer.request(
    method,
    params,
    withTaskIntent(requestOptions, { link: (link) => (linked.link = link) }),
  );
  const driver =
    linked.link !== undefined && reply.resultType === "task"
      ? new ExtensionTask<R>(linked.link, method, taskView(method, reply, false), follow)
      : ExtensionTask.answered<R>(method, reply as unknown as R, follow);
  const created: CreateTaskReply = { task: driver.state };
  if (reply.resultType === "task" && isPlainObject(reply._meta)) created._meta = reply._meta;
  return new TaskHandle<R>(peer, method, created, wait, driver);
}

/**
 * `method` as a plain call that may become a task: the wire follows a task the server makes of it to its end, and
 * this resolves with its result (an abort cancels the task unless `cancelOnAbort: false`).
 */
export function requestOrExtensionTask<R>(
  peer: Peer,
  method: string,
  params: JsonObject | undefined,
  options: ExtensionCallOptions,
): Promise<R> {
  const {
    cancelOnAbort,
    maxToolListPages: _noToolList,
    pollIntervalMs,
    minPollIntervalMs,
    maxPollIntervalMs,
    resultTimeout: _noBlockingResult,
    ...plain
  } = options;
  const pace = new TaskPace({ pollIntervalMs, minPollIntervalMs, maxPollIntervalMs });
  const follow = { pace, cancelOnAbort: cancelOnAbort ?? true };
  return peer.request(method, params, withTaskIntent(plain, { follow })) as Promise<unknown> as Promise<R>;
}

/**
 * A handle on a task made earlier (before a reconnection, by another process): its state from `tasks/get`, whose
 * error (-32602 for an unknown or expired id) passes through. `method` is what the task runs; default tools/call.
 */
export async function attachExtensionTask<R>(
  peer: Peer,
  taskId: string,
  options: TaskWaitOptions & { method?: string },
): Promise<TaskHandle<R>> {
  const { method = TOOLS_CALL, ...wait } = options;
  const requestOptions: RequestOptions = {};
  if (wait.timeout !== undefined) requestOptions.timeout = wait.timeout;
  if (wait.signal !== undefined) requestOptions.signal = wait.signal;
  const follow = followOf(wait, wait.cancelOnAbort === true, requestOptions);
  const linked: { link?: TaskLink } = {};
  const reply = await peer.request(
    TASKS_GET,
    { taskId },
    withTaskIntent(requestOptions, { link: (link) => (linked.link = link) }),
  );
  const view = taskView(TASKS_GET, reply, true);
  if (view.state.taskId !== taskId)
    throw new RpcError(LocalErrorCode.InvalidResult, `Invalid result for ${TASKS_GET}: not task ${taskId}`, {
      result: reply,
    });
  // The wire hands its link to every request that asks while the extension is declared, and tasks/get is refused
  // before this point while it is not.
  const driver = new ExtensionTask<R>(linked.link!, method, view, follow);
  return new TaskHandle<R>(peer, method, { task: driver.state }, wait, driver);
}

/** The pace (checked now, before anything is sent) and what the waiting takes from the request's own options. */
function followOf(wait: TaskWaitOptions, cancelOnAbort: boolean, request: RequestOptions): FollowOptions {
  const follow: { -readonly [K in keyof FollowOptions]: FollowOptions[K] } = {
    pace: new TaskPace(wait),
    cancelOnAbort,
  };
  if (request.signal !== undefined) follow.signal = request.signal;
  if (request.timeout !== undefined) follow.timeout = request.timeout;
  return follow;
}
