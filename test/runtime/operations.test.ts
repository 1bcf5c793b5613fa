// The operations registry: bounded recent sets and lazy abort signals.
import { describe, expect, it } from "vitest";
import { InboundOperation, RecentSet } from "../../runtime/rpc/operations.js";

describe("RecentSet", () => {
  it("remembers at most `limit` keys, forgetting the oldest first", () => {
    const set = new RecentSet<number | string>(3);
    for (const k of [1, 2, 3]) set.add(k);
    expect([1, 2, 3].map((k) => set.has(k))).toEqual([true, true, true]);
    set.add(4);
    expect(set.has(1)).toBe(false);
    expect(set.has(4)).toBe(true);
    set.add(4); // no duplicate slot
    set.add("4");
    expect(set.has(2)).toBe(false);
    expect(set.has(3)).toBe(true);
    expect(set.has("4")).toBe(true);
  });
});

describe("Operation", () => {
  it("creates its AbortSignal lazily, already aborted when the abort came first", () => {
    const op = new InboundOperation(1, "tools/call");
    op.abort("why");
    expect(op.signal.aborted).toBe(true);
    expect(op.signal.reason).toBe("why");
    const other = new InboundOperation(2, "tools/call");
    const signal = other.signal;
    other.abort("later");
    expect(signal.aborted).toBe(true);
  });
});
