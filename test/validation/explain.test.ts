// The schema interpreter behind the detailed validators: every assertion keyword's issue, its JSON pointer and message.
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_EXPLAINED_ISSUES, explainSchema, type ExplainOptions } from "../../runtime/validation/explain.js";

type Row = [name: string, schema: unknown, value: unknown, issues: { pointer: string; message: string }[]];

const at = (pointer: string, message: string) => ({ pointer, message });

describe("explainSchema: one issue per broken assertion, at the value it concerns", () => {
  const rows: Row[] = [
    ["type", { type: "string" }, 7, [at("", "must be string")]],
    ["a list of types", { type: ["integer", "null"] }, 1.5, [at("", "must be integer,null")]],
    ["integer accepts 2.0", { type: "integer" }, 2.0, []],
    ["const", { const: "audio" }, "video", [at("", 'must be equal to constant: "audio"')]],
    ["const of an object, key order ignored", { const: { a: 1, b: [2] } }, { b: [2], a: 1 }, []],
    ["enum", { enum: ["a", "b"] }, "c", [at("", 'must be equal to one of the allowed values: ["a","b"]')]],
    ["minimum", { minimum: 0 }, -1, [at("", "must be >= 0")]],
    ["maximum", { maximum: 1 }, 2, [at("", "must be <= 1")]],
    ["exclusiveMinimum", { exclusiveMinimum: 0 }, 0, [at("", "must be > 0")]],
    ["exclusiveMaximum", { exclusiveMaximum: 1 }, 1, [at("", "must be < 1")]],
    ["multipleOf", { multipleOf: 0.5 }, 1.25, [at("", "must be multiple of 0.5")]],
    [
      "multipleOf with a quotient of 1e21 or more (as the guards read it)",
      { multipleOf: 1 },
      1e21,
      [at("", "must be multiple of 1")],
    ],
    ["numeric keywords let other types pass", { minimum: 5, minLength: 3, minItems: 2, required: ["x"] }, true, []],
    ["minLength counts code points", { minLength: 2 }, "\u{1F600}", [at("", "must NOT have fewer than 2 characters")]],
    ["maxLength counts code points", { maxLength: 2 }, "\u{1F600}\u{1F600}", []],
    ["maxLength", { maxLength: 2 }, "abc", [at("", "must NOT have more than 2 characters")]],
    ["pattern, unanchored, with the u flag", { pattern: "\\p{Lu}" }, "abc", [at("", 'must match pattern "\\\\p{Lu}"')]],
    ["minItems", { minItems: 2 }, [1], [at("", "must NOT have fewer than 2 items")]],
    ["maxItems", { maxItems: 1 }, [1, 2], [at("", "must NOT have more than 1 items")]],
    [
      "uniqueItems by JSON equality",
      { uniqueItems: true },
      [{ a: 1, b: 2 }, 3, { b: 2, a: 1 }],
      [at("", "must NOT have duplicate items (items ## 0 and 2 are identical)")],
    ],
    ['uniqueItems: 1 and "1" differ', { uniqueItems: true }, [1, "1"], []],
    [
      "items",
      { items: { type: "number" } },
      [1, "x", 3, "y"],
      [at("/1", "must be number"), at("/3", "must be number")],
    ],
    [
      "draft-07 tuple items and additionalItems",
      { items: [{ type: "string" }], additionalItems: false },
      [1, 2],
      [at("/0", "must be string"), at("/1", "must NOT be present (the schema allows nothing here)")],
    ],
    [
      "prefixItems then items",
      { prefixItems: [{ type: "string" }], items: { type: "boolean" } },
      ["a", true, 3],
      [at("/2", "must be boolean")],
    ],
    ["contains", { contains: { type: "string" } }, [1, 2], [at("", "must contain at least 1 valid item(s)")]],
    [
      "maxContains",
      { contains: { type: "string" }, maxContains: 1 },
      ["a", "b"],
      [at("", "must contain at most 1 valid item(s)")],
    ],
    [
      "properties, with the pointer escaped",
      { properties: { "a/b": { type: "string" }, "c~d": { type: "string" } } },
      { "a/b": 1, "c~d": 2 },
      [at("/a~1b", "must be string"), at("/c~0d", "must be string")],
    ],
    ["required", { required: ["name"] }, {}, [at("", 'missing required property "name"')]],
    [
      "additionalProperties false, at the extra property",
      { properties: { a: {} }, additionalProperties: false },
      { a: 1, b: 2 },
      [at("/b", "must NOT have additional properties (b)")],
    ],
    [
      "additionalProperties as a schema",
      { properties: { a: {} }, additionalProperties: { type: "number" } },
      { a: "x", b: "y" },
      [at("/b", "must be number")],
    ],
    [
      "patternProperties, which also make a key known",
      { patternProperties: { "^x-": { type: "number" } }, additionalProperties: false },
      { "x-a": "s" },
      [at("/x-a", "must be number")],
    ],
    [
      "propertyNames",
      { propertyNames: { maxLength: 3 } },
      { long: 1, ok: 2 },
      [at("/long", "property name must be valid: must NOT have more than 3 characters")],
    ],
    ["minProperties", { minProperties: 1 }, {}, [at("", "must NOT have fewer than 1 properties")]],
    ["maxProperties", { maxProperties: 1 }, { a: 1, b: 2 }, [at("", "must NOT have more than 1 properties")]],
    [
      "dependentRequired",
      { dependentRequired: { card: ["billing"] } },
      { card: 1 },
      [at("", 'must have property "billing" when property "card" is present')],
    ],
    [
      "draft-07 dependencies, both forms",
      { dependencies: { a: ["b"], c: { required: ["d"] } } },
      { a: 1, c: 2 },
      [at("", 'must have property "b" when property "a" is present'), at("", 'missing required property "d"')],
    ],
    [
      "dependentSchemas",
      { dependentSchemas: { a: { properties: { b: { type: "string" } } } } },
      { a: 1, b: 2 },
      [at("/b", "must be string")],
    ],
    [
      "allOf reports every member's issues",
      { allOf: [{ required: ["a"] }, { required: ["b"] }] },
      {},
      [at("", 'missing required property "a"'), at("", 'missing required property "b"')],
    ],
    ["not", { not: { type: "string" } }, "s", [at("", "must NOT be valid against the schema in not")]],
    [
      "if/then: the branch's issues",
      { if: { properties: { kind: { const: "a" } } }, then: { required: ["x"] }, else: { required: ["y"] } },
      { kind: "a" },
      [at("", 'missing required property "x"')],
    ],
    [
      "if/else",
      { if: { properties: { kind: { const: "a" } } }, then: { required: ["x"] }, else: { required: ["y"] } },
      { kind: "b" },
      [at("", 'missing required property "y"')],
    ],
    [
      "oneOf matching two",
      { oneOf: [{ type: "number" }, { type: "integer" }] },
      1,
      [at("", "must match exactly one schema in oneOf (matches 2)")],
    ],
    ["formats are annotations", { type: "string", format: "email" }, "not an email", []],
    ["the false schema", false, 1, [at("", "must NOT be present (the schema allows nothing here)")]],
    ["the true schema", true, { anything: [1] }, []],
  ];

  it.each(rows)("%s", (_name, schema, value, issues) => {
    expect(explainSchema(schema, value)).toEqual(issues);
  });
});

describe("explainSchema: unions", () => {
  const content = {
    anyOf: [
      { type: "object", properties: { type: { const: "text" }, text: { type: "string" } }, required: ["type", "text"] },
      {
        type: "object",
        properties: { type: { const: "image" }, data: { type: "string" } },
        required: ["type", "data"],
      },
    ],
  };

  it("when a tag rules out all members but one, that member's issues say what is wrong", () => {
    expect(explainSchema(content, { type: "image", data: 5 })).toEqual([at("/data", "must be string")]);
    expect(explainSchema(content, { type: "text" })).toEqual([at("", 'missing required property "text"')]);
  });

  it("when the value could be meant for several members, or none, the union is the issue", () => {
    expect(explainSchema(content, { type: "audio" })).toEqual([at("", "must match a schema in anyOf")]);
    expect(explainSchema(content, "text")).toEqual([at("", "must match a schema in anyOf")]);
    expect(explainSchema({ oneOf: content.anyOf }, { type: "video" })).toEqual([
      at("", "must match a schema in oneOf"),
    ]);
  });

  it("a value matching a member has no issues", () => {
    expect(explainSchema(content, { type: "text", text: "hi" })).toEqual([]);
  });
});

describe("explainSchema: references within the document", () => {
  const document = {
    definitions: { Role: { enum: ["user", "assistant"] }, "a/b": { type: "number" } },
    $defs: {
      Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" }, role: { $ref: "#/definitions/Role" } } },
    },
  };

  it("follows #/definitions and #/$defs, with escaped tokens, and reports at the value's own pointer", () => {
    const node = { $ref: "#/$defs/Node" };
    expect(explainSchema(node, { next: { next: { role: "system" } } }, { document })).toEqual([
      at("/next/next/role", 'must be equal to one of the allowed values: ["user","assistant"]'),
    ]);
    expect(explainSchema({ $ref: "#/definitions/a~1b" }, "x", { document })).toEqual([at("", "must be number")]);
  });

  it('"#" is the document itself, and a reference that loops on the same value ends', () => {
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    expect(explainSchema(tree, { children: [{ children: [{ children: 1 }] }] })).toEqual([
      at("/children/0/children/0/children", "must be array"),
    ]);
    expect(explainSchema({ $ref: "#", type: "string" }, 1)).toEqual([at("", "must be string")]);
  });

  it("a reference outside the document is an issue, not a fetch", () => {
    expect(explainSchema({ $ref: "https://example.com/schema" }, 1)).toEqual([
      at("", 'unresolvable reference "https://example.com/schema"'),
    ]);
  });
});

describe("explainSchema: limits", () => {
  const many = Array.from({ length: 100 }, () => "x");
  const numbers = { items: { type: "number" } };

  it(`reports at most ${DEFAULT_MAX_EXPLAINED_ISSUES} issues by default, and maxIssues sets another bound`, () => {
    expect(explainSchema(numbers, many)).toHaveLength(DEFAULT_MAX_EXPLAINED_ISSUES);
    const options: ExplainOptions = { maxIssues: 3 };
    expect(explainSchema(numbers, many, options).map((i) => i.pointer)).toEqual(["/0", "/1", "/2"]);
  });

  it("stops at maxDepth nested schemas with an issue saying so, instead of exhausting the stack", () => {
    const list = { type: "object", properties: { next: { $ref: "#" } } };
    let deep: unknown = {};
    for (let i = 0; i < 20_000; i++) deep = { next: deep };
    const issues = explainSchema(list, deep);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toMatch(/^nested more than 256 levels deep/);
    expect(explainSchema(list, deep, { maxDepth: 10 })[0]!.pointer.split("/next").length - 1).toBeLessThan(10);
  });

  it("decides uniqueItems in one pass over a long array", () => {
    const items = Array.from({ length: 200_000 }, (_, i) => ({ id: i, tags: [i % 7] }));
    expect(explainSchema({ uniqueItems: true }, items)).toEqual([]);
    expect(explainSchema({ uniqueItems: true }, [...items, { tags: [0], id: 0 }])).toEqual([
      at("", "must NOT have duplicate items (items ## 0 and 200000 are identical)"),
    ]);
  });
});
