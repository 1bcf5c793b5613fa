// The catalogue snapshot of a server: its shape, its canonical bytes, and reading one back with errors that point into the file.
import { createHash } from "node:crypto";
import { SchemaError } from "../errors.js";
import { canonicalJson, compareCodeUnits, isObject, parseJsonText, sortKeys } from "../json.js";
import type { JsonValue } from "../model.js";
import { toPointer } from "../pointer.js";
import { eachSubschemaValue, localTarget, type Tokens } from "./schema-walk.js";

/** The catalogue format this mcpgen writes and reads. */
export const CATALOGUE_FORMAT = 1;
/** The member that marks a JSON file as a catalogue (mcpgen diff tells catalogues from schemas by it). */
export const CATALOGUE_MARK = "mcpgenCatalogue";

export type JsonObject = { [key: string]: JsonValue };

export interface Catalogue {
  server: { name: string; version: string };
  protocolVersion: string;
  /** Sorted by name; each has `name` and an `inputSchema` object, maybe an `outputSchema` object. */
  tools: JsonObject[];
  /** Sorted by name. */
  prompts: JsonObject[];
  /** Sorted by uriTemplate, then name. */
  resourceTemplates: JsonObject[];
}

/** A catalogue read from a file: its text and hash (the generated headers name both) and what it holds. */
export interface LoadedCatalogue {
  /** As the user named it. */
  file: string;
  sha256: string;
  catalogue: Catalogue;
}

const str = (o: JsonObject, key: string): string => (typeof o[key] === "string" ? (o[key] as string) : "");

export const toolName = (tool: JsonObject): string => str(tool, "name");
export const promptName = (prompt: JsonObject): string => str(prompt, "name");
export const templateKey = (template: JsonObject): string => str(template, "uriTemplate");

function byKey(key: (o: JsonObject) => string, then?: (o: JsonObject) => string) {
  return (a: JsonObject, b: JsonObject): number =>
    compareCodeUnits(key(a), key(b)) || (then ? compareCodeUnits(then(a), then(b)) : 0);
}

/** The catalogue in its one canonical order: lists sorted by name, every object's keys sorted. */
export function canonicalCatalogue(c: Catalogue): Catalogue {
  const sorted = (list: JsonObject[]): JsonObject[] => list.map((o) => sortKeys(o) as JsonObject);
  return {
    server: { name: c.server.name, version: c.server.version },
    protocolVersion: c.protocolVersion,
    tools: sorted(c.tools).sort(byKey(toolName)),
    prompts: sorted(c.prompts).sort(byKey(promptName)),
    resourceTemplates: sorted(c.resourceTemplates).sort(byKey(templateKey, promptName)),
  };
}

/** The file's bytes: sorted keys, two-space indent, a trailing newline, and nothing that changes between pulls. */
export function catalogueText(c: Catalogue): string {
  const canonical = canonicalCatalogue(c);
  return canonicalJson({ [CATALOGUE_MARK]: CATALOGUE_FORMAT, ...canonical });
}

/** Whether parsed JSON is meant as a catalogue (it carries the marker member), whatever else it holds. */
export function looksLikeCatalogue(value: unknown): boolean {
  return isObject(value) && Object.hasOwn(value, CATALOGUE_MARK);
}

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "null", "object", "array"]);

/** Checks one tool schema: a JSON object whose every subschema is an object or boolean, local refs that resolve. */
function checkSchema(file: string, schema: unknown, at: Tokens, what: string): void {
  const fail = (message: string, tokens: Tokens): never => {
    throw new SchemaError(file, message, toPointer(tokens));
  };
  if (!isObject(schema)) fail(`${what} must be a JSON Schema object`, at);
  const type = (schema as JsonObject)["type"];
  if (type !== undefined && type !== "object" && !(Array.isArray(type) && type.includes("object")))
    fail(`${what} must describe an object (type "object"): tool arguments and structured results are objects`, [
      ...at,
      "type",
    ]);
  eachSubschemaValue(schema, (node, tokens) => {
    const here = [...at, ...tokens];
    if (typeof node === "boolean") return;
    if (!isObject(node)) return fail(`not a schema: expected an object or a boolean`, here);
    const t = node["type"];
    const types = Array.isArray(t) ? t : t === undefined ? [] : [t];
    types.forEach((name, i) => {
      if (typeof name !== "string" || !JSON_TYPES.has(name))
        fail(`unknown type ${JSON.stringify(name)}`, Array.isArray(t) ? [...here, "type", i] : [...here, "type"]);
    });
    const ref = node["$ref"];
    if (ref !== undefined) {
      if (typeof ref !== "string") fail(`$ref must be a string`, [...here, "$ref"]);
      else if (localTarget(schema, ref) === "dangling")
        fail(
          `$ref ${JSON.stringify(ref)} names nothing in this ${what} (references resolve inside the tool's own schema; nothing is fetched)`,
          [...here, "$ref"],
        );
    }
    const pattern = node["pattern"];
    if (pattern !== undefined) {
      try {
        if (typeof pattern !== "string") throw new Error("not a string");
        new RegExp(pattern, "u");
      } catch (error) {
        fail(
          `pattern ${JSON.stringify(pattern)} is not an ECMA-262 regular expression with the u flag (${(error as Error).message})`,
          [...here, "pattern"],
        );
      }
    }
    const required = node["required"];
    if (required !== undefined && (!Array.isArray(required) || required.some((r) => typeof r !== "string")))
      fail(`required must be a list of property names`, [...here, "required"]);
  });
}

function listOf(file: string, root: JsonObject, key: string): JsonObject[] {
  const list = root[key];
  if (!Array.isArray(list))
    throw new SchemaError(file, `${key} must be a list`, toPointer(list === undefined ? [] : [key]));
  list.forEach((entry, i) => {
    if (!isObject(entry)) throw new SchemaError(file, `expected an object`, toPointer([key, i]));
  });
  return list as JsonObject[];
}

/** Names must be strings and unique: a second entry of a name is an error at its pointer. */
function uniqueNames(file: string, list: JsonObject[], key: string, field: string, what: string): void {
  const seen = new Map<string, number>();
  list.forEach((entry, i) => {
    const name = entry[field];
    if (typeof name !== "string" || name === "")
      throw new SchemaError(file, `a ${what} needs a non-empty string ${field}`, toPointer([key, i, field]));
    const first = seen.get(name);
    if (first !== undefined)
      throw new SchemaError(
        file,
        `${what} ${JSON.stringify(name)} is listed twice (also at ${toPointer([key, first])})`,
        toPointer([key, i, field]),
      );
    seen.set(name, i);
  });
}

/** Parses and checks a catalogue; every problem is a SchemaError with the file and a JSON pointer (or line:column). */
export function parseCatalogue(file: string, text: string): LoadedCatalogue {
  const root = parseJsonText(text, file);
  if (!isObject(root)) throw new SchemaError(file, "a catalogue is a JSON object", "");
  const o = root as JsonObject;
  if (!Object.hasOwn(o, CATALOGUE_MARK))
    throw new SchemaError(file, `not a catalogue: no "${CATALOGUE_MARK}" member (mcpgen tools pull writes one)`, "");
  if (o[CATALOGUE_MARK] !== CATALOGUE_FORMAT)
    throw new SchemaError(
      file,
      `catalogue format ${JSON.stringify(o[CATALOGUE_MARK])} is not one this mcpgen reads (${CATALOGUE_FORMAT})`,
      `/${CATALOGUE_MARK}`,
    );
  const server = o["server"];
  if (!isObject(server)) throw new SchemaError(file, "server must be an object with name and version", "/server");
  for (const key of ["name", "version"])
    if (typeof server[key] !== "string") throw new SchemaError(file, `must be a string`, `/server/${key}`);
  if (typeof o["protocolVersion"] !== "string")
    throw new SchemaError(file, "protocolVersion must be a string", "/protocolVersion");

  const tools = listOf(file, o, "tools");
  uniqueNames(file, tools, "tools", "name", "tool");
  tools.forEach((tool, i) => {
    if (!Object.hasOwn(tool, "inputSchema"))
      throw new SchemaError(file, "a tool needs an inputSchema", toPointer(["tools", i]));
    checkSchema(file, tool["inputSchema"], ["tools", i, "inputSchema"], "inputSchema");
    if (Object.hasOwn(tool, "outputSchema"))
      checkSchema(file, tool["outputSchema"], ["tools", i, "outputSchema"], "outputSchema");
  });
  const prompts = listOf(file, o, "prompts");
  uniqueNames(file, prompts, "prompts", "name", "prompt");
  prompts.forEach((prompt, i) => {
    const args = prompt["arguments"];
    if (args === undefined) return;
    if (!Array.isArray(args))
      throw new SchemaError(file, "arguments must be a list", toPointer(["prompts", i, "arguments"]));
    args.forEach((arg, j) => {
      if (!isObject(arg) || typeof arg["name"] !== "string")
        throw new SchemaError(file, "an argument needs a string name", toPointer(["prompts", i, "arguments", j]));
    });
  });
  const resourceTemplates = listOf(file, o, "resourceTemplates");
  uniqueNames(file, resourceTemplates, "resourceTemplates", "uriTemplate", "resource template");
  return {
    file,
    sha256: createHash("sha256").update(text).digest("hex"),
    catalogue: {
      server: { name: server["name"] as string, version: server["version"] as string },
      protocolVersion: o["protocolVersion"] as string,
      tools,
      prompts,
      resourceTemplates,
    },
  };
}

/** The counts a message names. */
export function describeCounts(c: Catalogue): string {
  const n = (count: number, what: string): string => `${count} ${what}${count === 1 ? "" : "s"}`;
  return `${n(c.tools.length, "tool")}, ${n(c.prompts.length, "prompt")}, ${n(c.resourceTemplates.length, "resource template")}`;
}
