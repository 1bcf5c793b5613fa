// ResponseCache (MCP 2026-07-28 client): cacheable results kept for their ttlMs, keyed canonically, dropped by change notifications, LRU-bounded.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { CACHEABLE_METHODS, ResponseCache, cacheKey } from "../../runtime/eras/2026-07-28/response-cache.js";

/** A cache on a clock the test moves. */
function setup(maxEntries?: number) {
  const clock = { now: 1_000_000 };
  const cache = new ResponseCache({ maxEntries, now: () => clock.now });
  return { cache, clock };
}

const result = (ttlMs: unknown, extra: JsonObject = {}): JsonObject => ({
  resultType: "complete",
  ttlMs,
  cacheScope: "private",
  ...extra,
});

describe("ResponseCache: what is kept", () => {
  it("lists exactly the specification's cacheable methods", () => {
    expect([...CACHEABLE_METHODS].sort()).toEqual(
      [
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "tools/list",
      ].sort(),
    );
  });

  it.each([
    { ttlMs: 1000, kept: true },
    { ttlMs: 1, kept: true },
    { ttlMs: 0, kept: false },
    { ttlMs: -5, kept: false },
    { ttlMs: undefined, kept: false },
    { ttlMs: "1000", kept: false },
    { ttlMs: null, kept: false },
    { ttlMs: Number.NaN, kept: false },
    { ttlMs: Infinity, kept: false },
  ])("ttlMs $ttlMs: kept $kept", ({ ttlMs, kept }) => {
    const { cache } = setup();
    const answer = result(ttlMs, { tools: [] });
    cache.store("tools/list", undefined, answer);
    expect(cache.get("tools/list", undefined)).toBe(kept ? answer : undefined);
  });

  it.each(["public", "private", undefined])("keeps cacheScope %s (the cache is one client's)", (scope) => {
    const { cache } = setup();
    const answer = { resultType: "complete", ttlMs: 1000, cacheScope: scope, tools: [] };
    cache.store("tools/list", undefined, answer);
    expect(cache.get("tools/list", undefined)).toBe(answer);
  });

  it("is fresh while now < received + ttlMs, stale from then on", () => {
    const { cache, clock } = setup();
    const answer = result(1000, { tools: [] });
    cache.store("tools/list", undefined, answer);
    clock.now += 999;
    expect(cache.get("tools/list", undefined)).toBe(answer);
    clock.now += 1;
    expect(cache.get("tools/list", undefined)).toBeUndefined();
    // A stale entry is gone, not revived by a clock going back.
    clock.now -= 500;
    expect(cache.get("tools/list", undefined)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it.each([
    { method: "tools/call", params: { name: "x" } },
    { method: "prompts/get", params: { name: "x" } },
    { method: "completion/complete", params: {} },
    { method: "subscriptions/listen", params: {} },
  ])("ignores $method, which is not cacheable", ({ method, params }) => {
    const { cache } = setup();
    cache.store(method, params, result(1000));
    expect(cache.get(method, params)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it.each([
    { name: "an input_required result", answer: { resultType: "input_required", ttlMs: 1000 }, params: {} },
    { name: "a retry's (inputResponses)", answer: result(1000), params: { inputResponses: { a: {} } } },
    { name: "a retry's (requestState)", answer: result(1000), params: { requestState: "s" } },
  ])("keeps nothing of $name", ({ answer, params }) => {
    const { cache } = setup();
    cache.store("resources/read", { uri: "u:1", ...params }, answer);
    expect(cache.size).toBe(0);
  });

  it("keeps a result with no resultType (a server predating it: complete)", () => {
    const { cache } = setup();
    const answer = { ttlMs: 1000, contents: [] };
    cache.store("resources/read", { uri: "u:1" }, answer);
    expect(cache.get("resources/read", { uri: "u:1" })).toBe(answer);
  });

  it("returns the stored object itself, frozen deeply at store time", () => {
    const { cache } = setup();
    const inner = { name: "t", inputSchema: { type: "object", properties: { a: { type: "string" } } } };
    const answer = result(1000, { tools: Object.freeze([inner]) });
    cache.store("tools/list", undefined, answer);
    const hit = cache.get("tools/list", undefined)!;
    expect(hit).toBe(answer);
    expect(Object.isFrozen(hit)).toBe(true);
    expect(Object.isFrozen(inner)).toBe(true);
    expect(Object.isFrozen(inner.inputSchema.properties.a)).toBe(true);
    expect(() => {
      (hit.tools as JsonObject[]).push({});
    }).toThrow(TypeError);
  });

  it("replaces the entry of a request stored again", () => {
    const { cache } = setup();
    cache.store("tools/list", undefined, result(1000, { tools: [1] }));
    const newer = result(1000, { tools: [2] });
    cache.store("tools/list", undefined, newer);
    expect(cache.get("tools/list", undefined)).toBe(newer);
    expect(cache.size).toBe(1);
  });
});

describe("ResponseCache: the key", () => {
  it.each([
    { name: "keys in another order", a: { uri: "u:1", x: { b: 1, a: 2 } }, b: { x: { a: 2, b: 1 }, uri: "u:1" } },
    { name: "a different _meta", a: { uri: "u:1", _meta: { p: 1 } }, b: { uri: "u:1", _meta: { q: 2 } } },
    { name: "_meta or none", a: { uri: "u:1", _meta: { p: 1 } }, b: { uri: "u:1" } },
  ])("the same request hits: $name", ({ a, b }) => {
    const { cache } = setup();
    const answer = result(1000, { contents: [] });
    cache.store("resources/read", a, answer);
    expect(cache.get("resources/read", b)).toBe(answer);
  });

  it.each([
    { name: "no params, {} or only _meta", a: undefined, b: { _meta: { x: 1 } }, same: true },
    { name: "no params and {}", a: undefined, b: {}, same: true },
    { name: "another cursor", a: { cursor: "p1" }, b: { cursor: "p2" }, same: false },
    { name: "a cursor or none", a: { cursor: "p1" }, b: undefined, same: false },
    { name: "another uri", a: { uri: "u:1" }, b: { uri: "u:2" }, same: false },
    { name: "array order matters", a: { x: [1, 2] }, b: { x: [2, 1] }, same: false },
    { name: "a nested _meta is a param", a: { x: { _meta: 1 } }, b: { x: {} }, same: false },
  ])("$name: same key $same", ({ a, b, same }) => {
    const ka = cacheKey("tools/list", a);
    const kb = cacheKey("tools/list", b);
    expect(ka).toBeDefined();
    expect(ka === kb).toBe(same);
  });

  it("another method with the same params misses", () => {
    const { cache } = setup();
    cache.store("tools/list", { cursor: "c" }, result(1000));
    expect(cache.get("prompts/list", { cursor: "c" })).toBeUndefined();
  });

  it("keys nothing for params that are no JSON", () => {
    const cyclic: JsonObject = {};
    cyclic.self = cyclic;
    expect(cacheKey("tools/list", cyclic)).toBeUndefined();
    expect(cacheKey("tools/list", { n: 1n })).toBeUndefined();
  });
});

describe("ResponseCache: invalidation", () => {
  const requests: [string, JsonObject | undefined][] = [
    ["tools/list", undefined],
    ["tools/list", { cursor: "p2" }],
    ["prompts/list", undefined],
    ["resources/list", undefined],
    ["resources/templates/list", undefined],
    ["resources/read", { uri: "u:1" }],
    ["resources/read", { uri: "u:2" }],
    ["server/discover", undefined],
  ];
  const name = ([method, params]: [string, JsonObject | undefined]) =>
    params === undefined ? method : `${method} ${JSON.stringify(params)}`;

  it.each([
    {
      notification: "notifications/tools/list_changed",
      params: undefined,
      dropped: ["tools/list", 'tools/list {"cursor":"p2"}'],
    },
    { notification: "notifications/prompts/list_changed", params: undefined, dropped: ["prompts/list"] },
    {
      notification: "notifications/resources/list_changed",
      params: undefined,
      dropped: ["resources/list", "resources/templates/list"],
    },
    {
      notification: "notifications/resources/updated",
      params: { uri: "u:1" },
      dropped: ['resources/read {"uri":"u:1"}'],
    },
    { notification: "notifications/resources/updated", params: { uri: "u:9" }, dropped: [] },
    {
      notification: "notifications/resources/updated",
      params: {},
      dropped: ['resources/read {"uri":"u:1"}', 'resources/read {"uri":"u:2"}'],
    },
    { notification: "notifications/message", params: { level: "info", data: "x" }, dropped: [] },
    { notification: "notifications/progress", params: undefined, dropped: [] },
    { notification: "tools/list", params: undefined, dropped: [] },
  ])("$notification $params drops $dropped", ({ notification, params, dropped }) => {
    const { cache } = setup();
    for (const [method, p] of requests) cache.store(method, p, result(1000));
    cache.invalidate(notification, params);
    const gone = requests.filter(([method, p]) => cache.get(method, p) === undefined).map(name);
    expect(gone).toEqual(dropped);
  });

  it("clear drops everything", () => {
    const { cache } = setup();
    for (const [method, p] of requests) cache.store(method, p, result(1000));
    cache.clear();
    expect(cache.size).toBe(0);
    expect(requests.every(([method, p]) => cache.get(method, p) === undefined)).toBe(true);
  });
});

describe("ResponseCache: bound", () => {
  it("evicts the least recently used past maxEntries (a hit counts as a use)", () => {
    const { cache } = setup(3);
    for (const uri of ["u:1", "u:2", "u:3"]) cache.store("resources/read", { uri }, result(1000));
    expect(cache.get("resources/read", { uri: "u:1" })).toBeDefined();
    cache.store("resources/read", { uri: "u:4" }, result(1000));
    expect(cache.size).toBe(3);
    const kept = ["u:1", "u:2", "u:3", "u:4"].filter((uri) => cache.get("resources/read", { uri }) !== undefined);
    expect(kept).toEqual(["u:1", "u:3", "u:4"]);
  });

  it("keeps nothing with maxEntries 0", () => {
    const { cache } = setup(0);
    cache.store("tools/list", undefined, result(1000));
    expect(cache.size).toBe(0);
  });

  it("holds 500 by default", () => {
    const { cache } = setup();
    for (let i = 0; i < 600; i++) cache.store("resources/read", { uri: `u:${i}` }, result(1000));
    expect(cache.size).toBe(500);
    expect(cache.get("resources/read", { uri: "u:99" })).toBeUndefined();
    expect(cache.get("resources/read", { uri: "u:100" })).toBeDefined();
  });

  it.each([-1, 1.5, Number.NaN])("refuses maxEntries %s", (maxEntries) => {
    expect(() => new ResponseCache({ maxEntries })).toThrow(/maxEntries/);
  });
});
