// generator/compiled/ holds Ajv standalone code of the meta-schemas and mcpgen's own schemas; it must be what the
// schemas and the installed Ajv make, and judge as Ajv does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { compiledSchemaModules } from "../../generator/compile-schemas.js";
import {
  validateConfig,
  validateDraft2020,
  validateMethodsEntry,
  validateMethodsSidecar,
} from "../../generator/compiled/schemas-2020.js";
import { validateDraft07 } from "../../generator/compiled/schemas-draft07.js";
import { referenceDir, repoRoot } from "../kit/paths.js";

describe("generator/compiled/", () => {
  it.each(compiledSchemaModules().map((f) => [f.path, f] as const))(
    "%s is up to date (else: npm run -s build && node dist/generator/compile-schemas.js)",
    (_path, file) => {
      expect(readFileSync(join(repoRoot, file.path), "utf8")).toBe(file.content);
    },
  );

  it("judges schemas, sidecars and configs as Ajv compiling them at run time does", () => {
    const read = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
    const ajv2020 = new Ajv2020({ strict: false, validateFormats: false });
    const ajv07 = new Ajv({ strict: false, validateFormats: false });
    const schemas = ["2025-11-25", "2026-07-28", "draft"].map((r) =>
      read(join(referenceDir, "mcp-schema", r, "schema.json")),
    );
    const broken = structuredClone(schemas[0]) as { $defs: { Cursor: { type: unknown } } };
    broken.$defs.Cursor.type = 5;
    for (const s of [...schemas, broken, { $defs: { A: { required: "x" } } }]) {
      expect(validateDraft2020(s)).toBe(ajv2020.validateSchema(s as object));
      expect(validateDraft2020.errors?.[0]?.instancePath).toBe(ajv2020.errors?.[0]?.instancePath);
    }
    const old = read(join(referenceDir, "mcp-schema", "2025-06-18", "schema.json")) as {
      definitions: { Cursor: { type: unknown } };
    };
    expect(validateDraft07(old)).toBe(true);
    old.definitions.Cursor.type = 5;
    expect(validateDraft07(old)).toBe(ajv07.validateSchema(old) as boolean);
    expect(validateDraft07.errors?.[0]?.instancePath).toBe("/definitions/Cursor/type");

    const methodsSchema = read(join(repoRoot, "schema/methods.schema.json")) as object;
    const configSchema = read(join(repoRoot, "schema/mcpgen.config.schema.json")) as object;
    const sidecar = read(join(repoRoot, "schema/methods.json"));
    expect(validateMethodsSidecar(sidecar)).toBe(true);
    expect(validateMethodsSidecar({ methods: [{ method: "x", colour: 1 }] })).toBe(
      ajv2020.validate(methodsSchema, { methods: [{ method: "x", colour: 1 }] }),
    );
    expect(validateMethodsEntry({ method: "ping", result: ["A", "A"] })).toBe(false);
    expect(validateMethodsEntry({ method: "ping", result: ["A", "B"] })).toBe(true);
    expect(validateConfig({ out: "x", emit: { runtimeImport: 3 } })).toBe(
      ajv2020.validate(configSchema, { out: "x", emit: { runtimeImport: 3 } }),
    );
  });
});
