// The durable engine's shared-store pieces: OperationLog.written(), RemoteOperations.read and takeOver, answer
// signals, and PendingRequests rejected for a carrier that went away.
import { describe, expect, it } from "vitest";
import { DurableEngine, type DurableOperation } from "../../runtime/durable/engine.js";
import { PendingRequests } from "../../runtime/durable/input.js";
import { OperationLog, type NewRecord } from "../../runtime/durable/operation.js";
import { RemoteOperations, answerSignal } from "../../runtime/durable/remote.js";
import { ConnectionClosedError, RequestCancelledError } from "../../runtime/rpc/errors.js";
import { RpcError, type JsonRpcMessage, type JsonRpcResponse } from "../../runtime/rpc/jsonrpc.js";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import type { OperationStore } from "../../runtime/store/types.js";
import { sleep } from "../kit/timing.js";
import { redisForTests } from "../store/redis-server.js";

const redis = redisForTests();
let prefixes = 0;

/**
 * `inner` behind calls that each take effect a few ms later, the later ones first, and that no longer claims to be
 * synchronous: only the engine's write order keeps an operation's writes in order.
 */
function late(inner: MemoryOperationStore): OperationStore {
  let delay = 12;
  return new Proxy(inner, {
    get(target, name) {
      if (name === "synchronous" || name === "open") return undefined;
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        delay = delay > 2 ? delay - 2 : 12;
        return sleep(delay).then(() => Reflect.apply(value, target, args));
      };
    },
  });
}

const operation = (key: string): DurableOperation => ({ key, keptToken: "", principal: "alice", freed: false });
const note = (n: number): JsonRpcMessage => ({ jsonrpc: "2.0", method: "notifications/message", params: { n } });
const record: NewRecord = { kind: "async", requestId: 7, status: "processing", pendingInput: 0, keepFor: 60 };
const unknown = () => new RpcError(-32602, "unknown operation");

/** Two nodes on one Redis: each an engine over its own store (the same prefix), and its remote side. */
async function nodes(leaseMs = 600) {
  const prefix = `durable${prefixes++}:`;
  const make = async () => {
    const store = redis.store({ prefix, leaseMs });
    await store.ready();
    const errors: unknown[] = [];
    const engine = redis.closeAfter(new DurableEngine<DurableOperation>(store, (error) => errors.push(error)));
    return { store, engine, remote: RemoteOperations.of(engine)!, errors };
  };
  return [await make(), await make()] as const;
}

describe("OperationLog.written()", () => {
  it("resolves at once on a synchronous store, where every write already landed", async () => {
    const store = new MemoryOperationStore();
    const log = new OperationLog(new DurableEngine(store, () => undefined), operation("k"), { ...record });
    log.append(note(1));
    await log.written();
    expect(store.get("k")).toMatchObject({ principal: "alice", status: "processing" });
  });

  it("resolves once the writes made so far landed, on a store that completes them late", async () => {
    const inner = new MemoryOperationStore();
    const log = new OperationLog(new DurableEngine(late(inner), () => undefined), operation("k"), { ...record });
    for (let n = 1; n <= 5; n++) log.append(note(n));
    await log.written();
    expect(inner.get("k")).toMatchObject({ kind: "async", principal: "alice" });
    expect(inner.readAfter("k", 0).map((item) => item.seq)).toEqual([1, 2, 3, 4, 5]);
    // Later writes are waited for by a later call.
    log.update({ pendingInput: 2 });
    await log.written();
    expect(inner.get("k")?.pendingInput).toBe(2);
  });

  it("resolves when a write failed (the failure goes to the engine's report)", async () => {
    const errors: unknown[] = [];
    const engine = new DurableEngine(late(new MemoryOperationStore()), (error) => errors.push(error));
    const log = new OperationLog(engine, operation("k"), { ...record });
    log.chain(() => Promise.reject(new Error("store down")));
    await log.written();
    expect(errors.map((e) => (e as Error).message)).toEqual(["store down"]);
  });

  it("on Redis (calls pipelined, in order): resolves once the last append was answered; another node reads them", async () => {
    const [a, b] = await nodes();
    const answered: number[] = [];
    const append = a.store.append.bind(a.store);
    a.store.append = (key, item) => append(key, item).then(() => void answered.push(item.seq));
    const log = new OperationLog(a.engine, operation("k"), { ...record });
    for (let n = 1; n <= 20; n++) log.append(note(n));
    await log.written();
    expect(answered).toHaveLength(20);
    const read = await b.remote.read("k", "async", "alice", unknown);
    expect(read.record).toMatchObject({ principal: "alice", node: a.store.nodeId, status: "processing" });
    expect(read.queue.map((item) => item.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

describe("RemoteOperations", () => {
  it("read: the record and the queue after a seq; the same unknown error for another principal or kind", async () => {
    const [a, b] = await nodes();
    const log = new OperationLog(a.engine, operation("k"), { ...record });
    for (let n = 1; n <= 4; n++) log.append(note(n));
    await log.written();
    const read = await b.remote.read("k", "async", "alice", unknown, 2);
    expect(read.record.requestId).toBe(7);
    expect(read.queue).toEqual([
      { seq: 3, message: note(3) },
      { seq: 4, message: note(4) },
    ]);
    await expect(b.remote.read("k", "async", "bob", unknown)).rejects.toThrow("unknown operation");
    await expect(b.remote.read("k", "task", "alice", unknown)).rejects.toThrow("unknown operation");
    await expect(b.remote.read("other", "async", "alice", unknown)).rejects.toThrow("unknown operation");
  });

  it("takeOver: the first node to claim a lost operation writes its ending; followers then hear it, not the loss", async () => {
    const [a, b] = await nodes();
    const log = new OperationLog(a.engine, operation("k"), { ...record });
    log.append(note(1));
    log.append(note(2));
    await log.written();
    await a.store.close();
    expect(await b.store.get("k")).toMatchObject({ lost: true });

    const final: JsonRpcResponse = { jsonrpc: "2.0", id: 7, error: { code: -32010, message: "node lost" } };
    expect(await b.remote.takeOver("k", 2, [note(3), final], "failed")).toBe(true);
    expect(await b.remote.takeOver("k", 2, [note(9), final], "failed")).toBe(false);
    const stored = await b.store.get("k");
    expect(stored).toMatchObject({ status: "failed", node: b.store.nodeId });
    expect(stored?.lost).toBeUndefined();
    expect((await b.store.readAfter("k", 0)).map((item) => [item.seq, item.message])).toEqual([
      [1, note(1)],
      [2, note(2)],
      [3, note(3)],
      [4, final],
    ]);

    const heard = await new Promise<string[]>((resolve) => {
      const events: string[] = [];
      b.remote.follow("k", 1, {
        message: (item) => void events.push(`message ${item.seq}`),
        final: () => resolve([...events, "final"]),
        lost: () => resolve([...events, "lost"]),
        closed: () => resolve([...events, "closed"]),
      });
    });
    expect(heard).toEqual(["message 2", "message 3", "final"]);
  });
});

describe("answerSignal", () => {
  it("carries a result, an RpcError as it is, and any other failure as an internal error with its message", () => {
    expect(answerSignal("r1", { result: { ok: true } })).toEqual({
      type: "answer",
      id: "r1",
      message: { jsonrpc: "2.0", id: "r1", result: { ok: true } },
    });
    expect(answerSignal(2, { error: new RpcError(-32001, "declined", { why: "no" }) })).toEqual({
      type: "answer",
      id: 2,
      message: { jsonrpc: "2.0", id: 2, error: { code: -32001, message: "declined", data: { why: "no" } } },
    });
    expect(answerSignal(3, { error: new Error("broken") }).message).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32603, message: "broken" },
    });
  });
});

describe("PendingRequests.rejectAll", () => {
  it("cancels for a reason, or rejects with the error given (a carrier that went away)", async () => {
    const pending = new PendingRequests();
    const ask = (method: string) => {
      const { op, promise } = pending.create(
        method,
        undefined,
        () => undefined,
        () => undefined,
      );
      pending.add({ op, message: { jsonrpc: "2.0", id: op.id, method }, seq: 1 });
      return promise.then(
        () => undefined,
        (error: unknown) => error,
      );
    };
    const lost = ask("elicitation/create");
    pending.rejectAll(() => new ConnectionClosedError());
    expect(await lost).toBeInstanceOf(ConnectionClosedError);
    expect(pending.size).toBe(0);
    const ended = ask("sampling/createMessage");
    pending.rejectAll("task ended");
    expect(await ended).toBeInstanceOf(RequestCancelledError);
  });
});
