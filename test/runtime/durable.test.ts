// The durable-operation building blocks: one token scheme, retention of delivered results, per-operation write order.
import { afterEach, describe, expect, it, vi } from "vitest";
import { isPresentedToken, mintToken, sameToken, TokenScheme } from "../../runtime/durable/token.js";
import { Retention } from "../../runtime/durable/retention.js";
import { WriteOrder } from "../../runtime/durable/writes.js";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import { isSyncStore, type OperationStore, type QueuedMessage } from "../../runtime/store/types.js";
import { tokenKey } from "../../runtime/store/key.js";

describe("token scheme", () => {
  it("mints distinct 32-character base64url tokens, across pool refills", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const token = mintToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      seen.add(token);
    }
    expect(seen.size).toBe(1000);
  });

  it.each([
    ["local (in-process store)", true],
    ["shared (keyed by hash)", false],
  ])("%s: keys a token, keeps what it must, and matches only the issued token", (_name, local) => {
    const scheme = new TokenScheme(local);
    const token = mintToken();
    const kept = scheme.kept(token);
    expect(scheme.keyOf(token)).toBe(local ? token.slice(0, 16) : tokenKey(token));
    expect(kept).toBe(local ? token : "");
    expect(scheme.matches(kept, token)).toBe(true);
    // Same key, different token: only a local scheme can (and must) tell them apart.
    const forged = token.slice(0, 16) + "A".repeat(16);
    if (local) expect(scheme.matches(kept, forged)).toBe(forged === token);
  });

  it("refuses what cannot be a token, and compares by length first", () => {
    expect([undefined, 1, "", "x".repeat(257)].map(isPresentedToken)).toEqual([false, false, false, false]);
    expect(isPresentedToken("x".repeat(256))).toBe(true);
    expect(sameToken("abc", "abcd")).toBe(false);
    expect(sameToken("abc", "abd")).toBe(false);
    expect(sameToken("abc", "abc")).toBe(true);
  });
});

describe("Retention", () => {
  afterEach(() => void vi.useRealTimers());

  it("drops each kept item after keepMs, the oldest first past the bound, and never one forgotten or kept again", () => {
    vi.useFakeTimers();
    const dropped: string[] = [];
    const items = Object.fromEntries(["a", "b", "c", "d"].map((name) => [name, { name, retainedUntil: Infinity }]));
    const retention = new Retention<{ name: string; retainedUntil: number }>(
      1000,
      2,
      (item) => void dropped.push(item.name),
    );
    retention.keep(items.a);
    retention.keep(items.b);
    retention.keep(items.c); // over the bound of 2: a goes now
    expect(dropped).toEqual(["a"]);
    retention.forget(items.b);
    vi.advanceTimersByTime(500);
    retention.keep(items.c); // kept again: its first deadline no longer stands for it
    vi.advanceTimersByTime(600);
    expect(dropped).toEqual(["a"]);
    vi.advanceTimersByTime(500);
    expect(dropped).toEqual(["a", "c"]);
    retention.keep(items.d);
    retention.clear();
    vi.advanceTimersByTime(5000);
    expect(dropped).toEqual(["a", "c"]);
  });
});

describe("WriteOrder", () => {
  /** A store whose appends settle in reverse order of their calls unless the caller waits for each. */
  function slowStore(ordered: boolean): OperationStore & { log: number[] } {
    const log: number[] = [];
    const store = new MemoryOperationStore();
    return Object.assign(Object.create(null) as OperationStore, {
      log,
      ordered,
      create: () => undefined,
      get: () => undefined,
      update: () => undefined,
      readAfter: () => [],
      confirm: () => undefined,
      delete: () => undefined,
      count: () => store.count(),
      append: (_key: string, item: QueuedMessage) =>
        new Promise<void>((resolve) =>
          setTimeout(
            () => {
              log.push(item.seq);
              resolve();
            },
            30 - item.seq * 10,
          ),
        ),
    });
  }

  it("lands one operation's writes in call order on a store that does not order them, and reports failures", async () => {
    const store = slowStore(false);
    const errors: unknown[] = [];
    const writes = new WriteOrder<object>(store, (e) => void errors.push(e));
    const op = {};
    const message = { jsonrpc: "2.0" as const, method: "m" };
    void writes.chain(op, () => store.append("k", { seq: 1, message }));
    void writes.chain(op, () => {
      throw new Error("boom");
    });
    await writes.chain(op, () => store.append("k", { seq: 2, message }));
    expect(store.log).toEqual([1, 2]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["boom"]);
  });

  it("calls a synchronous store directly (no promise), and knows the in-memory store as one", () => {
    const store = new MemoryOperationStore();
    expect(isSyncStore(store)).toBe(true);
    const writes = new WriteOrder<object>(store, () => undefined);
    expect(writes.chain({}, () => store.count())).toBe(0);
    const record = store.open("k", { kind: "resumable", requestId: 1, status: "processing", pendingInput: 0 });
    record.queue.push({ seq: 1, message: { jsonrpc: "2.0", method: "m" } });
    expect(store.readAfter("k", 0).map((m) => m.seq)).toEqual([1]);
  });
});
