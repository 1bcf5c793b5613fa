// A durable operation's record and message queue in the store: created, appended to in seq order, finished,
// confirmed and deleted, every write in the operation's own order.
import type { JsonRpcMessage } from "../rpc/jsonrpc.js";
import type { StoredOperation, StoredStatus, SyncRecord } from "../store/types.js";
import type { DurableEngine, DurableOperation } from "./engine.js";

/** What a protocol says about a new operation's record; the log adds its principal and its node. */
export type NewRecord = Pick<StoredOperation, "kind" | "requestId" | "status" | "pendingInput" | "keepFor">;

/**
 * The store side of one operation. Messages are numbered from 1 in the order they are produced (`nextSeq`), so a
 * client can say what it has and a follower on another node reads them in order. On a synchronous store the record
 * is written through directly; on any other store each write waits for the operation's earlier ones (WriteOrder).
 */
export class OperationLog<T extends DurableOperation> {
  /** The seq the next message of the operation gets. */
  nextSeq = 1;
  /** The record in a synchronous store, written through directly. */
  private readonly entry: SyncRecord | undefined;
  /** The latest store work still to complete on another store (see written()). */
  private last: Promise<unknown> | undefined = undefined;

  constructor(
    private readonly engine: DurableEngine<T>,
    private readonly operation: T,
    record: NewRecord,
  ) {
    const stored: StoredOperation = record;
    if (operation.principal !== undefined) stored.principal = operation.principal;
    if (engine.shared !== undefined) stored.node = engine.shared.nodeId;
    const key = operation.key;
    if (engine.direct !== undefined) this.entry = engine.direct.open(key, stored);
    else this.chain(() => engine.store.create(key, stored));
  }

  /** Run store work after the operation's earlier writes (a replay reads after what was appended before it). */
  chain<R>(work: () => R | Promise<R>): R | Promise<R> {
    const done = this.engine.writes.chain(this.operation, work);
    if (done instanceof Promise) this.last = done;
    return done;
  }

  /**
   * Resolves once every write made so far has landed (a failed one was reported): a protocol that answers its
   * client only once other nodes can find the operation (its record and first messages) waits for this. Each write
   * starts after the ones before it, or the store applies them in call order, so the latest one ending means all
   * have; on a synchronous store they all landed already.
   */
  written(): Promise<void> {
    const last = this.last;
    return last === undefined ? Promise.resolve() : last.then(ignore, ignore);
  }

  /** Queue a message under the seq the caller took from nextSeq (the seq is part of what it stamps). */
  put(seq: number, message: JsonRpcMessage): void {
    const entry = this.entry;
    if (entry !== undefined) {
      entry.queue.push({ seq, message });
      return;
    }
    const store = this.engine.store;
    const key = this.operation.key;
    this.chain(() => store.append(key, { seq, message }));
  }

  /** Queue a message under the next seq; returns that seq. */
  append(message: JsonRpcMessage): number {
    const seq = this.nextSeq++;
    this.put(seq, message);
    return seq;
  }

  /**
   * The final response, under `seq`, and the status it gives. A synchronous store is in this process, where no
   * other node follows the queue: only the status is written, and the operation keeps the response to send last.
   */
  finish(seq: number, final: JsonRpcMessage, status: StoredStatus): void {
    const entry = this.entry;
    if (entry !== undefined) {
      entry.operation.status = status;
      return;
    }
    this.put(seq, final);
    this.update({ status });
  }

  update(patch: Partial<StoredOperation>): void {
    const store = this.engine.store;
    const key = this.operation.key;
    this.chain(() => store.update(key, patch));
  }

  /** The peer has every message up to `seq`: they may leave the queue. */
  confirm(seq: number): void {
    const direct = this.engine.direct;
    const key = this.operation.key;
    if (direct !== undefined) direct.confirm(key, seq);
    else {
      const store = this.engine.store;
      void this.chain(() => store.confirm(key, seq));
    }
  }

  /** Forget the record and its queue. */
  delete(): void {
    const direct = this.engine.direct;
    const key = this.operation.key;
    if (direct !== undefined) direct.delete(key);
    else {
      const store = this.engine.store;
      // chain() tracks and forgets the work itself (and reports a failure); a .finally here would re-raise it.
      void this.chain(() => store.delete(key));
    }
  }
}

function ignore(): void {}
