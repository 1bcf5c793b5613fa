// The operation store contract, run against the in-memory store and a Redis store on a real redis-server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import { RedisOperationStore } from "../../runtime/store/redis.js";
import type { OperationStore, StoredOperation } from "../../runtime/store/types.js";
import type { JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { startRedis, type RedisServer } from "./redis-server.js";
import { sleep } from "../kit/timing.js";

let redis: RedisServer;
const opened: RedisOperationStore[] = [];
let prefixCounter = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  await redis?.stop();
});

function progress(n: number): JsonRpcMessage {
  return { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: n } };
}

const op = (overrides: Partial<StoredOperation> = {}): StoredOperation => ({
  kind: "resumable",
  requestId: 7,
  status: "processing",
  pendingInput: 0,
  ...overrides,
});

const stores: [string, () => OperationStore][] = [
  ["memory", () => new MemoryOperationStore()],
  [
    "redis",
    () => {
      const store = new RedisOperationStore({ url: redis.url, prefix: `contract${prefixCounter++}:` });
      opened.push(store);
      return store;
    },
  ],
];

describe.each(stores)("operation store contract: %s", (_name, make) => {
  it("keeps what create stored, with the request id's JSON type, and patches it", async () => {
    const store = make();
    await store.create("a", op({ requestId: "7", principal: "alice" }));
    await store.create("b", op({ requestId: 7, kind: "async" }));
    const a = await store.get("a");
    expect(a).toMatchObject({
      kind: "resumable",
      requestId: "7",
      principal: "alice",
      status: "processing",
      pendingInput: 0,
    });
    expect((await store.get("b"))?.requestId).toBe(7);
    expect((await store.get("b"))?.kind).toBe("async");
    expect((await store.get("b"))?.principal).toBeUndefined();
    await store.update("a", { pendingInput: 2 });
    await store.update("a", { status: "completed" });
    expect(await store.get("a")).toMatchObject({ status: "completed", pendingInput: 2, requestId: "7" });
    expect(await store.get("nope")).toBeUndefined();
    expect(await store.count()).toBe(2);
  });

  it("reads the queue in order after any seq, and confirmed messages go", async () => {
    const store = make();
    await store.create("q", op());
    for (let seq = 1; seq <= 5; seq++) await store.append("q", { seq, message: progress(seq) });
    expect((await store.readAfter("q", 0)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await store.readAfter("q", 3)).map((m) => m.seq)).toEqual([4, 5]);
    expect((await store.readAfter("q", 3))[0].message).toEqual(progress(4));
    await store.confirm("q", 2);
    expect((await store.readAfter("q", 0)).map((m) => m.seq)).toEqual([3, 4, 5]);
    await store.confirm("q", 5);
    expect(await store.readAfter("q", 0)).toEqual([]);
    await store.append("q", { seq: 6, message: progress(6) });
    expect((await store.readAfter("q", 5)).map((m) => m.seq)).toEqual([6]);
    expect(await store.readAfter("unknown", 0)).toEqual([]);
  });

  it("forgets a deleted operation and its queue", async () => {
    const store = make();
    await store.create("d", op());
    await store.append("d", { seq: 1, message: progress(1) });
    expect(await store.count()).toBe(1);
    await store.delete("d");
    expect(await store.get("d")).toBeUndefined();
    expect(await store.readAfter("d", 0)).toEqual([]);
    expect(await store.count()).toBe(0);
  });
});

describe("Redis store across nodes", () => {
  function node(prefix: string, leaseMs = 300): RedisOperationStore {
    const store = new RedisOperationStore({ url: redis.url, prefix, leaseMs });
    opened.push(store);
    return store;
  }

  it("a follower on another node gets the queued messages, then each new one live, once and in order", async () => {
    const a = node("follow:");
    const b = node("follow:");
    await a.create("k", op({ node: a.nodeId }));
    for (let seq = 1; seq <= 3; seq++) await a.append("k", { seq, message: progress(seq) });
    const seen: number[] = [];
    let last!: () => void;
    const finished = new Promise<void>((resolve) => (last = resolve));
    const following = b.follow("k", 1, {
      message: (item) => {
        seen.push(item.seq);
        if (item.seq === 40) last();
      },
      lost: (reason) => {
        throw new Error(`unexpected loss: ${reason}`);
      },
    });
    for (let seq = 4; seq <= 40; seq++) {
      void a.append("k", { seq, message: progress(seq) });
      if (seq % 7 === 0) await sleep(2);
    }
    await finished;
    following.close();
    expect(seen).toEqual(Array.from({ length: 39 }, (_, i) => i + 2));
  });

  it("delivers signals to the node running the operation", async () => {
    const a = node("signal:");
    const b = node("signal:");
    const heard: unknown[] = [];
    const got = new Promise<void>((resolve) =>
      a.onSignal((key, signal) => {
        heard.push({ key, ...signal });
        resolve();
      }),
    );
    await a.ready();
    await b.signal(a.nodeId, "k", { type: "cancel", reason: "stop" });
    await got;
    expect(heard).toEqual([{ key: "k", type: "cancel", reason: "stop" }]);
  });

  it("an operation whose node stops renewing its lease reads as failed and its followers hear it, within the lease", async () => {
    const a = node("lease:", 300);
    const b = node("lease:", 300);
    await a.create("k", op({ node: a.nodeId }));
    await a.append("k", { seq: 1, message: progress(1) });
    const seen: number[] = [];
    const lost = new Promise<string>((resolve) =>
      b.follow("k", 0, { message: (item) => seen.push(item.seq), lost: resolve }),
    );
    expect((await b.get("k"))?.status).toBe("processing");
    const killedAt = Date.now();
    a.abandon();
    const reason = await lost;
    const after = Date.now() - killedAt;
    expect(reason).toMatch(/node running this request stopped/);
    expect(seen).toEqual([1]);
    // The lease (300 ms) plus one watch period (100 ms) plus slack for a loaded machine.
    expect(after).toBeLessThan(300 + 100 + 1500);
    expect(await b.get("k")).toMatchObject({ status: "failed", lost: true });
  });

  it("every key it writes expires: running ones while renewed, finished ones after keepFor, deleted ones at once", async () => {
    const a = node("ttl:");
    await a.create("run", op({ node: a.nodeId, keepFor: 30 }));
    await a.append("run", { seq: 1, message: progress(1) });
    await a.create("done", op({ node: a.nodeId, keepFor: 5 }));
    await a.append("done", { seq: 1, message: progress(1) });
    await a.update("done", { status: "completed" });
    await a.create("gone", op({ node: a.nodeId }));
    await a.append("gone", { seq: 1, message: progress(1) });
    await a.delete("gone");
    const keys = await a.keys();
    expect(keys.sort()).toEqual(
      ["ttl:node:" + a.nodeId, "ttl:op:done", "ttl:op:run", "ttl:q:done", "ttl:q:run"].sort(),
    );
    const raw = new Redis(redis.url);
    try {
      for (const key of keys) expect(await raw.pttl(key), key).toBeGreaterThan(0);
      expect(await raw.pttl("ttl:op:done")).toBeLessThanOrEqual(5000);
      expect(await raw.pttl("ttl:q:done")).toBeLessThanOrEqual(5000);
    } finally {
      raw.disconnect();
    }
  });
});
