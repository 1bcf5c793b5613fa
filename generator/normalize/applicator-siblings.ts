// Pass: anyOf or allOf beside other assertions. Each keyword of a schema applies to the same value, so
// `{type, properties, anyOf}` means all of them at once; the pass writes that as an allOf, so every node the
// model builds is a union, an intersection or a plain value node and no keyword beside a union is lost.
import { mapSchema, type RawSchema } from "./walk.js";

/** Keywords that stay on the outer node: they describe it and assert nothing. */
const ANNOTATIONS = new Set([
  "description",
  "title",
  "$comment",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$schema",
  "$id",
]);

export function applicatorSiblings(schema: RawSchema): RawSchema {
  return mapSchema(schema, (node) => {
    const hasAnyOf = Array.isArray(node["anyOf"]);
    const hasAllOf = Array.isArray(node["allOf"]);
    if (!hasAnyOf && !hasAllOf) return node;
    const outer: RawSchema = {};
    const rest: RawSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (ANNOTATIONS.has(key)) outer[key] = value;
      else if (key !== "anyOf" && key !== "allOf") rest[key] = value;
    }
    // A lone union or intersection is already in model shape; definitions and $defs are not assertions either.
    const assertions = Object.keys(rest).filter((k) => k !== "$defs" && k !== "definitions");
    if (assertions.length === 0 && !(hasAnyOf && hasAllOf)) return node;
    const members: unknown[] = hasAllOf ? [...(node["allOf"] as unknown[])] : [];
    if (hasAnyOf) members.push({ anyOf: node["anyOf"] });
    if (assertions.length) members.push(Object.fromEntries(assertions.map((k) => [k, rest[k]])));
    for (const k of Object.keys(rest)) if (!assertions.includes(k)) outer[k] = rest[k];
    return { ...outer, allOf: members };
  });
}
