// StableMap: behaves as a Map (size, lookups, iteration in insertion order, delete while iterating, clear) with its hidden entry never showing.
import { describe, expect, it } from "vitest";
import { StableMap } from "../../runtime/rpc/stable-map.js";

describe("StableMap", () => {
  it("acts as a Map whose hidden entry never shows in size or iteration", () => {
    const map = new StableMap<string | number, string>();
    expect(map.size).toBe(0);
    expect([...map]).toEqual([]);
    map.set(1, "one").set("1", "string one").set(0, "zero");
    expect(map.size).toBe(3);
    expect(map.get(1)).toBe("one");
    expect(map.get("1")).toBe("string one"); // 1 and "1" stay apart, as JSON-RPC ids must
    expect(map.has(0)).toBe(true);
    expect([...map.keys()]).toEqual([1, "1", 0]);
    expect([...map.values()]).toEqual(["one", "string one", "zero"]);
    expect([...map.entries()]).toEqual([
      [1, "one"],
      ["1", "string one"],
      [0, "zero"],
    ]);
    for (const [key] of map) if (key !== 0) map.delete(key); // deleting while iterating, as a Map allows
    expect([...map]).toEqual([[0, "zero"]]);
    expect(map.delete(0)).toBe(true);
    expect(map.delete(0)).toBe(false);
    expect(map.size).toBe(0);
    map.set("a", "x");
    map.clear();
    expect(map.size).toBe(0);
    expect([...map]).toEqual([]);
    map.set("b", "y");
    expect([...map]).toEqual([["b", "y"]]);
  });
});
