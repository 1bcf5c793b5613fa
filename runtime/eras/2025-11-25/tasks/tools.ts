// Tasks for McpServer's tools: per-tool execution.taskSupport and its enforcement (free of Node built-ins, like McpServer).
import { ErrorCode, RpcError, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { Session } from "../../../rpc/session/session.js";
import type { TaskReceiver } from "./receiver.js";
import { TaskContext, type TaskControl, type TaskWireKind } from "./task.js";
import type { RequestContext } from "../../../rpc/peer.js";
import { missingTasksExtension, taskWireOf } from "../../2026-07-28/tasks-extension.js";

/** A tool's `execution.taskSupport`: whether clients may (optional), must (required) or must not call it as a task. */
export type TaskSupport = "optional" | "required" | "forbidden";

const TASK_SUPPORT: ReadonlySet<unknown> = new Set(["optional", "required", "forbidden"]);

export const TOOLS_CALL = "tools/call";

/** Checks a registration's taskSupport; undefined stays undefined (forbidden, not listed). */
export function taskSupportOption(tool: string, value: unknown): TaskSupport | undefined {
  if (value === undefined) return undefined;
  if (!TASK_SUPPORT.has(value))
    throw new TypeError(`Tool ${JSON.stringify(tool)}: taskSupport must be "optional", "required" or "forbidden"`);
  return value as TaskSupport;
}

/** Whether a tool's taskSupport lets clients call it as a task. */
export function allowsTasks(support: TaskSupport | undefined): boolean {
  return support === "optional" || support === "required";
}

/**
 * Whether a tools/call runs as a task on `session`: only where the session advertised task-augmented tools/call
 * (else `task` is ignored and the call is plain). There, a task for a tool that forbids it, or a plain call of one
 * that requires it, is refused with -32601 as the spec says.
 */
export function callsAsTask(
  receiver: TaskReceiver,
  session: Session,
  tool: string,
  support: TaskSupport | undefined,
  params: JsonObject | undefined,
): boolean {
  const wanted = params?.task !== undefined;
  if (!receiver.wantsTask(session, TOOLS_CALL, wanted ? params : { task: {} })) return false;
  const mode = support ?? "forbidden";
  if (wanted && mode === "forbidden")
    throw new RpcError(ErrorCode.MethodNotFound, `Tool ${tool} cannot be called as a task (taskSupport: forbidden)`);
  if (!wanted && mode === "required")
    throw new RpcError(ErrorCode.MethodNotFound, `Tool ${tool} must be called as a task (taskSupport: required)`);
  return wanted;
}

/**
 * Which wire a tools/call runs as a task on, or undefined when it runs plainly. A 2025-11-25 call is a task when it
 * asked (see callsAsTask). On 2026-07-28 the server decides: a tool that allows tasks runs as one when the request
 * declared the Tasks extension; without that declaration an optional one runs plainly and a required one is refused
 * with -32021 before its handler runs.
 */
export function taskWireForCall(
  receiver: TaskReceiver,
  session: Session,
  tool: string,
  support: TaskSupport | undefined,
  params: JsonObject | undefined,
  context: RequestContext,
): TaskWireKind | undefined {
  const wire = taskWireOf(context.peerIdentity);
  if (wire === "core") return callsAsTask(receiver, session, tool, support, params) ? "core" : undefined;
  if (!allowsTasks(support)) return undefined;
  if (wire === "extension") return "extension";
  if (support === "required") throw missingTasksExtension(`Tool ${tool} (taskSupport: required)`);
  return undefined;
}

/** The task a handler's context runs as, when it runs as one. */
export function taskControlOf(context: RequestContext): TaskControl | undefined {
  return context instanceof TaskContext ? context : undefined;
}
