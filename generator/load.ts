// Load step: read a schema file and its methods sidecar, check them against their meta-schemas and resolve every $ref.
import { createHash } from "node:crypto";
import { basename, dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv as Ajv7 } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { SchemaError } from "./errors.js";
import { canonicalJson, parseJsonText, readJson, readText, isObject } from "./json.js";
import { toPointer } from "./pointer.js";

export type Dialect = "2020-12" | "draft-07";

export interface MethodEntry {
  method: string;
  kind: "request" | "notification";
  direction: "client-to-server" | "server-to-client" | "both";
  message: string;
  params?: string;
  result?: string;
}

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
  methods: MethodEntry[];
  methodsFile: string;
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
        if (!child.startsWith(prefix)) throw new SchemaError(file, `unsupported $ref ${JSON.stringify(child)}: only local references to ${prefix}<Name> are supported`, here);
        const name = child.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~");
        const defs = root[defsKey] as Record<string, unknown>;
        if (!Object.prototype.hasOwnProperty.call(defs, name)) throw new SchemaError(file, `dangling $ref ${JSON.stringify(child)}: no definition named ${JSON.stringify(name)}`, here);
      } else if (key !== "const" && key !== "enum" && key !== "default" && key !== "examples") {
        walk(child, [...path, key]);
      }
    }
  };
  walk(root, []);
}

// One Ajv per dialect, made on first use: compiling a meta-schema is the costly part, so it is done once
// and the same 2020-12 instance also checks the methods sidecar.
let ajv2020: Ajv2020 | undefined;
let ajv7: Ajv7 | undefined;
function metaValidator(dialect: Dialect): Ajv2020 | Ajv7 {
  if (dialect === "draft-07") return (ajv7 ??= new Ajv7({ strict: false, validateFormats: false }));
  return (ajv2020 ??= new Ajv2020({ strict: false, validateFormats: false }));
}

const here = dirname(fileURLToPath(import.meta.url));
/** The project root, both from generator/ sources and from dist/generator/. */
export const projectRoot = resolve(here, basename(dirname(here)) === "dist" ? "../.." : "..");

const projectValidators = new Map<string, ReturnType<Ajv2020["compile"]>>();
/**
 * A validator for one of the project's own 2020-12 schemas (`schema/methods.schema.json`, the config schema),
 * compiled once on the shared instance, so the 2020-12 meta-schema is not compiled again for each.
 */
export function projectSchemaValidator(relPath: string): ReturnType<Ajv2020["compile"]> {
  let validator = projectValidators.get(relPath);
  if (validator === undefined) {
    const metaFile = resolve(projectRoot, relPath);
    validator = (metaValidator("2020-12") as Ajv2020).compile(readJson(metaFile) as object);
    projectValidators.set(relPath, validator);
  }
  return validator;
}

function validateMethodsShape(file: string, value: unknown): MethodEntry[] {
  const methodsValidator = projectSchemaValidator("schema/methods.schema.json");
  if (!methodsValidator(value)) {
    const err = methodsValidator.errors![0]!;
    throw new SchemaError(file, `methods sidecar: ${err.message ?? "invalid"}${err.params && "additionalProperty" in err.params ? ` (${String(err.params["additionalProperty"])})` : ""}`, err.instancePath);
  }
  return (value as { methods: MethodEntry[] }).methods;
}

/** Where the sidecar is looked for when none is named: `methods.json` beside the schema. */
export function defaultMethodsFile(schemaFile: string): string {
  return resolve(dirname(schemaFile), "methods.json");
}

export function loadSchema(schemaFile: string, methodsFile = defaultMethodsFile(schemaFile), sourceName?: string): LoadedSchema {
  const loaded = loadDefinitions(schemaFile, sourceName);
  const methods = validateMethodsShape(methodsFile, parseJsonText(readText(methodsFile), methodsFile));
  return { ...loaded, methods, methodsFile };
}

/** Everything loadSchema checks except the sidecar; `text`, when given, stands in for the file (e.g. read from git). */
export function loadDefinitions(schemaFile: string, sourceName?: string, text?: string): Omit<LoadedSchema, "methods" | "methodsFile"> {
  const raw = text ?? readText(schemaFile);
  const root = parseJsonText(raw, schemaFile);
  if (!isObject(root)) throw new SchemaError(schemaFile, "a schema must be a JSON object", "");
  const dialect = detectDialect(root);
  const defsKey = dialect === "2020-12" && isObject(root["$defs"]) ? "$defs" : "definitions";
  if (!isObject(root[defsKey])) throw new SchemaError(schemaFile, `no definitions: expected an object at /${defsKey}`, `/${defsKey}`);
  const meta = metaValidator(dialect);
  if (!meta.validateSchema(root)) {
    const err = meta.errors![0]!;
    throw new SchemaError(schemaFile, `not a valid ${dialect} JSON Schema: ${err.message ?? "invalid"}`, err.instancePath);
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
export function parseMethodsSidecar(file: string, text: string): MethodEntry[] {
  return validateMethodsShape(file, parseJsonText(text, file));
}
