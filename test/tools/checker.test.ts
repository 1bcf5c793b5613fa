// The structured-result checker written into bindings, run on its own: unevaluatedProperties and unevaluatedItems count what the applicators that apply evaluated.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { CHECKER_SOURCE } from "../../generator/tools/checker-source.js";
import { tempDir } from "../kit/paths.js";

type Issue = { pointer: string; message: string };
let check: (schema: unknown, value: unknown) => Issue[];

beforeAll(async () => {
  // The source as a bindings file carries it, with one export to reach its entry point.
  const source = `${CHECKER_SOURCE}\nexport function checkValue(schema: unknown, value: unknown): ToolResultIssue[] {\n  const issues: ToolResultIssue[] = [];\n  _check(schema, value, schema, "", issues, []);\n  return issues;\n}\n`;
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const file = join(tempDir("tools-checker"), "checker.mjs");
  writeFileSync(file, js);
  const loaded = (await import(pathToFileURL(file).href)) as { checkValue: typeof check };
  check = loaded.checkValue;
});

const closedAllOf = {
  type: "object",
  allOf: [{ properties: { a: { type: "number" } } }],
  anyOf: [{ properties: { b: { type: "string" } }, required: ["b"] }, { properties: { c: { type: "string" } } }],
  unevaluatedProperties: false,
};

describe("unevaluatedProperties", () => {
  it.each([
    ["properties of allOf and of the anyOf branch that matches count as evaluated", { a: 1, b: "x" }, []],
    [
      "a property no applicator evaluated is refused where it is",
      { a: 1, b: "x", d: true },
      [{ pointer: "/d", message: "must NOT be here (unevaluatedProperties is false)" }],
    ],
  ])("%s", (_what, value, issues) => {
    expect(check(closedAllOf, value)).toEqual(issues);
  });

  it("a schema for what is left checks each unevaluated property; if/then's properties count when if matched", () => {
    const schema = {
      type: "object",
      properties: { kind: { type: "string" } },
      if: { properties: { kind: { const: "pair" } } },
      then: { properties: { left: { type: "number" }, right: { type: "number" } } },
      unevaluatedProperties: { type: "string" },
    };
    expect(check(schema, { kind: "pair", left: 1, right: 2 })).toEqual([]);
    expect(check(schema, { kind: "one", left: 1 })).toEqual([{ pointer: "/left", message: "must be string" }]);
  });

  it("through $ref: the referenced schema's properties count", () => {
    const schema = {
      $defs: { base: { properties: { id: { type: "integer" } } } },
      type: "object",
      $ref: "#/$defs/base",
      unevaluatedProperties: false,
    };
    expect(check(schema, { id: 1 })).toEqual([]);
    expect(check(schema, { id: 1, other: 2 })).toEqual([
      { pointer: "/other", message: "must NOT be here (unevaluatedProperties is false)" },
    ]);
  });
});

describe("unevaluatedItems", () => {
  it("prefixItems (and those of allOf) count; items past them are refused or checked", () => {
    const closed = {
      type: "array",
      prefixItems: [{ type: "string" }],
      allOf: [{ prefixItems: [{}, { type: "number" }] }],
      unevaluatedItems: false,
    };
    expect(check(closed, ["a", 1])).toEqual([]);
    expect(check(closed, ["a", 1, true])).toEqual([
      { pointer: "/2", message: "must NOT be here (unevaluatedItems is false)" },
    ]);
    const rest = { type: "array", prefixItems: [{ type: "string" }], unevaluatedItems: { type: "number" } };
    expect(check(rest, ["a", 1, "b"])).toEqual([{ pointer: "/2", message: "must be number" }]);
  });

  it("items that match contains count as evaluated", () => {
    const schema = { type: "array", contains: { type: "string" }, unevaluatedItems: { type: "number" } };
    expect(check(schema, ["a", 1, "b"])).toEqual([]);
    expect(check(schema, ["a", true])).toEqual([{ pointer: "/1", message: "must be number" }]);
  });
});

describe("references inside the document", () => {
  it("a $ref to a $anchor, and a $dynamicRef to a $dynamicAnchor, check what they name; anchor-shaped data is not one", () => {
    const schema = {
      $defs: {
        point: { $anchor: "point", type: "object", properties: { x: { type: "number" } }, required: ["x"] },
        node: { $dynamicAnchor: "node", type: "object", properties: { next: { $dynamicRef: "#node" } } },
        decoy: { const: { $anchor: "point" } },
      },
      type: "object",
      properties: { at: { $ref: "#point" }, list: { $ref: "#/$defs/node" } },
    };
    expect(check(schema, { at: { x: 1 }, list: { next: { next: {} } } })).toEqual([]);
    expect(check(schema, { at: {}, list: { next: { next: 3 } } })).toEqual([
      { pointer: "/at/x", message: "must be present (required)" },
      { pointer: "/list/next/next", message: "must be object" },
    ]);
  });
});
