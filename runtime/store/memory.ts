// The default operation store: plain maps in this process, synchronous, nothing shared between nodes.
import { StableMap } from "../rpc/stable-map.js";
import type { QueuedMessage, StoredOperation, SyncOperationStore, SyncRecord } from "./types.js";

export class MemoryOperationStore implements SyncOperationStore {
  readonly synchronous = true;
  private readonly entries = new StableMap<string, SyncRecord>();

  create(key: string, operation: StoredOperation): void {
    if (this.entries.has(key)) throw new Error("operation key already in use");
    this.entries.set(key, { operation: { ...operation }, queue: [], head: 0 });
  }

  open(key: string, operation: StoredOperation): SyncRecord {
    const record: SyncRecord = { operation, queue: [], head: 0 };
    this.entries.set(key, record);
    return record;
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
