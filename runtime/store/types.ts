// The one store interface for operations that outlive a connection: their state and their per-request message queues.
import type { JsonRpcMessage, RequestId } from "../jsonrpc.js";

/** A value now, or later: the in-memory store answers synchronously, a networked store does not. */
export type Awaitable<T> = T | Promise<T>;

/** processing: the handler runs. completed/failed: the final response is known (failed = an error response). */
export type StoredStatus = "processing" | "completed" | "failed";

/** What a store keeps about one operation (resumable request or async tool run), besides its queue. */
export interface StoredOperation {
  kind: "resumable" | "async";
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
}

/** One message of an operation's queue, numbered from 1 in the order it was produced. */
export interface QueuedMessage {
  seq: number;
  message: JsonRpcMessage;
}

/**
 * Operation state and message queues, keyed by an opaque key (a hash of the operation's secret token, never
 * the token itself). The in-memory store is the default; runtime/store/redis.ts shares them between nodes.
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
   * confirm: the client confirmed it received the messages up to `seq`.
   */
  type: "attach" | "detach" | "touch" | "cancel" | "delivered" | "answer" | "confirm";
  /** For attach and confirm: the highest seq the client confirmed. For answer: the answered request's id. */
  seq?: number;
  id?: RequestId;
  /** For answer: the response message (result or error) of a server-to-client request. */
  message?: JsonRpcMessage;
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

export function isSharedStore(store: OperationStore): store is SharedOperationStore {
  return typeof (store as Partial<SharedOperationStore>).follow === "function" && typeof (store as Partial<SharedOperationStore>).nodeId === "string";
}

/** Calls `next` with the value, at once when it is not a promise (keeps the in-memory path synchronous). */
export function whenReady<T, R>(value: Awaitable<T>, next: (value: T) => R): R | Promise<R> {
  if (value instanceof Promise) return value.then(next);
  return next(value);
}
