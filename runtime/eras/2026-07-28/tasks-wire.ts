// The Tasks extension's wire (MCP 2026-07-28) over the one task receiver: CreateTaskResult, tasks/get|update|cancel here or for another node's task, input requests by key, changes for listen streams.
import { ErrorCode, RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import type { RequestContext } from "../../rpc/peer.js";
import type { Session } from "../../rpc/session/session.js";
import type { Task } from "../2025-11-25/tasks/task.js";
import type { TaskState } from "../2025-11-25/tasks/protocol.js";
import type { TaskCore } from "../2025-11-25/tasks/receiver.js";
import { acknowledged, createTaskResult, detailedTask, inputResponsesOf, taskIdOf } from "./tasks-extension.js";

/** Hears each change of an extension task, described as tasks/get would describe it now (made only when asked). */
export type TaskWatcher = (taskId: string, detailed: () => JsonObject) => void;

/**
 * What the Tasks extension adds to the receiver for the tasks created on its wire. The receiver owns the tasks; this
 * answers the extension's requests about them, here or from the shared store when another node runs the task.
 */
export class ExtensionTaskWire {
  private readonly watchers = new Set<TaskWatcher>();

  constructor(private readonly core: TaskCore) {}

  /** CreateTaskResult: `resultType: "task"` and the Task, flat. */
  created(task: Task): JsonObject {
    return createTaskResult(task.state);
  }

  /** The state another node reads from the shared store: the outstanding input requests go with it. */
  recorded(task: Task, state: TaskState): TaskState {
    const inputs = task.inputRequests;
    return inputs === undefined ? state : ({ ...state, inputRequests: inputs } as TaskState);
  }

  /** The task changed: streams following it hear of it (described once, only when one follows it). */
  changed(task: Task): void {
    if (this.watchers.size === 0) return;
    let described: JsonObject | undefined = undefined;
    const detailed = () => (described ??= describe(task));
    for (const watcher of this.watchers) watcher(task.taskId, detailed);
  }

  /** Hear every change of the extension's tasks held here. Returns the function that stops it. */
  watch(watcher: TaskWatcher): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** Whether the requestor of `context` may follow an extension task held here by its id. */
  follows(taskId: string, context: RequestContext): boolean {
    const task = this.core.engine.find(taskId, this.core.ownerOf(undefined, context, "extension"));
    return task !== undefined && task.wire === "extension";
  }

  // ---- tasks/* ----

  /** tasks/get: the Task with what its status carries inlined (inputRequests, result, error). */
  get(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const remote = this.elsewhere(params, context);
    if (remote === undefined) return describe(this.find(session, params, context));
    return this.core.shared!.detailed(remote.key, remote.owner, "extension").then(({ state, outcome }) => {
      const inputRequests = (state as { inputRequests?: unknown }).inputRequests;
      return detailedTask(state, {
        inputRequests: isPlainObject(inputRequests) ? inputRequests : undefined,
        result: outcome !== undefined && "result" in outcome ? outcome.result : undefined,
        error: outcome !== undefined && "error" in outcome ? outcome.error : undefined,
      });
    });
  }

  /** tasks/update: answers to outstanding input requests; unknown or answered keys are ignored. */
  update(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const responses = inputResponsesOf(params);
    const remote = this.elsewhere(params, context);
    if (remote !== undefined)
      return this.core.shared!.answerInputs(remote.key, remote.owner, responses).then(acknowledged);
    const task = this.find(session, params, context);
    const invalid = this.invalid(task, responses);
    // Refused whole, so the client can send them again right; nothing of it was taken.
    if (invalid !== undefined) throw invalid;
    this.answer(task, responses);
    return acknowledged();
  }

  /** tasks/cancel: acknowledged whatever the task's state (cancelling a finished task changes nothing). */
  cancel(session: Session, params: JsonObject | undefined, context: RequestContext): JsonObject | Promise<JsonObject> {
    const remote = this.elsewhere(params, context);
    if (remote !== undefined) return this.core.shared!.requestCancel(remote.key, remote.owner).then(acknowledged);
    this.core.cancel(this.find(session, params, context), "The task was cancelled by request.");
    return acknowledged();
  }

  /**
   * The requestor's answers to a task's input requests, by key: each settles the ask that is still outstanding. An
   * answer that is not a valid result of its ask's method (answers relayed from another node are checked only here)
   * is left out, and the ask stays outstanding.
   */
  answer(task: Task, responses: { readonly [key: string]: JsonObject }): void {
    for (const input of [...task.inputs]) {
      if (input.key === undefined || !Object.hasOwn(responses, input.key)) continue;
      const answer = responses[input.key]!;
      if (!fits(task, input.method, answer)) continue;
      input.resolve(answer);
    }
  }

  /** -32602 naming the first answer to an outstanding ask that is not a valid result of its method, if any. */
  private invalid(task: Task, responses: { readonly [key: string]: JsonObject }): RpcError | undefined {
    for (const input of task.inputs) {
      if (input.key === undefined || !Object.hasOwn(responses, input.key)) continue;
      if (fits(task, input.method, responses[input.key]!)) continue;
      const spec = task.session.outboundSpec(input.method);
      return new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params: inputResponses["${input.key}"] is not a valid ${spec?.resultType ?? "result"} for ${input.method}`,
        { inputKey: input.key },
      );
    }
    return undefined;
  }

  /**
   * The store key and owner of an extension task another node runs (shared store), or undefined when this node
   * answers for the id itself (it holds the task, or no other node could).
   */
  private elsewhere(
    params: JsonObject | undefined,
    context: RequestContext,
  ): { key: string; owner: string } | undefined {
    const key = this.core.engine.remoteKey(taskIdOf(params, this.core.unknown));
    if (key === undefined || this.core.shared === undefined) return undefined;
    return { key, owner: this.core.ownerOf(undefined, context, "extension") };
  }

  /** The extension task `params.taskId` names for this requestor; any miss (or a core task) is -32602. */
  private find(session: Session, params: JsonObject | undefined, context: RequestContext): Task {
    const owner = this.core.ownerOf(session, context, "extension");
    const task = this.core.engine.find(taskIdOf(params, this.core.unknown), owner);
    if (task === undefined || task.wire !== "extension") throw this.core.unknown();
    return task;
  }
}

/** An extension task as tasks/get (and notifications/tasks) describe it now. */
function describe(task: Task): JsonObject {
  return detailedTask(task.state, {
    inputRequests: task.inputRequests,
    result: task.result,
    error: task.error?.toJSON(),
  });
}

/** Whether `answer` is a valid result of `method` as the task's session knows the method (unknown: accepted). */
function fits(task: Task, method: string, answer: JsonObject): boolean {
  const isResult = task.session.outboundSpec(method)?.isResult;
  return isResult === undefined || isResult(answer);
}
