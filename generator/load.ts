// Load step: read a schema file and its methods sidecar, check them against their meta-schemas and resolve every $ref.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import {
  validateConfig,
  validateDraft2020,
  validateMethodsEntry,
  validateMethodsSidecar,
  type CompiledValidator,
} from "./compiled/schemas-2020.js";
import { validateDraft07 } from "./compiled/schemas-draft07.js";
import { SchemaError, SchemaErrors } from "./errors.js";
import { canonicalJson, parseJsonText, readText, isObject } from "./json.js";
import { toSidecar, type Sidecar } from "./methods.js";
import { escapeToken, toPointer } from "./pointer.js";

export { projectRoot } from "./root.js";

export type Dialect = "2020-12" | "draft-07";

export interface LoadedSchema {
  /** Path as the user named it, for messages. */
  file: string;
  /** What the generated header names: the file's name relative to the working directory, with forward slashes. */
  displayName: string;
  /** sha256 of the schema's canonical JSON (sorted keys), so reordering keys does not change it. */
  sha256: string;
  dialect: Dialect;
  /** Pointer prefix of definitions: "/$defs" or "/definitions". */
  defsPointer: string;
  definitions: Record<string, unknown>;
  /** The methods sidecar, when there is one: overrides of the method table derived from the schema. */
  sidecar?: Sidecar;
  /** Where a sidecar was looked for and not found (the default, beside the schema), for the note that says so. */
  sidecarLookedFor?: string;
}

export function detectDialect(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  if (declared.includes("2020-12")) return "2020-12";
  if (declared.includes("draft-07") || isObject(schema["definitions"])) return "draft-07";
  return "2020-12";
}

/** Every `$ref` must be local and name an existing definition; the pointer says where a bad one stands. */
function checkRefs(file: string, root: Record<string, unknown>, defsKey: string): void {
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, [...path, i]));
      return;
    }
    if (!isObject(node)) return;
    for (const [key, child] of Object.entries(node)) {
      if (key === "$ref") {
        const here = toPointer([...path, key]);
        if (typeof child !== "string") throw new SchemaError(file, "$ref must be a string", here);
        const prefix = `#/${defsKey}/`;
        if (!child.startsWith(prefix))
          throw new SchemaError(
            file,
            `unsupported $ref ${JSON.stringify(child)}: only local references to ${prefix}<Name> are supported`,
            here,
          );
        const name = child.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~");
        const defs = root[defsKey] as Record<string, unknown>;
        if (!Object.prototype.hasOwnProperty.call(defs, name))
          throw new SchemaError(
            file,
            `dangling $ref ${JSON.stringify(child)}: no definition named ${JSON.stringify(name)}`,
            here,
          );
      } else if (key !== "const" && key !== "enum" && key !== "default" && key !== "examples") {
        walk(child, [...path, key]);
      }
    }
  };
  walk(root, []);
}

// The meta-schemas and the project's own schemas are checked by Ajv standalone code compiled ahead of time
// (generator/compiled/, written by compile-schemas.ts): compiling a meta-schema at every run cost more than the
// rest of loading. A test keeps the compiled code equal to what the schemas and the installed Ajv make.
const PROJECT_VALIDATORS: Record<string, CompiledValidator> = {
  "schema/methods.schema.json": validateMethodsSidecar,
  "schema/methods.schema.json#/$defs/entry": validateMethodsEntry,
  "schema/mcpgen.config.schema.json": validateConfig,
};

/**
 * The compiled validator of one of the project's own schemas (`schema/methods.schema.json`, the config schema), or
 * of one of its definitions (`fragment` "#/$defs/entry").
 */
export function projectSchemaValidator(relPath: string, fragment = ""): CompiledValidator {
  const validator = PROJECT_VALIDATORS[relPath + fragment];
  if (validator === undefined)
    throw new Error(`no compiled validator for ${relPath}${fragment}: add it to generator/compile-schemas.ts`);
  return validator;
}

type AjvError = NonNullable<CompiledValidator["errors"]>[number];

function describe(err: AjvError): { message: string; pointer: string } {
  const extra =
    err.keyword === "additionalProperties"
      ? String((err.params as { additionalProperty: string }).additionalProperty)
      : undefined;
  return extra === undefined
    ? { message: err.message ?? "invalid", pointer: err.instancePath }
    : { message: `unknown field "${extra}"`, pointer: `${err.instancePath}/${escapeToken(extra)}` };
}

/**
 * Checks a sidecar against schema/methods.schema.json. Every bad entry is found, not only the first: each entry is
 * checked on its own (the validator stops at a first error, which keeps it fast). Bad entries are left out and
 * their errors kept, so the model builder reports them together with what it finds in the good ones.
 */
function validateMethodsShape(file: string, value: unknown): Sidecar {
  const whole = projectSchemaValidator("schema/methods.schema.json");
  if (whole(value)) return toSidecar(file, (value as { methods: Record<string, unknown>[] }).methods);
  const methods = isObject(value) ? value["methods"] : undefined;
  const first = whole.errors![0]!;
  if (!Array.isArray(methods) || !first.instancePath.startsWith("/methods/")) {
    const { message, pointer } = describe(first);
    throw new SchemaError(file, `methods sidecar: ${message}`, pointer);
  }
  const entry = projectSchemaValidator("schema/methods.schema.json", "#/$defs/entry");
  const errors: SchemaError[] = [];
  const good = methods.map((m: unknown, i) => {
    if (entry(m)) return m as Record<string, unknown>;
    const { message, pointer } = describe(entry.errors![0]!);
    errors.push(new SchemaError(file, `methods sidecar: ${message}`, `/methods/${i}${pointer}`));
    return undefined;
  });
  return toSidecar(file, good, errors);
}

/** Where the sidecar is looked for when none is named: `methods.json` beside the schema. */
export function defaultMethodsFile(schemaFile: string): string {
  return resolve(dirname(schemaFile), "methods.json");
}

/**
 * Loads the schema and its sidecar: the one named (which must exist), else `methods.json` beside the schema if
 * there is one. Without a sidecar the method table comes from the schema alone.
 */
export function loadSchema(schemaFile: string, methodsFile?: string, sourceName?: string): LoadedSchema {
  const loaded = loadDefinitions(schemaFile, sourceName);
  // Named as the user named the schema (relative stays relative), for messages.
  const file = methodsFile ?? join(dirname(schemaFile), "methods.json");
  if (methodsFile === undefined && !existsSync(file)) return { ...loaded, sidecarLookedFor: file };
  return { ...loaded, sidecar: validateMethodsShape(file, parseJsonText(readText(file), file)) };
}

/** Everything loadSchema checks except the sidecar; `text`, when given, stands in for the file (e.g. read from git). */
export function loadDefinitions(schemaFile: string, sourceName?: string, text?: string): LoadedSchema {
  const raw = text ?? readText(schemaFile);
  const root = parseJsonText(raw, schemaFile);
  if (!isObject(root)) throw new SchemaError(schemaFile, "a schema must be a JSON object", "");
  const dialect = detectDialect(root);
  const defsKey = dialect === "2020-12" && isObject(root["$defs"]) ? "$defs" : "definitions";
  if (!isObject(root[defsKey]))
    throw new SchemaError(schemaFile, `no definitions: expected an object at /${defsKey}`, `/${defsKey}`);
  const meta = dialect === "draft-07" ? validateDraft07 : validateDraft2020;
  if (!meta(root)) {
    const err = meta.errors![0]!;
    throw new SchemaError(
      schemaFile,
      `not a valid ${dialect} JSON Schema: ${err.message ?? "invalid"}`,
      err.instancePath,
    );
  }
  checkRefs(schemaFile, root, defsKey);
  const rel = relative(process.cwd(), resolve(schemaFile)).split("\\").join("/");
  return {
    file: schemaFile,
    displayName: sourceName ?? (rel.startsWith("..") ? basename(schemaFile) : rel),
    sha256: createHash("sha256").update(canonicalJson(root)).digest("hex"),
    dialect,
    defsPointer: `/${defsKey}`,
    definitions: root[defsKey] as Record<string, unknown>,
  };
}

/** Checks a methods sidecar's text against schema/methods.schema.json. */
export function parseMethodsSidecar(file: string, text: string): Sidecar {
  return validateMethodsShape(file, parseJsonText(text, file));
}
