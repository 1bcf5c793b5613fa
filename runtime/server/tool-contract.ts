// A tool's inputSchema or outputSchema, JSON Schema or Standard Schema v1, as the JSON Schema tools/list shows and the check each call runs.
import { isPlainObject as isObject, type JsonObject } from "../rpc/jsonrpc.js";
import { errorMessage } from "./results.js";
import type { StandardIssue, StandardSchemaProps, StandardSchemaV1 } from "./standard-schema.js";
import type { SchemaCompiler } from "./tool-schema.js";
import { pointerPart } from "../validation/explain.js";

/** A checked value: the one to use from here on (a Standard Schema's output), or what is wrong with it. */
export type Checked =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problems: string[] };

export interface ToolContract {
  /** The JSON Schema listed in tools/list. */
  readonly json: JsonObject;
  /** Sync for JSON Schema; a Standard Schema's validation may be async. */
  readonly check: (value: unknown) => Checked | Promise<Checked>;
}

/** Where a contract comes from, for messages and for turning a Standard Schema into JSON Schema. */
export interface ContractSource {
  readonly tool: string;
  readonly member: "inputSchema" | "outputSchema";
  /** How JSON Schemas become checks (the server's compileSchema). */
  readonly compile: SchemaCompiler;
  /** The tool's own converter: used before the schema's Standard JSON Schema interface. */
  readonly toolConverter: ((schema: StandardSchemaV1) => unknown) | undefined;
  /** The server's converter: used when the schema has no Standard JSON Schema interface. */
  readonly serverConverter: ((schema: StandardSchemaV1) => unknown) | undefined;
}

/**
 * The target asked of a Standard JSON Schema: MCP reads a schema without `$schema` as 2020-12, so that dialect
 * needs nothing from clients that a plain JSON Schema tool would not.
 */
const TARGET = "draft-2020-12";

/** The contract of one schema, made once at registration; a schema that cannot be one is a TypeError naming the tool. */
export function toolContract(schema: unknown, source: ContractSource): ToolContract {
  const props = standardProps(schema);
  if (props !== undefined) return standardContract(schema as StandardSchemaV1, props, source);
  const where = `Tool ${JSON.stringify(source.tool)}: ${source.member}`;
  if (!isObject(schema)) throw new TypeError(`${where} must be a JSON Schema object or a Standard Schema`);
  requireObjectType(schema, where);
  const check = source.compile(schema);
  return {
    json: schema,
    check: (value) => {
      const problems = check(value);
      return problems.length === 0 ? { ok: true, value } : { ok: false, problems: [...problems] };
    },
  };
}

/** The `~standard` member of a Standard Schema v1 (ArkType's schemas are functions), else undefined. */
function standardProps(value: unknown): StandardSchemaProps | undefined {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined;
  const props: unknown = (value as { "~standard"?: unknown })["~standard"];
  if (typeof props !== "object" || props === null) return undefined;
  const { version, validate } = props as { version?: unknown; validate?: unknown };
  return version === 1 && typeof validate === "function" ? (props as StandardSchemaProps) : undefined;
}

function standardContract(schema: StandardSchemaV1, props: StandardSchemaProps, source: ContractSource): ToolContract {
  const vendor = typeof props.vendor === "string" ? props.vendor : "unknown";
  const where = `Tool ${JSON.stringify(source.tool)}: ${source.member} (a ${vendor} schema)`;
  const convert = converter(schema, props, source);
  if (convert === undefined) {
    throw new TypeError(
      `${where} has no JSON Schema: pass toJsonSchema (on the tool or the server; e.g. Valibot's toJsonSchema from ` +
        "@valibot/to-json-schema), or use a schema library that implements Standard JSON Schema (~standard.jsonSchema)",
    );
  }
  let json: unknown;
  try {
    json = convert();
  } catch (error) {
    throw new TypeError(`${where} could not be turned into JSON Schema: ${errorMessage(error)}`, { cause: error });
  }
  if (!isObject(json)) throw new TypeError(`${where} became ${describe(json)}, not a JSON Schema object`);
  requireObjectType(json, where);
  const output = source.member === "outputSchema";
  const settle = (result: unknown): Checked => {
    if (!isObject(result)) return { ok: false, problems: [`/: ${vendor} validation gave no result`] };
    const issues = result.issues;
    if (Array.isArray(issues)) return { ok: false, problems: issues.map(issueText) };
    // structuredContent is an object on the wire, whatever a transform made of it.
    if (output && !isObject(result.value)) return { ok: false, problems: ["/: must be an object"] };
    return { ok: true, value: result.value };
  };
  return {
    json,
    check: (value) => {
      const result: unknown = props.validate(value);
      return isThenable(result) ? Promise.resolve(result).then(settle) : settle(result);
    },
  };
}

/** How to get the JSON Schema: the tool's converter, else the schema's own Standard JSON Schema, else the server's. */
function converter(
  schema: StandardSchemaV1,
  props: StandardSchemaProps,
  source: ContractSource,
): (() => unknown) | undefined {
  const { toolConverter, serverConverter } = source;
  if (toolConverter !== undefined) return () => toolConverter(schema);
  const standard: unknown = (props as { jsonSchema?: unknown }).jsonSchema;
  // The arguments are checked against what a client sends; the structuredContent sent is validation's output.
  const direction = source.member === "inputSchema" ? "input" : "output";
  if (typeof standard === "object" && standard !== null) {
    const method: unknown = (standard as { [key: string]: unknown })[direction];
    if (typeof method === "function") return () => method.call(standard, { target: TARGET }) as unknown;
  }
  if (serverConverter !== undefined) return () => serverConverter(schema);
  return undefined;
}

/** The spec requires both schemas of a tool to be object schemas; a client may refuse a whole list otherwise. */
function requireObjectType(schema: JsonObject, where: string): void {
  if (schema.type !== "object")
    throw new TypeError(`${where} must describe an object (type: "object"); its type is ${describe(schema.type)}`);
}

/** "/path/to/field: message", the path as a JSON Pointer as the built-in checker writes it. */
function issueText(issue: unknown): string {
  const { message, path } = isObject(issue) ? (issue as Partial<StandardIssue>) : {};
  let at = "";
  if (Array.isArray(path)) {
    for (const segment of path as unknown[]) {
      const key: unknown =
        typeof segment === "object" && segment !== null ? (segment as { key?: unknown }).key : segment;
      at += pointerPart(
        typeof key === "number" ? key : typeof key === "symbol" ? (key.description ?? "") : String(key),
      );
    }
  }
  return `${at || "/"}: ${typeof message === "string" ? message : "invalid"}`;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function describe(value: unknown): string {
  if (value === undefined) return "none";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : (JSON.stringify(value) ?? typeof value);
}
