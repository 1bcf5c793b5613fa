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
}

/** Calls `next` with the value, at once when it is not a promise (keeps the in-memory path synchronous). */
export function whenReady<T, R>(value: Awaitable<T>, next: (value: T) => R): R | Promise<R> {
  if (value instanceof Promise) return value.then(next);
  return next(value);
}
