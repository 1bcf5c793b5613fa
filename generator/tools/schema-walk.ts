// A tool's JSON Schema as a tree: every subschema with its JSON pointer, local $refs, and the keyword families.
import { isObject } from "../json.js";
import { getAt, parsePointer } from "../pointer.js";

export type RawSchemaObject = { [keyword: string]: unknown };

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose value is a list of subschemas (`items` too, in draft-07's tuple form). */
const SCHEMA_LISTS = new Set(["anyOf", "allOf", "oneOf", "prefixItems", "items"]);
/** Keywords whose value is one subschema. */
const SCHEMA_SINGLE = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
]);

/**
 * Keywords that only annotate: they never change which values a schema accepts, so the checker skips them and a
 * change to them alone is documentation.
 */
export const ANNOTATION_KEYWORDS = new Set([
  "$schema",
  "$id",
  "$comment",
  "$anchor",
  "$dynamicAnchor",
  "$vocabulary",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "format",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
]);

export type Tokens = (string | number)[];

/** Calls `visit` on every subschema object (the root first), with its path from the root. */
export function walkSchema(schema: unknown, visit: (node: RawSchemaObject, tokens: Tokens) => void, at: Tokens = []) {
  if (!isObject(schema)) return;
  visit(schema, at);
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      for (const [name, sub] of Object.entries(value)) walkSchema(sub, visit, [...at, key, name]);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((sub, i) => walkSchema(sub, visit, [...at, key, i]));
    } else if (SCHEMA_SINGLE.has(key)) {
      walkSchema(value, visit, [...at, key]);
    }
  }
}

/** Every position where a subschema may stand, with its value (objects, booleans and anything malformed). */
export function eachSubschemaValue(
  schema: unknown,
  visit: (value: unknown, tokens: Tokens) => void,
  at: Tokens = [],
): void {
  visit(schema, at);
  if (!isObject(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      for (const [name, sub] of Object.entries(value)) eachSubschemaValue(sub, visit, [...at, key, name]);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((sub, i) => eachSubschemaValue(sub, visit, [...at, key, i]));
    } else if (SCHEMA_SINGLE.has(key) && !(key === "items" && Array.isArray(value))) {
      eachSubschemaValue(value, visit, [...at, key]);
    }
  }
}

/**
 * Where a `$ref` points inside the schema that holds it: a JSON pointer from that schema's root, "dangling" when
 * it names nothing there, or "remote" for anything that is not a fragment pointer (another document, an anchor),
 * which mcpgen never fetches.
 */
export function localTarget(root: unknown, ref: string): string | "dangling" | "remote" {
  if (ref !== "#" && !ref.startsWith("#/")) return "remote";
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return "dangling";
  }
  try {
    parsePointer(pointer);
  } catch {
    return "dangling";
  }
  return getAt(root, pointer) === undefined ? "dangling" : pointer;
}
