// The default operation store: plain maps in this process, synchronous, nothing shared between nodes.
import { StableMap } from "../stable-map.js";
import type { OperationStore, QueuedMessage, StoredOperation } from "./types.js";

/** @internal One operation's record and queue; the resumable manager holds its own entries' handles. */
export interface MemoryEntry {
  operation: StoredOperation;
  queue: QueuedMessage[];
  /** Index of the first unconfirmed message; confirmed ones are dropped in batches, not one shift at a time. */
  head: number;
  /** What the caller that adopted it keeps with it (the resumable manager: its request, found by key on resume). */
  holder: unknown;
}

export class MemoryOperationStore implements OperationStore {
  private readonly entries = new StableMap<string, MemoryEntry>();

  create(key: string, operation: StoredOperation): void {
    if (this.entries.has(key)) throw new Error("operation key already in use");
    this.entries.set(key, { operation: { ...operation }, queue: [], head: 0, holder: undefined });
  }

  /**
   * @internal create() without the copy, returning the entry: for a caller that made the record for this call
   * alone and appends through the handle (the resumable manager, once per request). Unlike create(), it does not
   * look for a key in use first: the caller's keys are fresh random values (96 bits), and the extra hash lookup
   * was a visible part of what an in-memory resumable call costs over a plain one.
   */
  adopt(key: string, operation: StoredOperation, holder: unknown): MemoryEntry {
    const entry: MemoryEntry = { operation, queue: [], head: 0, holder };
    this.entries.set(key, entry);
    return entry;
  }

  /** @internal The holder an adopted entry was given, found by key (one lookup table serves store and caller). */
  holderOf(key: string): unknown {
    return this.entries.get(key)?.holder;
  }

  /** @internal Every adopted entry's holder. */
  *holders(): IterableIterator<unknown> {
    for (const entry of this.entries.values()) if (entry.holder !== undefined) yield entry.holder;
  }

  get(key: string): StoredOperation | undefined {
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : { ...entry.operation };
  }

  update(key: string, patch: Partial<StoredOperation>): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) Object.assign(entry.operation, patch);
  }

  append(key: string, item: QueuedMessage): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.queue.push(item);
  }

  readAfter(key: string, afterSeq: number): QueuedMessage[] {
    const entry = this.entries.get(key);
    if (entry === undefined) return [];
    const queue = entry.queue;
    let i = entry.head;
    while (i < queue.length && queue[i].seq <= afterSeq) i++;
    return queue.slice(i);
  }

  confirm(key: string, seq: number): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    const queue = entry.queue;
    let head = entry.head;
    while (head < queue.length && queue[head].seq <= seq) head++;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else if (head > 64 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    entry.head = head;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  count(): number {
    return this.entries.size;
  }

  /** Messages queued and not confirmed, over every operation, and their size as JSON (for tests and metrics: it serializes them). */
  queued(): { messages: number; bytes: number } {
    let messages = 0;
    let bytes = 0;
    for (const entry of this.entries.values()) {
      for (let i = entry.head; i < entry.queue.length; i++) {
        messages++;
        bytes += JSON.stringify(entry.queue[i].message).length;
      }
    }
    return { messages, bytes };
  }
}
