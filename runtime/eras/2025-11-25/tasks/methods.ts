// Which requests a task receiver can run as tasks: the capability each needs, and when a result counts as a failure.
import type { JsonObject } from "../../../rpc/jsonrpc.js";

/** How the receiver treats one task-augmentable request type. */
export interface TaskRequestKind {
  /** Dotted path under the receiver's capabilities that declares task support for it (the spec's tables). */
  readonly capability: string;
  /** A successful result that still makes the task `failed` (a tool result with isError: true). */
  readonly failed?: (result: JsonObject) => boolean;
}

/** The request types the 2025-11-25 spec lets a requestor augment with a task. */
export const TASK_REQUESTS: Readonly<Record<string, TaskRequestKind>> = {
  "tools/call": { capability: "tasks.requests.tools.call", failed: (result) => result.isError === true },
  "sampling/createMessage": { capability: "tasks.requests.sampling.createMessage" },
  "elicitation/create": { capability: "tasks.requests.elicitation.create" },
};

/** The capability path for task-augmented `method`, or undefined when the spec has none for it. */
export function taskCapabilityOf(method: string): string | undefined {
  return Object.hasOwn(TASK_REQUESTS, method) ? TASK_REQUESTS[method].capability : undefined;
}

/**
 * The `tasks` capability object for a receiver serving `methods` as tasks, with tasks/list and tasks/cancel:
 * `{ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }`.
 */
export function taskCapabilities(methods: readonly string[], list = true): JsonObject {
  const requests: JsonObject = {};
  for (const method of methods) {
    const path = taskCapabilityOf(method);
    if (path === undefined) throw new TypeError(`${method} cannot be task-augmented (no capability in the spec)`);
    // "tasks.requests.a.b" -> requests.a.b = {}
    const [, , ...rest] = path.split(".");
    let node = requests;
    for (let i = 0; i < rest.length - 1; i++) {
      const next = (node[rest[i]] ?? {}) as JsonObject;
      node[rest[i]] = next;
      node = next;
    }
    node[rest[rest.length - 1]] = {};
  }
  const tasks: JsonObject = list ? { list: {}, cancel: {}, requests } : { cancel: {}, requests };
  return { tasks };
}
