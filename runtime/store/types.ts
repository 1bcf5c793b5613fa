// The one store interface for operations that outlive a connection: their state and their per-request message queues.
import type { JsonObject, JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";

/** A value now, or later: the in-memory store answers synchronously, a networked store does not. */
export type Awaitable<T> = T | Promise<T>;

/** processing: the handler runs. completed/failed: the final response is known (failed = an error response). */
export type StoredStatus = "processing" | "completed" | "failed";

/** What a store keeps about one operation (resumable request, async tool run or task), besides its queue. */
export interface StoredOperation {
  /** "task": a core task (MCP 2025-11-25); "extension-task": a task of the Tasks extension (MCP 2026-07-28). */
  kind: "resumable" | "async" | "task" | "extension-task";
  /** The JSON-RPC id of the request (resumable) or of the tools/async/call that started the run. */
  requestId: RequestId;
  /** The authenticated principal that started it, when the app has principals. */
  principal?: string;
  status: StoredStatus;
  /** Server-to-client requests of the operation that still wait for an answer. */
  pendingInput: number;
  /** The node running it (multi-node stores); a node that stops renewing its lease is presumed dead. */
  node?: string;
  /**
   * Seconds the record may outlive its end (or its node) before a shared store drops it on its own; the node
   * running it deletes it earlier when it can. Default: the store's choice.
   */
  keepFor?: number;
  /** Read-only: set by a shared store on an unfinished operation whose node stopped renewing its lease. */
  lost?: boolean;
  /** Read-only: messages still queued (not confirmed), when the store counts them cheaply. */
  queued?: number;
  /** A task's state (the schema's Task, as tasks/get reports it), for operations of kind "task". */
  task?: { [key: string]: unknown };
}

/** One message of an operation's queue, numbered from 1 in the order it was produced. */
export interface QueuedMessage {
  seq: number;
  message: JsonRpcMessage;
}

/**
 * Operation state and message queues, keyed by an opaque key (derived from the operation's secret token, never
 * the token itself). The in-memory store is the default; runtime/store/redis.ts shares them between nodes.
 *
 * The contract every implementation must keep:
 * - `create` makes a record under a key not in use; `get` returns a copy of the record, or undefined once it was
 *   deleted (or, for a shared store, dropped after `keepFor` seconds past its end or its node's lease).
 * - `append` calls for one key carry increasing `seq` values, made by the one node running the operation; the
 *   store keeps them in seq order and `readAfter(key, n)` returns exactly those with seq > n not yet confirmed.
 * - `confirm(key, n)` may drop every message with seq <= n; it never drops a later one. Confirming twice, or a seq
 *   lower than before, changes nothing.
 * - Calls for one key take effect in the order they were made when the caller waited for each one, or always
 *   when `ordered` is true. Calls for an unknown key are ignored (appends, updates, confirms) or answer empty.
 * - A store may be shared by many engines: it never interprets messages, and keys are opaque to it.
 */
export interface OperationStore {
  create(key: string, operation: StoredOperation): Awaitable<void>;
  get(key: string): Awaitable<StoredOperation | undefined>;
  update(key: string, patch: Partial<StoredOperation>): Awaitable<void>;
  /** Appends a message that already carries its sequence number. */
  append(key: string, item: QueuedMessage): Awaitable<void>;
  /** Messages with seq > `afterSeq`, in order. */
  readAfter(key: string, afterSeq: number): Awaitable<QueuedMessage[]>;
  /** The peer confirmed everything up to `seq`: those messages may go. */
  confirm(key: string, seq: number): Awaitable<void>;
  /** Forget the operation and its queue. */
  delete(key: string): Awaitable<void>;
  /** Operations held (for leak checks and metrics). */
  count(): Awaitable<number>;
  /**
   * True when the store applies calls in the order they are made even before earlier ones completed (one
   * connection, commands pipelined): callers then need not wait for one append before making the next.
   */
  readonly ordered?: boolean;
}

/** What a follower of an operation's queue hears. */
export interface FollowEvents {
  /** The next message, in order, each once. */
  message(item: QueuedMessage): void;
  /** The operation can no longer finish: its node stopped renewing its lease, or its record is gone. */
  lost(reason: string): void;
}

/** Stops following. */
export interface Following {
  close(): void;
}

/** A request from one node to the node running an operation. */
export interface OwnerSignal {
  /**
   * attach/detach/touch: a resume or join on another node started, ended, or checked in. cancel: stop it.
   * confirm: the client confirmed it received the messages up to `seq`. input: the client answered the
   * operation's input requests on another node (`responses`).
   */
  type: "attach" | "detach" | "touch" | "cancel" | "delivered" | "answer" | "confirm" | "input";
  /** For attach and confirm: the highest seq the client confirmed. For answer: the answered request's id. */
  seq?: number;
  id?: RequestId;
  /** For answer: the response message (result or error) of a server-to-client request. */
  message?: JsonRpcMessage;
  /**
   * For input: the client's answers to the operation's input requests, in one object as its protocol keys them
   * (a protocol that asks for input in its state rather than by server-to-client requests, each answered alone).
   */
  responses?: JsonObject;
  reason?: string;
  /** For touch/attach of async runs: keepAlive asked for, seconds. */
  keepAlive?: number;
  /**
   * For attach/touch/detach/delivered of a resumed request: the attachment number the sender claimed. Signals
   * travel apart from the resumes themselves, so a resume overtaken by a later one (here or on another node)
   * could otherwise arrive last and take the request from the client's live connection.
   */
  epoch?: number;
}

/**
 * A store shared by several nodes (processes behind a load balancer): besides state and queues it lets a node
 * serve an operation another node runs, by following its queue live and signalling its node.
 */
export interface SharedOperationStore extends OperationStore {
  /** This node's id; operations it creates with `node` set to it have their lease renewed by this store. */
  readonly nodeId: string;
  /** Messages with seq > `afterSeq`, then every new one as it is appended, until close() or lost(). */
  follow(key: string, afterSeq: number, events: FollowEvents): Following;
  /** Deliver a signal to the node running the operation (best effort: lost if that node is gone). */
  signal(node: string, key: string, signal: OwnerSignal): Awaitable<void>;
  /** Hear signals for operations this node runs. Returns the function that stops listening. */
  onSignal(listener: (key: string, signal: OwnerSignal) => void): () => void;
  /**
   * The next attachment number of an operation, increasing across all nodes (0 when its record is gone): each
   * resume claims one, and the node running the operation follows only the highest it has seen.
   */
  claim(key: string): Awaitable<number>;
}

/** One operation's record and queue as an in-process store holds them (see SyncOperationStore.open). */
export interface SyncRecord {
  operation: StoredOperation;
  queue: QueuedMessage[];
  /** Index of the first unconfirmed message; confirmed ones are dropped in batches, not one shift at a time. */
  head: number;
}

/**
 * A store in this process whose every call completes synchronously and cannot fail (the in-memory store): an
 * engine then needs no write ordering, and may write an operation's record and queue through the handle `open`
 * returns. A subclass that makes any call asynchronous must not claim `synchronous`.
 */
export interface SyncOperationStore extends OperationStore {
  readonly synchronous: true;
  create(key: string, operation: StoredOperation): void;
  get(key: string): StoredOperation | undefined;
  update(key: string, patch: Partial<StoredOperation>): void;
  append(key: string, item: QueuedMessage): void;
  readAfter(key: string, afterSeq: number): QueuedMessage[];
  confirm(key: string, seq: number): void;
  delete(key: string): void;
  count(): number;
  /**
   * create() taking `operation` as it is (no copy) and returning its record. It does not check that the key is
   * free: callers pass fresh random keys (96 bits), and the extra lookup was a visible part of a call's cost.
   */
  open(key: string, operation: StoredOperation): SyncRecord;
}

/** @internal */
export function isSyncStore(store: OperationStore): store is SyncOperationStore {
  return (store as Partial<SyncOperationStore>).synchronous === true;
}

/** @internal */
export function isSharedStore(store: OperationStore): store is SharedOperationStore {
  return (
    typeof (store as Partial<SharedOperationStore>).follow === "function" &&
    typeof (store as Partial<SharedOperationStore>).nodeId === "string"
  );
}

/** @internal Calls `next` with the value, at once when it is not a promise (keeps the in-memory path synchronous). */
export function whenReady<T, R>(value: Awaitable<T>, next: (value: T) => R): R | Promise<R> {
  if (value instanceof Promise) return value.then(next);
  return next(value);
}
