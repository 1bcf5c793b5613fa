// Tasks (MCP 2025-11-25): the wire names, the _meta keys and the status machine both task roles share.
import type { JsonObject } from "../../../rpc/jsonrpc.js";

export const TASKS_GET = "tasks/get";
export const TASKS_RESULT = "tasks/result";
export const TASKS_LIST = "tasks/list";
export const TASKS_CANCEL = "tasks/cancel";
export const TASK_STATUS_NOTIFICATION = "notifications/tasks/status";

/** `_meta` key that ties a request, notification or response to the task it belongs to. */
export const RELATED_TASK_META = "io.modelcontextprotocol/related-task";
/** `_meta` key of a CreateTaskResult carrying text the host may hand the model while the task runs. */
export const MODEL_IMMEDIATE_RESPONSE_META = "io.modelcontextprotocol/model-immediate-response";

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** What a requestor asks for in `params.task`. */
export interface TaskMetadata {
  /** Requested retention from creation, in milliseconds. */
  ttl?: number;
}

/** The schema's Task: the state of one task as `tasks/get`, `tasks/list` and status notifications report it. */
// Type aliases, not interfaces: a state is a JSON object as it stands (interfaces have no index signature).
export type TaskState = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** Actual retention from creation in milliseconds; null for unlimited. */
  ttl: number | null;
  /** Suggested milliseconds between polls. */
  pollInterval?: number;
};

/** The schema's CreateTaskResult: what a task-augmented request is answered with. */
export type CreateTaskReply = {
  task: TaskState;
  _meta?: JsonObject;
};

const TERMINAL: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** Completed, failed and cancelled tasks never change again. */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

/** The spec's state machine: working <-> input_required, either of them -> a terminal status, nothing out of one. */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  if (isTerminal(from) || from === to) return false;
  return to !== "working" || from === "input_required";
}
