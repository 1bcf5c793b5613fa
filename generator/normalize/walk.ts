// Bottom-up rewriting of every subschema in a raw JSON Schema value, skipping keywords that hold data.
import { isObject } from "../json.js";
export type RawSchema = Record<string, unknown>;

const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "patternProperties"]);
const SCHEMA_LISTS = new Set(["anyOf", "allOf", "oneOf", "prefixItems"]);
const SCHEMA_SINGLE = new Set([
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
]);

/** Applies `fn` to every subschema, children first; returns a new value and leaves the input untouched. */
export function mapSchema(schema: RawSchema, fn: (node: RawSchema) => RawSchema): RawSchema {
  const out: RawSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      const map: RawSchema = {};
      for (const [name, sub] of Object.entries(value)) map[name] = isObject(sub) ? mapSchema(sub, fn) : sub;
      out[key] = map;
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => (isObject(sub) ? mapSchema(sub, fn) : sub));
    } else if (SCHEMA_SINGLE.has(key) && isObject(value)) {
      out[key] = mapSchema(value, fn);
    } else {
      out[key] = value;
    }
  }
  return fn(out);
}
