// Tasks over a shared store (Redis): the node running a task records it for the others, and any node answers
// tasks/get|result|list|cancel for a task another node runs.
import { Buffer } from "node:buffer";
import { randomInt } from "node:crypto";
import { ConnectionClosedError } from "../../../rpc/errors.js";
import {
  ErrorCode,
  RpcError,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
} from "../../../rpc/jsonrpc.js";
import type { RequestContext, RequestOptions } from "../../../rpc/peer.js";
import { limitOption } from "../../../rpc/limits.js";
import { tokenKey } from "../../../store/key.js";
import { DURABLE_FAILED_CODE } from "../../../durable/errors.js";
import { PendingRequests } from "../../../durable/input.js";
import { isErrorResponse, isResponse, isResultResponse } from "../../../durable/messages.js";
import { OperationLog, type NewRecord } from "../../../durable/operation.js";
import { RemoteOperations, answerSignal, type RemoteFollow } from "../../../durable/remote.js";
import type { DurableEngine, DurableOperation } from "../../../durable/engine.js";
import type { OwnerSignal, QueuedMessage, SharedOperationStore, StoredOperation } from "../../../store/types.js";
import {
  RELATED_TASK_META,
  TASKS_CANCEL,
  TASKS_GET,
  TASKS_LIST,
  TASKS_RESULT,
  TASK_STATUS_NOTIFICATION,
  isTerminal,
  type TaskState,
  type TaskStatus,
} from "./protocol.js";

/** statusMessage of a task whose node stopped renewing its lease before the task ended. */
export const NODE_LOST_STATUS = "The node running this task stopped; the task failed";
/** statusMessage of a task cancelled by another node after its own node stopped. */
export const CANCELLED_AFTER_LOSS_STATUS = "The task was cancelled by request (the node running it had stopped)";

/**
 * Method of the envelope a relayed message travels in through a task's queue (never sent on the wire): it names the
 * one tasks/result call (by epoch) that passes it on, so two calls waiting on other nodes never both ask the user.
 */
const RELAY = "mcpgen/tasks/relay";

/** The final answer of a task's request: exactly what tasks/result returns (a result, or a JSON-RPC error). */
export type TaskOutcome = { result: JsonObject } | { error: JsonRpcErrorObject };

/** A terminal task's answer as recorded: its error when it has one (failed by a throw, cancelled), else its result. */
export function outcomeOf(task: { result: JsonObject | undefined; error: RpcError | undefined }): TaskOutcome {
  return task.error !== undefined ? { error: task.error.toJSON() } : { result: task.result ?? {} };
}

/** The options an app gives for tasks on a shared store (TaskReceiverOptions.shared). */
export interface SharedTaskOptions {
  /** Index slots one tasks/list page reads at most before answering with what it found; default 10 x pageSize. */
  maxListScan?: number;
  /**
   * Milliseconds a tasks/cancel served for a task another node runs waits for that node to record the
   * cancellation; past it the cancel fails with -32603 and the task runs on. Default 10 000.
   */
  cancelWaitMs?: number;
  /**
   * Milliseconds between the check-ins of a tasks/result served on another node (it relays the task's input
   * requests); the running node drops one silent for three times this, so a request it had relayed through a node
   * that died goes out again through the next tasks/result. Default 5000.
   */
  relayCheckMs?: number;
}

/** What the receiver gives SharedTasks besides the app's options. */
export interface SharedTasksOptions extends SharedTaskOptions {
  /** The error for an id that is unknown, expired, or another principal's (the same for all three). */
  unknown: () => RpcError;
  /** Another node asks to cancel a task this node runs: cancel it as a local tasks/cancel would. */
  cancel: (key: string, reason: string) => void;
  /**
   * A tasks/result on another node waits for a task this node runs: take `through` as one of its waiting calls
   * (input requests and notifications of the task go through it). Returns the function that removes it, or
   * undefined when the task is not held (or already ended).
   */
  attach: (key: string, through: RequestContext) => (() => void) | undefined;
  /** The requestor answered, through another node, the input requests of a task this node runs (`answerInputs`). */
  inputs: (key: string, responses: JsonObject) => void;
  /** Store failures that no caller waits for. */
  report: (error: unknown) => void;
  /** Tasks per tasks/list page; default 50. */
  pageSize?: number;
  /** The longest ttl a task may get, ms (the per-principal index lives that long); default 1 h. */
  maxTtlMs?: number;
}

/**
 * A task as SharedTasks records it: a durable operation bound to its owner (the principal, or whatever the
 * receiver binds task ids to), which the per-owner index of tasks is kept under.
 */
export interface TaskOperation extends DurableOperation {
  readonly principal: string;
  /**
   * The wire it was created on: its record's kind says so, so a task of one wire reads as unknown on the other, and
   * only core tasks are indexed for tasks/list (the extension has none).
   */
  readonly wire: "core" | "extension";
}

/** The record kind of a task of `wire`. */
function kindOf(wire: TaskOperation["wire"]): "task" | "extension-task" {
  return wire === "core" ? "task" : "extension-task";
}

/** What a task's queue says: its latest state, its final answer once there is one, and the last seq read. */
interface Replay {
  state: TaskState | undefined;
  outcome: TaskOutcome | undefined;
  last: number;
}

const STATUSES: ReadonlySet<string> = new Set(["working", "input_required", "completed", "failed", "cancelled"]);

function isTaskState(value: unknown): value is TaskState {
  return (
    isPlainObject(value) &&
    typeof value.taskId === "string" &&
    typeof value.status === "string" &&
    STATUSES.has(value.status) &&
    typeof value.createdAt === "string" &&
    typeof value.lastUpdatedAt === "string"
  );
}

/** A status message in a task's queue: the task's state as it stands (taskId included, any field kept). */
function stateMessage(state: TaskState): JsonRpcMessage {
  return { jsonrpc: "2.0", method: TASK_STATUS_NOTIFICATION, params: { ...state } };
}

/** The answer a task's final response records. */
function answerOf(response: JsonRpcResponse): TaskOutcome | undefined {
  if (isResultResponse(response)) return isPlainObject(response.result) ? { result: response.result } : undefined;
  return isErrorResponse(response) ? { error: response.error } : undefined;
}

/** Reads one queued message into `replay` (state messages and the final response; anything else is skipped). */
function absorb(replay: Replay, item: QueuedMessage): void {
  replay.last = Math.max(replay.last, item.seq);
  const message = item.message;
  if (isResponse(message)) replay.outcome = answerOf(message) ?? replay.outcome;
  else if (message.method === TASK_STATUS_NOTIFICATION && isTaskState(message.params)) replay.state = message.params;
}

/**
 * A task this node runs, as other nodes see it in the store: its record, and a queue (its OperationLog) holding
 * its latest state, the messages relayed to tasks/result calls waiting on other nodes, then its final answer.
 */
class SharedTask {
  readonly log: OperationLog<TaskOperation>;
  /** tasks/result calls on other nodes that the task's input requests and notifications go through, by epoch. */
  readonly relays = new Map<number, RemoteResult>();
  private ended = false;
  /** The first relayed message not yet dropped (Infinity: none), and the seq up to which the queue was trimmed. */
  private relayedFrom = Infinity;
  private trimmed = 0;

  constructor(
    engine: DurableEngine<TaskOperation>,
    operation: TaskOperation,
    private readonly requestId: RequestId,
    keepFor: number | undefined,
    first: TaskState,
  ) {
    const record: NewRecord = { kind: kindOf(operation.wire), requestId, status: "processing", pendingInput: 0 };
    if (keepFor !== undefined) record.keepFor = keepFor;
    this.log = new OperationLog(engine, operation, record);
    this.state(first);
  }

  /**
   * Record the task's state (a status change, or a new statusMessage). Only the latest state is read, so the ones
   * before it go: a task reporting its steps for hours keeps one message in the store, not one per step.
   */
  state(state: TaskState): void {
    if (this.ended) return;
    const seq = this.log.append(stateMessage(state));
    // Earlier states go, but relayed messages stay for the node passing them on while one is attached (with none
    // attached, the requests of relays that ended were cancelled, to be sent again).
    const relaying = this.relays.size > 0;
    const upTo = relaying ? Math.min(seq, this.relayedFrom) - 1 : seq - 1;
    if (!relaying) this.relayedFrom = Infinity;
    if (upTo > this.trimmed) {
      this.trimmed = upTo;
      this.log.confirm(upTo);
    }
  }

  /** Queue a message for the tasks/result call `epoch` waiting on another node; returns its seq (0: the task ended). */
  relay(epoch: number, message: JsonRpcMessage): number {
    if (this.ended) return 0;
    const seq = this.log.append({ jsonrpc: "2.0", method: RELAY, params: { epoch, message } });
    this.relayedFrom = Math.min(this.relayedFrom, seq);
    return seq;
  }

  /** Record the terminal state and the final answer; the record then reads as finished. */
  finish(state: TaskState, outcome: TaskOutcome): void {
    if (this.ended) return;
    this.state(state);
    this.ended = true;
    const log = this.log;
    const final: JsonRpcResponse = { jsonrpc: "2.0", id: this.requestId, ...outcome };
    log.finish(log.nextSeq++, final, state.status === "completed" ? "completed" : "failed");
  }

  /** The task was freed (ttl over): its record and queue go; its index slot expires on its own. */
  free(): void {
    this.ended = true;
    for (const relay of [...this.relays.values()]) relay.detach();
    this.log.delete();
  }
}

/**
 * A tasks/result call waiting on another node, as the node running the task sees it: one of the task's waiting
 * calls, whose input requests and notifications go into the task's queue for that node to pass on to its
 * requestor; the answers come back as signals.
 */
class RemoteResult implements RequestContext {
  readonly method = TASKS_RESULT;
  readonly requestId: RequestId;
  private readonly abort = new AbortController();
  /** The input requests relayed through it, until answered, or failed as with a closed connection when it detaches. */
  private readonly inputs = new PendingRequests();
  /** Removes it from the task's waiting calls. */
  leave: () => void = () => undefined;
  /** Date.now() of the last check-in from the node serving the call. */
  touchedAt = Date.now();

  constructor(
    private readonly task: SharedTask,
    readonly epoch: number,
    /** Its node's check-ins are watched until it detaches. */
    private readonly watched: Set<RemoteResult>,
  ) {
    task.relays.set(epoch, this);
    watched.add(this);
    this.requestId = `${TASKS_RESULT}#${epoch}`;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  progress(): Promise<void> {
    return Promise.resolve();
  }

  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    if (this.abort.signal.aborted) return Promise.reject(new ConnectionClosedError());
    const { op, promise } = this.inputs.create(method, options?.signal, ignore, noSession);
    const id = op.id;
    const message: JsonRpcMessage =
      params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    this.inputs.add({ op, message, seq: this.task.relay(this.epoch, message) });
    return promise;
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    this.task.relay(this.epoch, params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
    return Promise.resolve();
  }

  /** The other node passed on the requestor's answer to an input request. */
  answered(id: RequestId | undefined, message: unknown): void {
    this.inputs.answer(id, message);
  }

  /** The call ended (or its node stopped): its unanswered requests fail as with a closed connection (re-sent later). */
  detach(): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    this.task.relays.delete(this.epoch);
    this.watched.delete(this);
    this.leave();
    this.inputs.rejectAll(() => new ConnectionClosedError());
  }
}

function ignore(): void {}

function noSession(): undefined {
  return undefined;
}

/**
 * Tasks in a store shared between nodes. The node running a task keeps its record there (principal, node, status)
 * and a queue of its states and final answer (SharedTask); every principal has an index of its tasks, so any node
 * lists them. Any other node answers tasks/get and tasks/list from that, tasks/result by following the queue,
 * tasks/cancel by signalling the running node (RemoteOperations). When that node stops renewing its lease the
 * first node to notice (the one whose claim on the record comes first) records the task as failed, so every node
 * then says the same.
 */
export class SharedTasks {
  private readonly store: SharedOperationStore;
  private readonly unknownError: () => RpcError;
  private readonly report: (error: unknown) => void;
  private readonly cancelTask: SharedTasksOptions["cancel"];
  private readonly attach: SharedTasksOptions["attach"];
  private readonly inputs: SharedTasksOptions["inputs"];
  private readonly pageSize: number;
  private readonly maxListScan: number;
  private readonly indexKeepFor: number;
  private readonly cancelWaitMs: number;
  /** The tasks this node runs (and still holds), by key. */
  private readonly running = new Map<string, SharedTask>();
  private readonly relayCheckMs: number;
  /** tasks/result calls on other nodes relaying for tasks of this node, and the timer that drops silent ones. */
  private readonly relays = new Set<RemoteResult>();
  private readonly relayTimer: ReturnType<typeof setInterval>;

  /**
   * SharedTasks over the engine's store when it is shared between nodes, else undefined (one node only). The
   * engine's `signalled` is to call `signalled` here.
   */
  static over(engine: DurableEngine<TaskOperation>, options: SharedTasksOptions): SharedTasks | undefined {
    const remote = RemoteOperations.of(engine);
    return remote === undefined ? undefined : new SharedTasks(engine, remote, options);
  }

  private constructor(
    private readonly engine: DurableEngine<TaskOperation>,
    private readonly remote: RemoteOperations<TaskOperation>,
    options: SharedTasksOptions,
  ) {
    this.store = remote.shared;
    this.unknownError = options.unknown;
    this.report = options.report;
    this.cancelTask = options.cancel;
    this.attach = options.attach;
    this.inputs = options.inputs;
    this.pageSize = Math.max(1, limitOption("pageSize", options.pageSize, 50));
    this.maxListScan = Math.max(this.pageSize, limitOption("maxListScan", options.maxListScan, 10 * this.pageSize));
    this.indexKeepFor = Math.ceil(limitOption("maxTtlMs", options.maxTtlMs, 3_600_000) / 1000) + 60;
    this.cancelWaitMs = limitOption("cancelWaitMs", options.cancelWaitMs, 10_000);
    this.relayCheckMs = Math.max(1, limitOption("relayCheckMs", options.relayCheckMs, 5000));
    this.relayTimer = setInterval(() => {
      const silentSince = Date.now() - 3 * this.relayCheckMs;
      for (const relay of [...this.relays]) if (relay.touchedAt < silentSince) relay.detach();
    }, this.relayCheckMs);
    this.relayTimer.unref?.();
  }

  // ---- the node running a task ----

  /**
   * Record a new task (record, first state, index slot); resolves once other nodes can find it (answer the
   * task-augmented request after that). `requestId`: the JSON-RPC id of the request that created it.
   */
  open(task: TaskOperation, requestId: RequestId, state: TaskState): Promise<void> {
    const keepFor = state.ttl === null ? undefined : Math.ceil(state.ttl / 1000);
    const shared = new SharedTask(this.engine, task, requestId, keepFor, state);
    this.running.set(task.key, shared);
    const indexed = task.wire === "core" ? this.index(task.principal, task.key, keepFor) : undefined;
    // The task exists for other nodes once its record, its first state and its index entry do. A store failure
    // is reported, not thrown: the task runs here all the same and this node answers for it.
    return Promise.all([shared.log.written(), indexed]).then(
      () => undefined,
      (error: unknown) => this.report(error),
    );
  }

  /** The task's state changed; `outcome` once it is terminal (what tasks/result answers with). */
  record(key: string, state: TaskState, outcome?: TaskOutcome): void {
    const task = this.running.get(key);
    if (task === undefined) return;
    if (outcome === undefined || !isTerminal(state.status)) task.state(state);
    else task.finish(state, outcome);
  }

  /** The task was freed (ttl over, evicted, shutdown): its record and queue go; its index slot expires by itself. */
  free(key: string): void {
    const task = this.running.get(key);
    if (task === undefined) return;
    this.running.delete(key);
    task.free();
  }

  /** A signal from a node serving a task this node runs (the engine's `signalled`). */
  signalled(operation: TaskOperation, signal: OwnerSignal): void {
    const key = operation.key;
    const task = this.running.get(key);
    if (task === undefined) return;
    if (signal.type === "cancel") return this.cancelTask(key, signal.reason ?? "Cancelled by request");
    if (signal.type === "input") {
      if (isPlainObject(signal.responses)) this.inputs(key, signal.responses);
      return;
    }
    const epoch = signal.epoch;
    if (typeof epoch !== "number") return;
    if (signal.type === "touch") {
      const relay = task.relays.get(epoch);
      if (relay !== undefined) relay.touchedAt = Date.now();
    } else if (signal.type === "attach" && !task.relays.has(epoch)) {
      const relay = new RemoteResult(task, epoch, this.relays);
      const leave = this.attach(key, relay);
      if (leave === undefined) relay.detach();
      else relay.leave = leave;
    } else if (signal.type === "answer") task.relays.get(epoch)?.answered(signal.id, signal.message);
    else if (signal.type === "detach") task.relays.get(epoch)?.detach();
  }

  /**
   * Answers tasks/get, tasks/result or tasks/cancel for a task this node does not hold, and tasks/list always
   * (every node's tasks are in the store); undefined when the local receiver answers.
   */
  serve(
    method: string,
    params: JsonObject | undefined,
    owner: string,
    context: RequestContext,
  ): Promise<JsonObject> | undefined {
    if (method === TASKS_LIST) return this.list(owner, params?.cursor) as Promise<JsonObject>;
    const taskId = params?.taskId;
    const key = this.engine.remoteKey(taskId);
    if (key === undefined) return undefined;
    switch (method) {
      case TASKS_GET:
        return this.get(key, owner);
      case TASKS_CANCEL:
        return this.cancel(key, owner);
      case TASKS_RESULT:
        return this.result(key, owner, context).then((outcome) => answer(outcome, taskId as string));
      default:
        return undefined;
    }
  }

  /**
   * Adds a task to its owner's index: the index record counts (claim) across nodes, slot n holds the key of the
   * n-th task, and the index's requestId is the latest slot written (a hint: two nodes may write it out of order,
   * and readers look past it). Slots expire with their task; the index outlives every task it lists.
   */
  private async index(owner: string, key: string, keepFor: number | undefined): Promise<void> {
    const store = this.store;
    const index = indexKey(owner);
    let n = await store.claim(index);
    if (n === 0) {
      await store.create(index, this.indexRecord(owner, 0));
      n = await store.claim(index);
    }
    const slot: StoredOperation = {
      kind: "task",
      requestId: key,
      principal: owner,
      status: "completed",
      pendingInput: 0,
      keepFor: keepFor ?? this.indexKeepFor,
    };
    await store.create(slotKey(owner, n), slot);
    // Written again, it keeps its count (the store's claims) and lives on from now.
    await store.create(index, this.indexRecord(owner, n));
  }

  private indexRecord(owner: string, latest: number): StoredOperation {
    return {
      kind: "task",
      requestId: latest,
      principal: owner,
      status: "completed",
      pendingInput: 0,
      keepFor: this.indexKeepFor,
    };
  }

  /** The highest slot of `owner`'s index: its hint, then past it while slots exist (a node may have written late). */
  private async top(owner: string): Promise<number> {
    const index = await this.store.get(indexKey(owner));
    if (index === undefined || index.principal !== owner || typeof index.requestId !== "number") return 0;
    let top = index.requestId;
    for (;;) {
      const next = Array.from({ length: 8 }, (_, i) => top + 1 + i);
      const found = await Promise.all(next.map((n) => this.store.get(slotKey(owner, n))));
      const run = found.findIndex((slot) => slot === undefined);
      if (run === -1) top += next.length;
      else return top + run;
    }
  }

  // ---- any node ----

  /** tasks/get for a task of `owner` in the store. */
  async get(key: string, owner: string): Promise<TaskState> {
    return (await this.detailed(key, owner)).state;
  }

  /**
   * The latest state a task of `owner` recorded (its params as they were recorded, whatever fields they carry) and
   * its final answer once there is one. A task whose node stopped renewing its lease is taken over as failed.
   */
  async detailed(
    key: string,
    owner: string,
    wire: TaskOperation["wire"] = "core",
  ): Promise<{ state: TaskState; outcome: TaskOutcome | undefined }> {
    const { record, replay } = await this.read(key, owner, wire);
    if (record.lost === true && replay.outcome === undefined) return this.takeOver(key, record, replay, "failed");
    return { state: replay.state!, outcome: replay.outcome };
  }

  /**
   * tasks/result: the final answer once the task is terminal. Waits for it, following the task's queue; meanwhile
   * the task's input requests and notifications reach the requestor through this call (`context`), and the
   * answers go back to the node running the task.
   */
  async result(key: string, owner: string, context: RequestContext): Promise<TaskOutcome> {
    const { record, replay } = await this.read(key, owner);
    if (replay.outcome !== undefined) return replay.outcome;
    if (record.lost === true) return (await this.takeOver(key, record, replay, "failed")).outcome;
    // Tells this call apart from other nodes' calls waiting on the same task.
    const epoch = randomInt(1, 2 ** 47);
    const tell = (signal: OwnerSignal) => this.remote.tell(record.node, key, { ...signal, epoch });
    const relay = (queued: JsonRpcMessage) => {
      const envelope =
        !isResponse(queued) && queued.method === RELAY && isPlainObject(queued.params) ? queued.params : undefined;
      if (envelope?.epoch !== epoch || !isPlainObject(envelope.message)) return;
      const message = envelope.message;
      if (typeof message.method !== "string") return;
      const params = isPlainObject(message.params) ? message.params : undefined;
      if (message.id === undefined) return void context.notify(message.method, params).catch(() => undefined);
      const id = message.id as RequestId;
      context.request(message.method, params).then(
        (result) => tell(answerSignal(id, { result })),
        (error: unknown) => tell(answerSignal(id, { error })),
      );
    };
    const following = this.watch(key, replay, context.signal, (r) => r.outcome !== undefined, relay);
    tell({ type: "attach" });
    const checkIn = setInterval(() => tell({ type: "touch" }), this.relayCheckMs);
    checkIn.unref?.();
    const outcome = await following.finally(() => clearInterval(checkIn));
    tell({ type: "detach" });
    if (outcome === "lost") return (await this.takeOver(key, record, replay, "failed")).outcome;
    if (outcome === "stopped")
      throw new RpcError(ErrorCode.InternalError, "tasks/result stopped before the task ended");
    return replay.outcome!;
  }

  /** tasks/cancel: the running node is told and the answer waits until it recorded the cancellation. */
  async cancel(key: string, owner: string, reason = "Cancelled by request"): Promise<TaskState> {
    const { record, replay } = await this.read(key, owner);
    const terminal = () =>
      new RpcError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${replay.state!.status}'`);
    if (isTerminal(replay.state!.status)) throw terminal();
    if (record.lost === true) return this.cancelledAfterLoss(key, record, replay);
    this.remote.tell(record.node, key, { type: "cancel", reason });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.cancelWaitMs);
    try {
      const outcome = await this.watch(key, replay, controller.signal, (r) => isTerminal(r.state!.status));
      if (outcome === "lost") return await this.cancelledAfterLoss(key, record, replay);
      if (outcome === "stopped")
        throw new RpcError(
          ErrorCode.InternalError,
          "The node running the task did not confirm its cancellation in time",
        );
    } finally {
      clearTimeout(timer);
    }
    if (replay.state!.status !== "cancelled") throw terminal();
    return replay.state!;
  }

  /**
   * A cancellation asked for and acknowledged at once: the running node is told, and nothing waits for it to
   * record the cancellation. A task already terminal stays as it is, without an error; one whose node stopped is
   * taken over as cancelled.
   */
  async requestCancel(key: string, owner: string): Promise<void> {
    const { record, replay } = await this.read(key, owner, "extension");
    if (isTerminal(replay.state!.status)) return;
    if (record.lost === true) await this.takeOver(key, record, replay, "cancelled");
    else this.remote.tell(record.node, key, { type: "cancel", reason: "Cancelled by request" });
  }

  /**
   * The requestor's answers to the input requests of a task another node runs: that node gets them (its
   * `inputs`). Nothing waits for them any more once the task is terminal or its node stopped: they are dropped.
   */
  async answerInputs(key: string, owner: string, responses: JsonObject): Promise<void> {
    const { record, replay } = await this.read(key, owner, "extension");
    if (record.lost === true || isTerminal(replay.state!.status)) return;
    this.remote.tell(record.node, key, { type: "input", responses });
  }

  /** tasks/list: `owner`'s tasks on every node, newest first; the cursor is the index slot to go on from. */
  async list(owner: string, cursor: unknown): Promise<{ tasks: TaskState[]; nextCursor?: string }> {
    let from: number;
    if (cursor === undefined) {
      from = await this.top(owner);
    } else {
      from = parseCursor(cursor);
    }
    const tasks: TaskState[] = [];
    let n = from;
    const floor = Math.max(0, from - this.maxListScan);
    while (n > floor && tasks.length < this.pageSize) {
      const batch: number[] = [];
      for (let i = n; i > floor && batch.length < this.pageSize - tasks.length; i--) batch.push(i);
      n -= batch.length;
      const found = await Promise.all(batch.map((slot) => this.slotState(owner, slot)));
      for (const state of found) if (state !== undefined) tasks.push(state);
    }
    return n > 0 ? { tasks, nextCursor: makeCursor(n) } : { tasks };
  }

  /** Stop checking relays (shutdown); the engine's close ends signals and follows, the receiver frees its tasks. */
  close(): void {
    clearInterval(this.relayTimer);
  }

  // ---- internals ----

  private async slotState(owner: string, n: number): Promise<TaskState | undefined> {
    const slot = await this.store.get(slotKey(owner, n));
    if (slot === undefined || slot.principal !== owner || typeof slot.requestId !== "string") return undefined;
    try {
      return await this.get(slot.requestId, owner);
    } catch (error) {
      if (error instanceof RpcError && error.code === this.unknownError().code) return undefined;
      throw error;
    }
  }

  /** The task's record and queue, or the unknown-task error (no record, another owner's, not a task, no state). */
  private async read(
    key: string,
    owner: string,
    wire: TaskOperation["wire"] = "core",
  ): Promise<{ record: StoredOperation; replay: Replay }> {
    const { record, queue } = await this.remote.read(key, kindOf(wire), owner, this.unknownError);
    const replay: Replay = { state: undefined, outcome: undefined, last: 0 };
    for (const item of queue) absorb(replay, item);
    if (replay.state === undefined) throw this.unknownError();
    return { record, replay };
  }

  /**
   * Follows the task's queue on from `replay` until `done(replay)`, its node is lost, `signal` aborts or the
   * engine closes; messages that do not end it go to `other`.
   */
  private watch(
    key: string,
    replay: Replay,
    signal: AbortSignal,
    done: (replay: Replay) => boolean,
    other?: (message: JsonRpcMessage) => void,
  ): Promise<"done" | "lost" | "stopped"> {
    return new Promise((resolve) => {
      let follow: RemoteFollow | undefined = undefined;
      const stop = () => follow?.end(() => resolve("stopped"));
      follow = this.remote.follow(key, replay.last, {
        message: (item) => {
          absorb(replay, item);
          if (!done(replay)) return other?.(item.message);
          resolve("done");
          follow?.end();
        },
        final: (response) => {
          replay.outcome = answerOf(response) ?? replay.outcome;
          resolve("done");
        },
        lost: () => resolve("lost"),
        closed: () => resolve("stopped"),
        ended: () => signal.removeEventListener("abort", stop),
      });
      if (follow.ended) return;
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    });
  }

  private async cancelledAfterLoss(key: string, record: StoredOperation, replay: Replay): Promise<TaskState> {
    const taken = await this.takeOver(key, record, replay, "cancelled");
    if (taken.state.status !== "cancelled")
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${taken.state.status}'`,
      );
    return taken.state;
  }

  /**
   * The task's node stopped before it ended: the first node to claim the record writes the terminal state and
   * final answer in the node's place (RemoteOperations.takeOver); any other node reads that, or, when it is not
   * there yet, answers with the same failure itself.
   */
  private async takeOver(
    key: string,
    record: StoredOperation,
    replay: Replay,
    status: "failed" | "cancelled",
  ): Promise<{ state: TaskState; outcome: TaskOutcome }> {
    const taken = ended(replay.state!, status);
    const final: JsonRpcResponse = { jsonrpc: "2.0", id: record.requestId, ...taken.outcome };
    if (await this.remote.takeOver(key, replay.last, [stateMessage(taken.state), final], "failed")) {
      replay.state = taken.state;
      replay.outcome = taken.outcome;
      replay.last += 2;
      return taken;
    }
    const again: Replay = { ...replay };
    for (const item of await this.store.readAfter(key, again.last)) absorb(again, item);
    if (again.outcome !== undefined && isTerminal(again.state!.status))
      return { state: again.state!, outcome: again.outcome };
    return ended(replay.state!, "failed");
  }
}

/** What tasks/result answers: the request's result with the related-task `_meta`, or its error thrown. */
export function answer(outcome: TaskOutcome, taskId: string): JsonObject {
  if ("error" in outcome) throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
  const result = outcome.result;
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } };
}

/** The terminal state and answer of a task whose node stopped (failed), or that was cancelled after that. */
function ended(state: TaskState, status: "failed" | "cancelled"): { state: TaskState; outcome: TaskOutcome } {
  const lastUpdatedAt = new Date().toISOString();
  const statusMessage = status === "failed" ? NODE_LOST_STATUS : CANCELLED_AFTER_LOSS_STATUS;
  const message = status === "failed" ? "Task failed: the node running it stopped" : "Task cancelled";
  return {
    state: { ...state, status, statusMessage, lastUpdatedAt },
    outcome: { error: { code: DURABLE_FAILED_CODE, message, data: { status: status as TaskStatus } } },
  };
}

// Index keys are hashes of text no token can be: the principal is inside, and tokens are fixed-length base64url.
function indexKey(owner: string): string {
  return tokenKey(`tasks\u0000index\u0000${owner}`);
}

function slotKey(owner: string, n: number): string {
  return tokenKey(`tasks\u0000slot\u0000${owner}\u0000${n}`);
}

function makeCursor(n: number): string {
  return Buffer.from(`t${n}`, "utf8").toString("base64url");
}

function parseCursor(cursor: unknown): number {
  if (typeof cursor === "string" && cursor.length <= 32) {
    const text = Buffer.from(cursor, "base64url").toString("utf8");
    const n = /^t([1-9][0-9]{0,15})$/.exec(text);
    if (n !== null) return Number(n[1]);
  }
  throw new RpcError(ErrorCode.InvalidParams, "Invalid tasks/list cursor");
}
