// The assertion keywords through the generator: what the model keeps of each, what is refused (exit 2, naming the
// keyword and where), that the output type-checks, and the places where the guards and validators follow JSON
// Schema's equality and length rules although Ajv's own runtime does not.
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildModel } from "../../generator/build-model.js";
import { emitGuards } from "../../generator/emit/guards.js";
import { emitTypes } from "../../generator/emit/types.js";
import { emitValidators } from "../../generator/emit/validators.js";
import { loadDefinitions } from "../../generator/load.js";
import type { SchemaNode } from "../../generator/model.js";
import { applicatorSiblings, normalizeSchema, toNode } from "../../generator/normalize/index.js";
import { generateSubject } from "../guards/agreement.js";
import { runCli } from "../kit/cli.js";
import { repoRoot, tempDir } from "../kit/paths.js";

const fixture = join(repoRoot, "test/fixtures/keywords/schema.json");

/** A definitions-only 2020-12 schema in a fresh directory, for the cases a table needs. */
function schemaWith(defs: Record<string, unknown>): string {
  const file = join(tempDir("keywords"), "schema.json");
  writeFileSync(file, JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", $defs: defs }));
  return file;
}

const node = (raw: Record<string, unknown>): SchemaNode => {
  const normalized = normalizeSchema({ $defs: { X: raw } }, "$defs")["$defs"] as Record<string, unknown>;
  return toNode(normalized["X"], "#/$defs/");
};

describe("the model keeps each assertion keyword", () => {
  it("numbers, lengths, counts and the pattern as written", () => {
    const raw = {
      minimum: 1,
      maximum: 9,
      exclusiveMinimum: 0,
      exclusiveMaximum: 10,
      multipleOf: 0.5,
      minLength: 1,
      maxLength: 4,
      pattern: "^a",
      minItems: 1,
      maxItems: 3,
      uniqueItems: true,
      minProperties: 1,
      maxProperties: 2,
    };
    expect(node(raw)).toEqual(raw);
  });

  it("propertyNames, not and if/then/else as nodes; dependentRequired sorted by key, each list sorted and deduplicated", () => {
    const n = node({
      type: "object",
      propertyNames: { maxLength: 3 },
      dependentRequired: { zip: ["country", "city", "city"], street: ["city"] },
      not: { required: ["x"] },
      if: { required: ["a"] },
      then: { required: ["b"] },
      else: { required: ["c"] },
    });
    expect(n).toEqual({
      types: ["object"],
      propertyNames: { maxLength: 3 },
      dependentRequired: [
        { key: "street", requires: ["city"] },
        { key: "zip", requires: ["city", "country"] },
      ],
      not: { required: ["x"] },
      conditional: { if: { required: ["a"] }, then: { required: ["b"] }, else: { required: ["c"] } },
    });
  });

  it("drops what asserts nothing: uniqueItems false, an if with neither then nor else, then or else without if", () => {
    expect(node({ type: "array", uniqueItems: false })).toEqual({ types: ["array"] });
    expect(node({ type: "object", if: { required: ["a"] } })).toEqual({ types: ["object"] });
    expect(node({ type: "object", then: { required: ["a"] }, else: { required: ["b"] } })).toEqual({
      types: ["object"],
    });
  });

  it("anyOf or allOf beside other keywords becomes one allOf, so no keyword beside a union is lost", () => {
    const raw = {
      description: "d",
      type: "object",
      required: ["mode"],
      anyOf: [{ required: ["url"] }, { required: ["path"] }],
    };
    expect(applicatorSiblings(raw)).toEqual({
      description: "d",
      allOf: [{ anyOf: [{ required: ["url"] }, { required: ["path"] }] }, { type: "object", required: ["mode"] }],
    });
    expect(applicatorSiblings({ allOf: [{ type: "string" }], anyOf: [{ minLength: 1 }], maxLength: 3 })).toEqual({
      allOf: [{ type: "string" }, { anyOf: [{ minLength: 1 }] }, { maxLength: 3 }],
    });
    const lone = { anyOf: [{ type: "string" }, { type: "null" }], description: "kept as it is" };
    expect(applicatorSiblings(lone)).toEqual(lone);
  });
});

describe("keywords the guards cannot check", () => {
  const work = tempDir("keywords-cli");
  cpSync(join(repoRoot, "schema"), join(work, "schema"), { recursive: true });

  it.each([
    ["patternProperties", { "^x-": { type: "string" } }],
    ["contains", { type: "string" }],
    ["unevaluatedProperties", false],
    ["dependentSchemas", { a: { required: ["b"] } }],
    ["prefixItems", [{ type: "string" }]],
  ])("%s is refused with exit 2, naming the keyword and its JSON pointer", (keyword, value) => {
    const dir = join(work, keyword);
    cpSync(join(work, "schema"), dir, { recursive: true });
    const schema = JSON.parse(readFileSync(join(dir, "schema.json"), "utf8"));
    schema.$defs.Implementation.properties.icons[keyword] = value;
    writeFileSync(join(dir, "schema.json"), JSON.stringify(schema));
    const r = runCli(["generate", "--schema", join(dir, "schema.json"), "--out", join(work, "out")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `schema.json#/$defs/Implementation/properties/icons/${keyword}: keyword "${keyword}" is not supported by mcpgen's guards`,
    );
  });

  it("draft-07 tuple items (an array) are refused as a SchemaError naming the pointer, not a crash", () => {
    const dir = tempDir("keywords-tuple");
    const file = join(dir, "schema.json");
    writeFileSync(
      file,
      JSON.stringify({
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { T: { type: "array", items: [{ type: "string" }] } },
      }),
    );
    expect(() => buildModel(loadDefinitions(file))).toThrow(
      expect.objectContaining({
        name: "SchemaError",
        where: "/definitions/T/items",
        message: expect.stringContaining('"items" as an array'),
      }),
    );
  });

  it("a pattern that is not a valid regular expression under the u flag is refused with exit 2 and its pointer", () => {
    const dir = join(work, "bad-pattern");
    cpSync(join(work, "schema"), dir, { recursive: true });
    const schema = JSON.parse(readFileSync(join(dir, "schema.json"), "utf8"));
    // Valid without the u flag (an identity escape), a syntax error with it, as JSON Schema reads patterns.
    schema.$defs.Implementation.properties.name = { type: "string", pattern: "^\\a$" };
    writeFileSync(join(dir, "schema.json"), JSON.stringify(schema));
    expect(() => new RegExp("^\\a$")).not.toThrow();
    const r = runCli(["generate", "--schema", join(dir, "schema.json"), "--out", join(work, "out")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'schema.json#/$defs/Implementation/properties/name/pattern: pattern "^\\\\a$" is not a valid ECMA-262 regular expression with the u flag',
    );
  });
});

describe("the generated code for a schema using every keyword", () => {
  it("type-checks under tsc --strict: types, guards and validators", async () => {
    const model = buildModel(loadDefinitions(fixture));
    const dir = tempDir("keywords-tsc");
    writeFileSync(join(dir, "types.ts"), await emitTypes(model));
    writeFileSync(join(dir, "guards.ts"), emitGuards(model));
    writeFileSync(join(dir, "validators.ts"), emitValidators(model, "../../runtime/index.js"));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: "../../tsconfig.json",
        compilerOptions: { noEmit: true, strict: true, rootDir: "../.." },
        include: ["*.ts"],
      }),
    );
    let output = "";
    try {
      execFileSync(
        process.execPath,
        [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")],
        { encoding: "utf8", stdio: "pipe" },
      );
    } catch (error) {
      output = String((error as { stdout?: string }).stdout);
    }
    expect(output).toBe("");
    const types = readFileSync(join(dir, "types.ts"), "utf8");
    // A const object and an enum of mixed types keep their values in the types.
    expect(types).toMatch(/export type Mixed =[\s\S]*"one"[\s\S]*true[\s\S]*null/);
    expect(types).toMatch(/export (interface Origin|type Origin =)/);
  });

  it("compiles each pattern once, when the module loads, with the u flag", () => {
    const model = buildModel(loadDefinitions(fixture));
    const guards = emitGuards(model);
    const patterns = guards.split("\n").filter((l) => l.includes("new RegExp("));
    expect(patterns.length).toBe(new Set(patterns).size);
    expect(patterns.every((l) => /^const _re\d+ = new RegExp\(".*", "u"\);$/.test(l))).toBe(true);
    expect(patterns.some((l) => l.includes(String.raw`^@\\p{L}`))).toBe(true);
  });
});

describe("uniqueItems on an array as long as a message allows", () => {
  it("is decided in one pass by guard and explainer, not by comparing every pair", async () => {
    // 200,000 distinct objects: comparing every pair is 2e10 comparisons, many minutes of CPU; one pass is linear
    // in the array's size. The suite's timeout is only the hang guard.
    const subject = await generateSubject(schemaWith({ X: { type: "array", uniqueItems: true } }));
    const items = Array.from({ length: 200_000 }, (_, i) => ({ id: i, tags: [i % 7, "t"] }));
    expect(subject.guardFor("X")(items)).toBe(true);
    expect(subject.explainFor("X")(items)).toEqual([]);
    const repeated = [...items, { tags: [0, "t"], id: 0 }];
    expect(subject.guardFor("X")(repeated)).toBe(false);
    expect(subject.explainFor("X")(repeated)).toEqual([
      { pointer: "", message: "must NOT have duplicate items (items ## 0 and 200000 are identical)" },
    ]);
  });
});

describe("where Ajv's runtime departs from JSON Schema, the guards and validators follow JSON Schema", () => {
  // Each row: a schema, a value, what JSON Schema says, and what Ajv 2020 says (a boolean, or "throws").
  const rows: {
    name: string;
    schema: Record<string, unknown>;
    value: string;
    valid: boolean;
    ajv: boolean | "throws";
  }[] = [
    {
      name: 'a repeated "__proto__" string under uniqueItems is a duplicate',
      schema: { type: "array", items: { type: "string" }, uniqueItems: true },
      value: '["__proto__", "__proto__"]',
      valid: false,
      ajv: true,
    },
    {
      name: 'two equal objects with an own "constructor" key are duplicates',
      schema: { type: "array", uniqueItems: true },
      value: '[{"constructor": {}}, {"constructor": {}}]',
      valid: false,
      ajv: true,
    },
    {
      name: 'an own "valueOf" key is an ordinary key for uniqueItems',
      schema: { type: "array", uniqueItems: true },
      value: '[{"valueOf": 1}, {"valueOf": 2}]',
      valid: true,
      ajv: "throws",
    },
    {
      name: "and for const",
      schema: { const: { toString: "a" } },
      value: '{"toString": "a"}',
      valid: true,
      ajv: "throws",
    },
    {
      name: 'an own "__proto__" key is not the const\'s other key (Ajv agrees)',
      schema: { const: { a: 1, b: {} } },
      value: '{"a": 1, "__proto__": {}}',
      valid: false,
      ajv: false,
    },
    {
      name: "lone surrogates count one code point each (Ajv agrees)",
      schema: { type: "string", maxLength: 2 },
      value: '"\\ud83d\\ud83d\\ud83d"',
      valid: false,
      ajv: false,
    },
    {
      name: "a surrogate pair is one code point (Ajv agrees)",
      schema: { type: "string", minLength: 2, maxLength: 2 },
      value: '"\\ud83d\\ude00\\ud83d\\ude00"',
      valid: true,
      ajv: true,
    },
  ];

  it.each(rows)("$name", async ({ schema, value, valid, ajv }) => {
    const subject = await generateSubject(schemaWith({ X: schema }));
    const parsed = JSON.parse(value) as unknown;
    let ajvSays: boolean | "throws";
    try {
      ajvSays = subject.oracle.oracleFor("X")(parsed);
    } catch {
      ajvSays = "throws";
    }
    expect({
      guard: subject.guardFor("X")(parsed),
      explainEmpty: subject.explainFor("X")(parsed).length === 0,
      ajv: ajvSays,
    }).toEqual({ guard: valid, explainEmpty: valid, ajv });
  });
});
