// W3C traceparent, tracestate and baggage as `_meta` carries them: what is read, what is ignored, what is written.
import { describe, expect, it } from "vitest";
import {
  formatBaggage,
  formatTraceparent,
  formatTracestate,
  parseBaggage,
  parseTraceparent,
  parseTracestate,
  readTraceContext,
  resolveTraceLimits,
  withTraceContext,
} from "../../runtime/mcp/trace-context.js";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const SPAN_ID = "b7ad6b7169203331";
const GOOD = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe("traceparent", () => {
  it.each([
    [GOOD, { version: "00", traceId: TRACE_ID, parentId: SPAN_ID, flags: 1 }],
    [`00-${TRACE_ID}-${SPAN_ID}-00`, { version: "00", traceId: TRACE_ID, parentId: SPAN_ID, flags: 0 }],
    // A later version is read by its first four fields when what follows starts with "-".
    [
      `cc-${TRACE_ID}-${SPAN_ID}-09-what-the-future-holds`,
      { version: "cc", traceId: TRACE_ID, parentId: SPAN_ID, flags: 9 },
    ],
    [`cc-${TRACE_ID}-${SPAN_ID}-01`, { version: "cc", traceId: TRACE_ID, parentId: SPAN_ID, flags: 1 }],
  ])("reads %s", (value, expected) => {
    expect(parseTraceparent(value)).toEqual(expected);
  });

  it.each([
    ["uppercase hex", `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["an all-zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["version 00 with more after it", `${GOOD}-extra`],
    ["a later version followed by other than -", `01-${TRACE_ID}-${SPAN_ID}-01x`],
    ["a short trace id", `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ["a non-hex flag", `00-${TRACE_ID}-${SPAN_ID}-0g`],
    ["another separator", `00_${TRACE_ID}_${SPAN_ID}_01`],
    ["an empty string", ""],
    ["a number", 42],
    ["null", null],
  ])("ignores %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("writes version 00 and checks what it writes", () => {
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 })).toBe(GOOD);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 })).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
    expect(() => formatTraceparent({ traceId: "0".repeat(32), spanId: SPAN_ID, flags: 1 })).toThrow(TypeError);
    expect(() => formatTraceparent({ traceId: TRACE_ID, spanId: "xyz", flags: 1 })).toThrow(TypeError);
    expect(() => formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 256 })).toThrow(TypeError);
  });
});

describe("tracestate", () => {
  it.each([
    ["congo=t61rcWkgMzE", [["congo", "t61rcWkgMzE"]]],
    [
      "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE",
      [
        ["rojo", "00f067aa0ba902b7"],
        ["congo", "t61rcWkgMzE"],
      ],
    ],
    [
      "tenant1@vendor=x,,  ,b=y",
      [
        ["tenant1@vendor", "x"],
        ["b", "y"],
      ],
    ],
    ["a=value with spaces", [["a", "value with spaces"]]],
    ["", []],
  ])("reads %j", (value, expected) => {
    expect(parseTracestate(value)).toEqual(expected);
  });

  it.each([
    ["an uppercase key", "Congo=x"],
    ["a key starting with a digit", "1abc=x"],
    ["a value with =", "a=b=c"],
    ["a tab in a value", "a=b\tc"],
    ["a member without =", "abc"],
    ["a key twice", "a=1,a=2"],
    ["33 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(",")],
    ["a system id too long", `t@${"a".repeat(15)}=x`],
  ])("drops the whole of one with %s", (_what, value) => {
    expect(parseTracestate(value, 10_000)).toBeUndefined();
  });

  it("drops one longer than the limit", () => {
    const value = `a=${"x".repeat(100)}`;
    expect(parseTracestate(value, 50)).toBeUndefined();
    expect(parseTracestate(value, 200)).toEqual([["a", "x".repeat(100)]]);
  });

  it("writes members in order and refuses bad ones", () => {
    expect(
      formatTracestate([
        ["a", "1"],
        ["t@v", "2"],
      ]),
    ).toBe("a=1,t@v=2");
    expect(() => formatTracestate([["A", "1"]])).toThrow(TypeError);
    expect(() => formatTracestate([["a", "1,2"]])).toThrow(TypeError);
  });
});

describe("baggage", () => {
  it.each([
    ["userId=alice", [{ key: "userId", value: "alice" }]],
    [
      "userId=alice , serverNode = DF%2028,isProduction=false",
      [
        { key: "userId", value: "alice" },
        { key: "serverNode", value: "DF 28" },
        { key: "isProduction", value: "false" },
      ],
    ],
    ["key1=value1;property1;property2=x", [{ key: "key1", value: "value1", metadata: "property1;property2=x" }]],
    ["empty=", [{ key: "empty", value: "" }]],
  ])("reads %j", (value, expected) => {
    expect(parseBaggage(value)).toEqual(expected);
  });

  it.each([
    ["a member without =", "userId"],
    ["a key that is no token", "user id=alice"],
    ["a raw space in a value", "a=b c"],
    ["a double quote in a value", 'a="b"'],
    ["a broken percent escape", "a=%zz"],
    ["an empty member", "a=1,,b=2"],
    ["a bad property", "a=1;bad key"],
  ])("drops the whole of one with %s", (_what, value) => {
    expect(parseBaggage(value)).toBeUndefined();
  });

  it("drops one over the byte or member limit", () => {
    const limits = resolveTraceLimits({ maxBaggageBytes: 20, maxBaggageMembers: 2 });
    expect(parseBaggage("a=1,b=2", limits)).toHaveLength(2);
    expect(parseBaggage("a=1,b=2,c=3", limits)).toBeUndefined();
    expect(parseBaggage(`a=${"x".repeat(30)}`, limits)).toBeUndefined();
  });

  it("writes values percent-encoded, so any string makes the trip", () => {
    const entries = [
      { key: "user", value: "a lice, =;%\u00e9" },
      { key: "k", value: "v", metadata: "ttl=60" },
    ];
    const written = formatBaggage(entries);
    expect(written).toBe("user=a%20lice%2C%20%3D%3B%25%C3%A9,k=v;ttl=60");
    expect(parseBaggage(written)).toEqual(entries);
    expect(() => formatBaggage([{ key: "no token", value: "x" }])).toThrow(TypeError);
  });

  it("refuses limits that are not whole numbers", () => {
    expect(() => resolveTraceLimits({ maxBaggageBytes: 1.5 })).toThrow(/maxBaggageBytes/);
    expect(() => resolveTraceLimits({ maxTracestateLength: -1 })).toThrow(/maxTracestateLength/);
  });
});

describe("readTraceContext and withTraceContext", () => {
  it.each([
    [
      "all three",
      { traceparent: GOOD, tracestate: "a=1", baggage: "k=v" },
      { traceparent: GOOD, tracestate: "a=1", baggage: "k=v" },
    ],
    ["a tracestate without its traceparent", { tracestate: "a=1" }, undefined],
    [
      "a bad traceparent: its tracestate goes with it",
      { traceparent: "bad", tracestate: "a=1", baggage: "k=v" },
      { baggage: "k=v" },
    ],
    ["a bad tracestate: the traceparent stays", { traceparent: GOOD, tracestate: "A=1" }, { traceparent: GOOD }],
    ["a bad baggage alone", { baggage: "k v" }, undefined],
    ["none of them", { "io.modelcontextprotocol/protocolVersion": "x" }, undefined],
    ["values that are not strings", { traceparent: 1, baggage: {} }, undefined],
  ])("%s", (_what, meta, expected) => {
    expect(readTraceContext(meta)).toEqual(expected);
  });

  it("reads nothing from what is not an object", () => {
    for (const meta of [undefined, null, "traceparent", [GOOD]]) expect(readTraceContext(meta)).toBeUndefined();
  });

  it("adds the keys to a copy of _meta, keeping the other members and leaving the params alone", () => {
    const params = { name: "t", _meta: { progressToken: 1, traceparent: "old", tracestate: "old=1" } };
    const out = withTraceContext(params, { traceparent: GOOD, baggage: "k=v" });
    expect(out).toEqual({ name: "t", _meta: { progressToken: 1, traceparent: GOOD, baggage: "k=v" } });
    expect(params._meta.traceparent).toBe("old");
    expect(withTraceContext(undefined, { traceparent: GOOD, tracestate: "a=1" })).toEqual({
      _meta: { traceparent: GOOD, tracestate: "a=1" },
    });
  });
});
