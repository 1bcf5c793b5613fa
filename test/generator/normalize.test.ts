// Unit tests of the normalize passes, each on the smallest schema that shows its rule.
import { describe, expect, it } from "vitest";
import {
  integers,
  normalizeSchema,
  openObjects,
  refSiblings,
  taggedUnions,
  toNode,
} from "../../generator/normalize/index.js";
import { DISCRIMINATOR } from "../../generator/normalize/tagged-unions.js";

describe("refSiblings", () => {
  it("keeps a description beside a $ref, so the ref stays a plain reference", () => {
    const out = refSiblings({ properties: { a: { $ref: "#/$defs/X", description: "doc" } } });
    expect(out).toEqual({ properties: { a: { $ref: "#/$defs/X", description: "doc" } } });
  });
  it("moves constraints beside a $ref into an allOf", () => {
    const out = refSiblings({ properties: { a: { $ref: "#/$defs/X", description: "doc", required: ["k"] } } });
    expect(out).toEqual({
      properties: { a: { description: "doc", allOf: [{ $ref: "#/$defs/X" }, { required: ["k"] }] } },
    });
  });
  it("does not touch its input", () => {
    const input = { properties: { a: { $ref: "#/$defs/X", type: "object" } } };
    const copy = structuredClone(input);
    refSiblings(input);
    expect(input).toEqual(copy);
  });
});

describe("integers", () => {
  it("drops integer when number is also allowed", () => {
    expect(integers({ type: ["integer", "number"] })).toEqual({ type: "number" });
  });
  it("orders type lists one fixed way", () => {
    expect(integers({ type: ["string", "integer"] })).toEqual({ type: ["integer", "string"] });
    expect(integers({ type: ["integer", "string"] })).toEqual({ type: ["integer", "string"] });
  });
  it("leaves a lone integer alone", () => {
    expect(integers({ type: "integer" })).toEqual({ type: "integer" });
  });
});

describe("openObjects", () => {
  it("spells {} and true the same", () => {
    expect(openObjects({ additionalProperties: {} })).toEqual({ additionalProperties: true });
    expect(openObjects({ additionalProperties: true })).toEqual({ additionalProperties: true });
  });
  it("marks the spec's spelling of TypeScript `object` as opaque", () => {
    expect(openObjects({ type: "object", properties: {}, additionalProperties: true })).toEqual({
      type: "object",
      additionalProperties: true,
      "x-mcpgen-opaque": true,
    });
    expect(toNode(openObjects({ type: "object", properties: {}, additionalProperties: true }), "#/$defs/")).toEqual({
      types: ["object"],
      additional: "open",
      opaque: true,
    });
  });
  it("keeps typed maps and closed objects", () => {
    expect(openObjects({ additionalProperties: { type: "string" } })).toEqual({
      additionalProperties: { type: "string" },
    });
    expect(openObjects({ additionalProperties: false })).toEqual({ additionalProperties: false });
  });
});

describe("taggedUnions", () => {
  const defs = {
    A: {
      type: "object",
      properties: { method: { const: "a", type: "string" }, type: { const: "x" } },
      required: ["method", "type"],
    },
    B: {
      type: "object",
      properties: { method: { const: "b", type: "string" }, type: { const: "x" } },
      required: ["method", "type"],
    },
    C: { type: "object", properties: { method: { const: "c", type: "string" } } },
    U: { anyOf: [{ $ref: "#/$defs/B" }, { $ref: "#/$defs/A" }] },
    V: { anyOf: [{ $ref: "#/$defs/A" }, { $ref: "#/$defs/C" }] },
  };
  it("records the discriminating key and sorted cases", () => {
    const out = taggedUnions({ $defs: defs }, "$defs") as { $defs: Record<string, Record<string, unknown>> };
    expect(out.$defs["U"]![DISCRIMINATOR]).toEqual({
      key: "method",
      cases: [
        { value: "a", member: 1 },
        { value: "b", member: 0 },
      ],
    });
  });
  it("skips a key whose values repeat, and unions whose members lack a required tag", () => {
    const out = taggedUnions({ $defs: defs }, "$defs") as { $defs: Record<string, Record<string, unknown>> };
    expect((out.$defs["U"]![DISCRIMINATOR] as { key: string }).key).not.toBe("type");
    expect(out.$defs["V"]![DISCRIMINATOR]).toBeUndefined();
  });
});

describe("normalizeSchema + toNode", () => {
  it("gives the same nodes whatever the key order", () => {
    const a = {
      $defs: {
        X: {
          type: "object",
          required: ["b", "a"],
          properties: { b: { type: "string" }, a: { type: ["number", "integer"] } },
        },
      },
    };
    const b = {
      $defs: {
        X: {
          properties: { a: { type: ["integer", "number"] }, b: { type: "string" } },
          required: ["a", "b"],
          type: "object",
        },
      },
    };
    const na = toNode((normalizeSchema(a, "$defs").$defs as Record<string, unknown>)["X"], "#/$defs/");
    const nb = toNode((normalizeSchema(b, "$defs").$defs as Record<string, unknown>)["X"], "#/$defs/");
    expect(na).toEqual(nb);
    expect(na.properties!.map((p) => p.name)).toEqual(["a", "b"]);
    expect(na.properties![0]!.node.types).toEqual(["number"]);
  });
});
