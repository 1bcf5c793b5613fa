// A durable operation's store side (OperationLog) and queue accounting (QueueAccount), over a synchronous store and
// one that completes calls out of order.
import { describe, expect, it } from "vitest";
import { DurableEngine, type DurableOperation } from "../../runtime/durable/engine.js";
import { OperationLog } from "../../runtime/durable/operation.js";
import { QueueAccount } from "../../runtime/durable/queue.js";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import type { JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { OperationStore, QueuedMessage, StoredOperation } from "../../runtime/store/types.js";
import { rng } from "../kit/random.js";
import { sleep, until } from "../kit/timing.js";

/** The in-memory store behind calls that take effect after a seeded random delay: only the caller can keep order. */
class OutOfOrderStore implements OperationStore {
  readonly inner = new MemoryOperationStore();
  constructor(private readonly random: () => number) {}
  private later<T>(work: () => T): Promise<T> {
    return sleep(Math.floor(this.random() * 5)).then(work);
  }
  create(key: string, operation: StoredOperation) {
    return this.later(() => this.inner.create(key, operation));
  }
  get(key: string) {
    return this.later(() => this.inner.get(key));
  }
  update(key: string, patch: Partial<StoredOperation>) {
    return this.later(() => this.inner.update(key, patch));
  }
  append(key: string, item: QueuedMessage) {
    return this.later(() => this.inner.append(key, item));
  }
  readAfter(key: string, afterSeq: number) {
    return this.later(() => this.inner.readAfter(key, afterSeq));
  }
  confirm(key: string, seq: number) {
    return this.later(() => this.inner.confirm(key, seq));
  }
  delete(key: string) {
    return this.later(() => this.inner.delete(key));
  }
  count() {
    return this.later(() => this.inner.count());
  }
}

const operation = (key: string): DurableOperation => ({ key, keptToken: "", principal: "alice", freed: false });
const progress = (n: number): JsonRpcMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "t", progress: n },
});
const record = { kind: "resumable", requestId: 1, status: "processing", pendingInput: 0, keepFor: 60 } as const;

describe("OperationLog", () => {
  it("lands every write of an operation in the order made, on a store that completes calls out of order", async () => {
    const store = new OutOfOrderStore(rng(15));
    const errors: unknown[] = [];
    const engine = new DurableEngine(store, (error) => errors.push(error));
    const op = operation("k1");
    const log = new OperationLog(engine, op, record);
    for (let n = 1; n <= 20; n++) log.append(progress(n));
    log.confirm(5);
    const final: JsonRpcMessage = { jsonrpc: "2.0", id: 1, result: { content: [] } };
    log.finish(log.nextSeq++, final, "completed");
    await until(() => store.inner.get("k1")?.status === "completed");
    const queued = store.inner.readAfter("k1", 0);
    expect(queued.map((item) => item.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 6));
    expect(queued.at(-1)?.message).toBe(final);
    expect(store.inner.get("k1")).toMatchObject({ principal: "alice", status: "completed" });
    log.delete();
    await until(() => store.inner.count() === 0);
    expect(errors).toEqual([]);
  });

  it("writes through a synchronous store at once, keeping the final response out of the queue", () => {
    const store = new MemoryOperationStore();
    const engine = new DurableEngine(store, (error) => {
      throw error;
    });
    const log = new OperationLog(engine, operation("k2"), record);
    log.append(progress(1));
    log.append(progress(2));
    log.finish(log.nextSeq++, { jsonrpc: "2.0", id: 1, error: { code: -1, message: "no" } }, "failed");
    expect(store.get("k2")?.status).toBe("failed");
    expect(store.readAfter("k2", 0).map((item) => item.seq)).toEqual([1, 2]);
    log.confirm(1);
    expect(store.readAfter("k2", 0).map((item) => item.seq)).toEqual([2]);
    log.delete();
    expect(store.count()).toBe(0);
  });
});

describe("QueueAccount", () => {
  it("asks for a confirmation every askEvery bytes and frees up to the last mark a confirmation covers", () => {
    const account = new QueueAccount(100);
    account.account(1, 150);
    expect(account.askDue).toBe(true);
    account.account(2, 50, true);
    expect(account.askDue).toBe(false);
    account.account(3, 50);
    expect(account.queuedBytes).toBe(250);
    // Between marks only the bytes up to the last mark passed are known: 200.
    expect(account.confirmed(2, 3)).toBe(2);
    expect(account.queuedBytes).toBe(50);
    // Confirming the last message queued frees everything.
    expect(account.confirmed(3, 3)).toBe(3);
    expect(account.queuedBytes).toBe(0);
  });

  it.each([
    ["a seq not yet made", 9, 2, 2],
    ["the final response (kept until freed)", 4, 4, 3],
    ["nothing new", 1, 4, 0],
  ])("clamps a confirmation of %s", (_name, seq, lastSeq, expected) => {
    const account = new QueueAccount(1000);
    account.account(1, 10);
    account.account(2, 10);
    account.account(3, 10);
    if (lastSeq === 4) account.finalSeq = 4;
    if (expected === 0) account.confirmed(3, lastSeq);
    expect(account.confirmed(seq, lastSeq)).toBe(expected);
  });

  it("recounts from a replay: what the queue still holds is what was not confirmed", () => {
    const account = new QueueAccount(100);
    account.account(1, 120);
    account.account(2, 30, true);
    account.recount(2, 0);
    expect(account.confirmedSeq).toBe(2);
    expect(account.queuedBytes).toBe(0);
  });
});
