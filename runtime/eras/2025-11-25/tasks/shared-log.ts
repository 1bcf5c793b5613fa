// The node running a task, on a shared store: the task's record, states, final answer and relayed messages.
import { ConnectionClosedError } from "../../../rpc/errors.js";
import {
  ErrorCode,
  RpcError,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type RequestId,
} from "../../../rpc/jsonrpc.js";
import type { RequestContext, RequestOptions } from "../../../rpc/peer.js";
import type { SharedOperationStore } from "../../../store/types.js";
import { TASKS_RESULT, TASK_STATUS_NOTIFICATION, type TaskState } from "./protocol.js";

/** The final answer of a task's request: exactly what tasks/result returns (a result, or a JSON-RPC error). */
export type TaskOutcome = { result: JsonObject } | { error: JsonRpcErrorObject };

/** A Task as carried by a status message in a task's queue (taskId included). */
export function stateMessage(state: TaskState) {
  return { jsonrpc: "2.0" as const, method: TASK_STATUS_NOTIFICATION, params: { ...state } };
}

/**
 * Method of the envelope a relayed message travels in through a task's queue (never sent on the wire): it names the
 * one tasks/result call (by epoch) that passes it on, so two calls waiting on other nodes never both ask the user.
 */
export const RELAY = "mcpgen/tasks/relay";

/** One task's record and queue, written by the node running it, each write after the one before. */
export class SharedTaskLog {
  private nextSeq = 1;
  /** The latest store work (stores that do not keep call order by themselves). */
  private writes: Promise<unknown>;
  private ended = false;
  /** tasks/result calls on other nodes that the task's input requests and notifications go through, by epoch. */
  readonly remote = new Map<number, RemoteResult>();
  /** Ids of the input requests relayed through the queue (unique in the task). */
  nextInputId = 1;
  /** The first relayed message not yet dropped (Infinity: none), and the seq up to which the queue was trimmed. */
  private relayedFrom = Infinity;
  private trimmed = 0;

  constructor(
    private readonly store: SharedOperationStore,
    private readonly report: (error: unknown) => void,
    readonly key: string,
    private readonly requestId: RequestId,
    created: Promise<void>,
    first: TaskState,
  ) {
    this.writes = created;
    this.state(first);
  }

  /**
   * Record the task's state (a status change, or a new statusMessage). Only the latest state is read, so the ones
   * before it go: a task reporting its steps for hours keeps one message in the store, not one per step.
   */
  state(state: TaskState): void {
    if (this.ended) return;
    const seq = this.nextSeq++;
    this.then((store) => store.append(this.key, { seq, message: stateMessage(state) }));
    // Earlier states go, but relayed messages stay for the node passing them on while one is attached (with none
    // attached, the requests of relays that ended were cancelled, to be sent again).
    const upTo = this.remote.size === 0 ? seq - 1 : Math.min(seq, this.relayedFrom) - 1;
    if (this.remote.size === 0) this.relayedFrom = Infinity;
    if (upTo > this.trimmed) {
      this.trimmed = upTo;
      this.then((store) => store.confirm(this.key, upTo));
    }
  }

  /** Queue a message for the tasks/result call `epoch` waiting on another node (an input request, a notification). */
  put(epoch: number, message: JsonRpcMessage): void {
    if (this.ended) return;
    const seq = this.nextSeq++;
    this.relayedFrom = Math.min(this.relayedFrom, seq);
    const envelope = { jsonrpc: "2.0" as const, method: RELAY, params: { epoch, message } };
    this.then((store) => store.append(this.key, { seq, message: envelope }));
  }

  /** Record the terminal state and the final answer; the record then reads as finished. */
  finish(state: TaskState, outcome: TaskOutcome): void {
    if (this.ended) return;
    this.state(state);
    this.ended = true;
    const seq = this.nextSeq++;
    const message =
      "result" in outcome
        ? { jsonrpc: "2.0" as const, id: this.requestId, result: outcome.result }
        : { jsonrpc: "2.0" as const, id: this.requestId, error: outcome.error };
    this.then((store) => store.append(this.key, { seq, message }));
    this.then((store) => store.update(this.key, { status: state.status === "completed" ? "completed" : "failed" }));
  }

  /** The task was freed (ttl over): its record and queue go; its index slot expires on its own. */
  free(): void {
    this.ended = true;
    for (const relay of [...this.remote.values()]) relay.detach();
    this.then((store) => store.delete(this.key));
  }

  private then(work: (store: SharedOperationStore) => unknown): void {
    const store = this.store;
    const report = this.report;
    // A store that keeps call order (one pipelined connection) needs no waiting between the writes.
    if (store.ordered === true) {
      try {
        void Promise.resolve(work(store)).catch(report);
      } catch (error) {
        report(error);
      }
      return;
    }
    this.writes = this.writes.then(() => work(store)).catch(report);
  }
}

/**
 * A tasks/result call waiting on another node, as the node running the task sees it: one of the task's waiting
 * calls, whose input requests and notifications go into the task's queue for that node to pass on to its
 * requestor; the answers come back as signals.
 */
export class RemoteResult implements RequestContext {
  readonly method = TASKS_RESULT;
  readonly requestId: RequestId;
  private readonly abort = new AbortController();
  private readonly pending = new Map<RequestId, { resolve: (r: JsonObject) => void; reject: (e: unknown) => void }>();
  /** Removes it from the task's waiting calls. */
  leave: () => void = () => undefined;
  /** Date.now() of the last check-in from the node serving the call. */
  touchedAt = Date.now();

  constructor(
    private readonly log: SharedTaskLog,
    readonly epoch: number,
    /** Its node's check-ins are watched until it detaches. */
    private readonly relays: Set<RemoteResult>,
  ) {
    relays.add(this);
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
    const id = `input-${this.log.nextInputId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      options?.signal?.addEventListener("abort", () => this.settle(id, undefined, options.signal!.reason), {
        once: true,
      });
      this.log.put(this.epoch, { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    this.log.put(this.epoch, { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
    return Promise.resolve();
  }

  /** The other node passed on the requestor's answer to an input request. */
  answered(id: unknown, message: unknown): void {
    if (typeof id !== "string" || !isPlainObject(message)) return;
    if (isPlainObject(message.error)) {
      const e = message.error as { code?: unknown; message?: unknown; data?: unknown };
      const error = new RpcError(typeof e.code === "number" ? e.code : ErrorCode.InternalError, String(e.message));
      this.settle(id, undefined, e.data === undefined ? error : new RpcError(error.code, error.message, e.data));
    } else this.settle(id, isPlainObject(message.result) ? message.result : {}, undefined);
  }

  /** The call ended (or its node stopped): its unanswered requests fail as with a closed connection (re-sent later). */
  detach(): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    this.log.remote.delete(this.epoch);
    this.relays.delete(this);
    this.leave();
    for (const id of [...this.pending.keys()]) this.settle(id, undefined, new ConnectionClosedError());
  }

  private settle(id: RequestId, result: JsonObject | undefined, error: unknown): void {
    const waiter = this.pending.get(id);
    if (waiter === undefined) return;
    this.pending.delete(id);
    if (result !== undefined) waiter.resolve(result);
    else waiter.reject(error);
  }
}

/** A terminal task's answer as recorded: its error when it has one (failed by a throw, cancelled), else its result. */
export function outcomeOf(task: { result: JsonObject | undefined; error: RpcError | undefined }): TaskOutcome {
  return task.error !== undefined ? { error: task.error.toJSON() } : { result: task.result ?? {} };
}
