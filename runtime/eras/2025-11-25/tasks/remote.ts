// Tasks over a shared store (Redis): how any node answers tasks/get|result|list|cancel for a task another node runs.
import { Buffer } from "node:buffer";
import { randomInt } from "node:crypto";
import {
  ErrorCode,
  RpcError,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type RequestId,
} from "../../../rpc/jsonrpc.js";
import type { RequestContext } from "../../../rpc/peer.js";
import { limitOption } from "../../../rpc/limits.js";
import { tokenKey } from "../../../store/key.js";
import { DURABLE_FAILED_CODE } from "../../../durable/errors.js";
import { isErrorResponse, isResponse, isResultResponse } from "../../../durable/messages.js";
import type { DurableEngine, DurableOperation } from "../../../durable/engine.js";
import type { OwnerSignal, QueuedMessage, SharedOperationStore, StoredOperation } from "../../../store/types.js";
import { RELAY, RemoteResult, SharedTaskLog, stateMessage, type TaskOutcome } from "./shared-log.js";
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
  /** Store failures that no caller waits for. */
  report: (error: unknown) => void;
  /** Tasks per tasks/list page; default 50. */
  pageSize?: number;
  /** The longest ttl a task may get, ms (the per-principal index lives that long); default 1 h. */
  maxTtlMs?: number;
}

/** A task as its own node records it in the store. */
export interface NewSharedTask {
  /** The task's store key (the engine's key of its id). */
  key: string;
  /** Who the task is bound to: the principal (or whatever the receiver binds ids to). */
  owner: string;
  /** The JSON-RPC id of the task-augmented request that created it. */
  requestId: RequestId;
  state: TaskState;
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

/** Reads one queued message into `replay` (state messages and the final response; anything else is skipped). */
function absorb(replay: Replay, item: QueuedMessage): void {
  replay.last = Math.max(replay.last, item.seq);
  const message = item.message;
  if (!isResponse(message)) {
    if (message.method === TASK_STATUS_NOTIFICATION && isTaskState(message.params)) replay.state = message.params;
  } else if (isResultResponse(message)) {
    if (isPlainObject(message.result)) replay.outcome = { result: message.result };
  } else if (isErrorResponse(message)) replay.outcome = { error: message.error };
}

/**
 * Tasks in a store shared between nodes. The node running a task keeps its record there (principal, node, status)
 * and a queue of its states and final answer (SharedTaskLog); every principal has an index of its tasks, so any
 * node lists them. Any other node answers tasks/get and tasks/list from that, tasks/result by following the queue,
 * tasks/cancel by signalling the running node. When that node stops renewing its lease the first node to notice
 * (the one whose claim on the record comes first) records the task as failed, so every node then says the same.
 */
export class SharedTasks {
  readonly store: SharedOperationStore;
  private readonly unknownError: () => RpcError;
  readonly report: (error: unknown) => void;
  private readonly pageSize: number;
  private readonly maxListScan: number;
  private readonly indexKeepFor: number;
  private readonly cancelWaitMs: number;
  private readonly remoteKey: (taskId: unknown) => string | undefined;
  /** The logs of the tasks this node runs (and still holds), by key. */
  private readonly logs = new Map<string, SharedTaskLog>();
  private readonly follows = new Set<() => void>();
  private readonly stopSignals: () => void;
  private readonly relayCheckMs: number;
  /** tasks/result calls on other nodes relaying for tasks of this node, and the timer that drops silent ones. */
  private readonly relays = new Set<RemoteResult>();
  private readonly relayTimer: ReturnType<typeof setInterval>;

  /** SharedTasks over the engine's store when it is shared between nodes, else undefined (one node only). */
  static over(engine: DurableEngine<DurableOperation>, options: SharedTasksOptions): SharedTasks | undefined {
    const store = engine.shared;
    return store === undefined ? undefined : new SharedTasks(store, (taskId) => engine.remoteKey(taskId), options);
  }

  constructor(
    store: SharedOperationStore,
    /** The store key of a presented task id this node does not hold (the engine's remoteKey), else undefined. */
    remoteKey: (taskId: unknown) => string | undefined,
    options: SharedTasksOptions,
  ) {
    this.store = store;
    this.remoteKey = remoteKey;
    this.unknownError = options.unknown;
    this.report = options.report;
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
    const { cancel, attach } = options;
    this.stopSignals = this.store.onSignal((key, signal) => {
      const log = this.logs.get(key);
      if (log === undefined) return;
      if (signal.type === "cancel") return cancel(key, signal.reason ?? "Cancelled by request");
      const epoch = signal.epoch;
      if (typeof epoch !== "number") return;
      if (signal.type === "touch") {
        const relay = log.remote.get(epoch);
        if (relay !== undefined) relay.touchedAt = Date.now();
      } else if (signal.type === "attach" && !log.remote.has(epoch)) {
        const relay = new RemoteResult(log, epoch, this.relays);
        log.remote.set(epoch, relay);
        const leave = attach(key, relay);
        if (leave === undefined) relay.detach();
        else relay.leave = leave;
      } else if (signal.type === "answer") log.remote.get(epoch)?.answered(signal.id, signal.message);
      else if (signal.type === "detach") log.remote.get(epoch)?.detach();
    });
  }

  // ---- the node running a task ----

  /**
   * Record a new task (record, first state, index slot); resolves once other nodes can find it (answer the
   * task-augmented request after that).
   */
  open(task: NewSharedTask): Promise<void> {
    const store = this.store;
    const keepFor = task.state.ttl === null ? undefined : Math.ceil(task.state.ttl / 1000);
    const record: StoredOperation = {
      kind: "task",
      requestId: task.requestId,
      principal: task.owner,
      status: "processing",
      pendingInput: 0,
      node: store.nodeId,
    };
    if (keepFor !== undefined) record.keepFor = keepFor;
    const created = Promise.resolve(store.create(task.key, record));
    const indexed = this.index(task.owner, task.key, keepFor);
    // The task exists for other nodes once both its record and its index entry do.
    // A store failure is reported, not thrown: the task runs here all the same and this node answers for it.
    const ready = Promise.all([created, indexed]).then(
      () => undefined,
      (error: unknown) => this.report(error),
    );
    this.logs.set(task.key, new SharedTaskLog(store, this.report, task.key, task.requestId, ready, task.state));
    return ready;
  }

  /** The task's state changed; `outcome` once it is terminal (what tasks/result answers with). */
  record(key: string, state: TaskState, outcome?: TaskOutcome): void {
    const log = this.logs.get(key);
    if (log === undefined) return;
    if (outcome === undefined || !isTerminal(state.status)) log.state(state);
    else log.finish(state, outcome);
  }

  /** The task was freed (ttl over, evicted, shutdown): its record and queue go; its index slot expires by itself. */
  free(key: string): void {
    const log = this.logs.get(key);
    if (log === undefined) return;
    this.logs.delete(key);
    log.free();
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
    const key = this.remoteKey(taskId);
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
    const { record, replay } = await this.read(key, owner);
    if (record.lost === true && replay.outcome === undefined)
      return (await this.takeOver(key, record, replay, "failed")).state;
    return replay.state!;
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
    const node = record.node;
    // Tells this call apart from other nodes' calls waiting on the same task.
    const epoch = randomInt(1, 2 ** 47);
    const tell = (signal: Omit<OwnerSignal, "epoch">) => {
      if (node !== undefined)
        void Promise.resolve(this.store.signal(node, key, { ...signal, epoch })).catch((e: unknown) => this.report(e));
    };
    const relay = (queued: JsonRpcMessage) => {
      const envelope =
        !isResponse(queued) && queued.method === RELAY && isPlainObject(queued.params) ? queued.params : undefined;
      if (envelope?.epoch !== epoch || !isPlainObject(envelope.message)) return;
      const message = envelope.message;
      if (typeof message.method !== "string") return;
      const params = isPlainObject(message.params) ? message.params : undefined;
      if (message.id === undefined) return void context.notify(message.method, params).catch(() => undefined);
      const id = message.id;
      context.request(message.method, params).then(
        (result) =>
          tell({ type: "answer", id: id as RequestId, message: { jsonrpc: "2.0", id: id as RequestId, result } }),
        (error: unknown) => {
          const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, String(error));
          tell({
            type: "answer",
            id: id as RequestId,
            message: { jsonrpc: "2.0", id: id as RequestId, error: rpc.toJSON() },
          });
        },
      );
    };
    const following = this.follow(key, replay, context.signal, (r) => r.outcome !== undefined, relay);
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
    if (record.node !== undefined)
      await Promise.resolve(this.store.signal(record.node, key, { type: "cancel", reason }));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.cancelWaitMs);
    try {
      const outcome = await this.follow(key, replay, controller.signal, (r) => isTerminal(r.state!.status));
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

  /** Stop hearing signals and end every follow (shutdown); the receiver then frees its tasks. */
  close(): void {
    this.stopSignals();
    clearInterval(this.relayTimer);
    for (const stop of [...this.follows]) stop();
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

  /** The task's record and queue, or the unknown-task error (no record, another owner's, or not a task). */
  private async read(key: string, owner: string): Promise<{ record: StoredOperation; replay: Replay }> {
    const store = this.store;
    const [record, items] = await Promise.all([store.get(key), store.readAfter(key, 0)]);
    if (record === undefined || record.kind !== "task" || record.principal !== owner) throw this.unknownError();
    const replay: Replay = { state: undefined, outcome: undefined, last: 0 };
    for (const item of items) absorb(replay, item);
    if (replay.state === undefined) throw this.unknownError();
    return { record, replay };
  }

  /** Reads the task's queue on from `replay` until `done(replay)`, its node is lost, or `signal` aborts. */
  private follow(
    key: string,
    replay: Replay,
    signal: AbortSignal,
    done: (replay: Replay) => boolean,
    other?: (message: JsonRpcMessage) => void,
  ): Promise<"done" | "lost" | "stopped"> {
    return new Promise((resolve) => {
      let ended = false;
      const end = (how: "done" | "lost" | "stopped") => {
        if (ended) return;
        ended = true;
        following.close();
        this.follows.delete(stop);
        signal.removeEventListener("abort", stop);
        resolve(how);
      };
      const stop = () => end("stopped");
      const following = this.store.follow(key, replay.last, {
        message: (item) => {
          absorb(replay, item);
          if (done(replay)) end("done");
          else other?.(item.message);
        },
        lost: () => end("lost"),
      });
      this.follows.add(stop);
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
   * final answer in the node's place (and takes the record, so followers stop reporting it lost); any other node
   * reads that, or, when it is not there yet, answers with the same failure itself.
   */
  private async takeOver(
    key: string,
    record: StoredOperation,
    replay: Replay,
    status: "failed" | "cancelled",
  ): Promise<{ state: TaskState; outcome: TaskOutcome }> {
    const store = this.store;
    const claim = await store.claim(key);
    if (claim !== 1) {
      const again: Replay = { state: replay.state, outcome: replay.outcome, last: replay.last };
      for (const item of await store.readAfter(key, again.last)) absorb(again, item);
      if (again.outcome !== undefined && isTerminal(again.state!.status))
        return { state: again.state!, outcome: again.outcome };
      return ended(replay.state!, "failed");
    }
    const taken = ended(replay.state!, status);
    const final = "result" in taken.outcome ? { result: taken.outcome.result } : { error: taken.outcome.error };
    await Promise.all([
      store.append(key, { seq: replay.last + 1, message: stateMessage(taken.state) }),
      store.append(key, { seq: replay.last + 2, message: { jsonrpc: "2.0", id: record.requestId, ...final } }),
      store.update(key, { status: "failed", node: store.nodeId }),
    ]);
    replay.state = taken.state;
    replay.outcome = taken.outcome;
    replay.last += 2;
    return taken;
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
