// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on MCP 2026-07-28's wire: who opted in, its methods' shapes, its results.
import { ErrorCode, RpcError, isPlainObject, type JsonObject, type JsonRpcErrorObject } from "../../rpc/jsonrpc.js";
import type { MethodSpec } from "../../rpc/dispatch.js";
import type { PeerIdentity } from "../../rpc/peer.js";
import { MODERN_PROTOCOL_VERSIONS, ModernErrorCode } from "./envelope.js";

/** The extension's identifier, in `capabilities.extensions` of both sides. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export const TASKS_UPDATE = "tasks/update";

/** The extension's status notification, sent on subscriptions/listen streams that asked for the task's id. */
export const TASK_NOTIFICATION = "notifications/tasks";

/** The requests the extension adds to the revision (tasks/result and tasks/list are not among them: -32601). */
export const TASKS_EXTENSION_METHODS: readonly string[] = ["tasks/get", TASKS_UPDATE, "tasks/cancel"];

/**
 * How a request reaches tasks: `core` (a 2025-11-25 request: the `task` param and tasks/result), `extension` (a
 * 2026-07-28 request whose envelope declares the extension), `gated` (a 2026-07-28 request that does not: no task
 * may be returned to it, and tasks/* is refused with -32021).
 */
export type TaskWire = "core" | "extension" | "gated";

/** The wire a request comes on, read from the identity it carries (its envelope on 2026-07-28). */
export function taskWireOf(identity: PeerIdentity | undefined): TaskWire {
  if (identity === undefined || !MODERN_PROTOCOL_VERSIONS.includes(identity.protocolVersion)) return "core";
  const extensions = identity.capabilities.extensions;
  return isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION]) ? "extension" : "gated";
}

/** -32021 naming the extension: the request needs it and the client's envelope did not declare it. */
export function missingTasksExtension(what: string): RpcError {
  return new RpcError(
    ModernErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** A task as the runtime keeps it (the 2025-11-25 Task shape, which core Tasks sends as is). */
export interface KeptTaskState {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

/** What a terminal or waiting task carries beside its state on this wire. */
export interface TaskDetails {
  /** Outstanding input requests by key (input_required). */
  readonly inputRequests?: JsonObject;
  /** The request's result (completed) or its JSON-RPC error (failed). */
  readonly result?: JsonObject;
  readonly error?: JsonRpcErrorObject;
}

/** The extension's Task: the renamed `ttlMs` / `pollIntervalMs` (integers), the rest as kept. */
export function extensionTask(state: KeptTaskState): JsonObject {
  const task: JsonObject = {
    taskId: state.taskId,
    status: state.status,
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttlMs: state.ttl === null ? null : Math.max(1, Math.round(state.ttl)),
  };
  if (state.statusMessage !== undefined) task.statusMessage = state.statusMessage;
  if (state.pollInterval !== undefined) task.pollIntervalMs = Math.max(1, Math.round(state.pollInterval));
  return task;
}

/** CreateTaskResult: `resultType: "task"` and the Task, flat (no `task` wrapper, nothing of tasks/get's details). */
export function createTaskResult(state: KeptTaskState): JsonObject {
  return { resultType: "task", ...extensionTask(state) };
}

/**
 * tasks/get's DetailedTask: the Task and what its status carries, inlined (inputRequests while input_required, the
 * result once completed, the error once failed; a cancelled task carries neither).
 */
export function detailedTask(state: KeptTaskState, details: TaskDetails): JsonObject {
  const task = extensionTask(state);
  if (state.status === "input_required" && details.inputRequests !== undefined)
    task.inputRequests = details.inputRequests;
  else if (state.status === "completed") task.result = withoutRelatedTask(details.result ?? {});
  else if (state.status === "failed")
    task.error = (details.error as JsonObject | undefined) ?? {
      code: ErrorCode.InternalError,
      message: state.statusMessage ?? "Task failed",
    };
  return task;
}

/** The acknowledgement tasks/update and tasks/cancel answer with (resultType is added with the revision's members). */
export function acknowledged(): JsonObject {
  return {};
}

/** The taskId of tasks/get, tasks/update or tasks/cancel params, or the -32602 every unknown id gets. */
export function taskIdOf(params: JsonObject | undefined, unknown: () => RpcError): string {
  const taskId = params?.taskId;
  if (typeof taskId !== "string") throw unknown();
  return taskId;
}

/** The object-valued answers of a tasks/update, by input key (anything else is no answer and is ignored). */
export function inputResponsesOf(params: JsonObject | undefined): { [key: string]: JsonObject } {
  const out: { [key: string]: JsonObject } = {};
  const responses = params?.inputResponses;
  if (!isPlainObject(responses)) return out;
  for (const [key, value] of Object.entries(responses)) if (isPlainObject(value)) out[key] = value;
  return out;
}

const isUpdateParams = (params: unknown): boolean =>
  isPlainObject(params) && typeof params.taskId === "string" && isPlainObject(params.inputResponses);

/** tasks/update as the session checks it before its handler runs. */
export const TASKS_UPDATE_SPEC: MethodSpec = {
  kind: "request",
  paramsType: "UpdateTaskRequestParams",
  resultType: "Result",
  isParams: isUpdateParams,
  explainParams: (params: unknown) => {
    if (!isPlainObject(params)) return [{ pointer: "/params", message: "must be an object" }];
    const issues: { pointer: string; message: string }[] = [];
    if (typeof params.taskId !== "string") issues.push({ pointer: "/params/taskId", message: "must be a string" });
    if (!isPlainObject(params.inputResponses))
      issues.push({ pointer: "/params/inputResponses", message: "must be an object" });
    return issues;
  },
};

/** The 2025-11-25 related-task `_meta` is redundant inline (the taskId is at the root), so it is left out. */
function withoutRelatedTask(result: JsonObject): JsonObject {
  const meta = result._meta;
  if (!isPlainObject(meta) || meta["io.modelcontextprotocol/related-task"] === undefined) return result;
  const { ["io.modelcontextprotocol/related-task"]: _related, ...rest } = meta;
  return { ...result, _meta: rest };
}
