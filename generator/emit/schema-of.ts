// Turns model nodes back into JSON Schema, for the two emitters that hand a schema to a library
// (Ajv standalone for validators, json-schema-to-typescript for types).
import { VALUE_KEYWORDS, type SchemaNode } from "../model.js";

export interface SchemaOfOptions {
  /** Emit TypeScript hints (`tsType`) for json-schema-to-typescript: `object` for opaque objects, `unknown` for any. */
  tsHints?: boolean;
  /** How to write a reference to definition `name`. */
  ref: (name: string) => Record<string, unknown>;
  /** Keep descriptions (types want them for doc comments; validators do not). */
  descriptions: boolean;
}

export function schemaOf(node: SchemaNode, options: SchemaOfOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (node.ref !== undefined) Object.assign(out, options.ref(node.ref));
  if (options.descriptions && node.description !== undefined) out["description"] = node.description;
  if (node.ref !== undefined) return out;
  if (options.tsHints) {
    if (node.opaque) return { ...out, tsType: "object" };
    const constrained =
      node.anyOf ||
      node.allOf ||
      node.types ||
      node.const !== undefined ||
      node.enum ||
      node.properties ||
      node.additional ||
      node.items;
    if (!constrained) return { ...out, tsType: "unknown" };
  }
  if (node.anyOf) out["anyOf"] = node.anyOf.map((m) => schemaOf(m, options));
  if (node.allOf) out["allOf"] = node.allOf.map((m) => schemaOf(m, options));
  if (node.types !== undefined) {
    if (node.types.length === 0) return { not: {} };
    out["type"] = node.types.length === 1 ? node.types[0] : node.types;
  }
  if (node.const !== undefined) out["const"] = node.const;
  if (node.enum !== undefined) out["enum"] = node.enum;
  for (const key of VALUE_KEYWORDS) if (node[key] !== undefined) out[key] = node[key];
  if (node.propertyNames !== undefined) out["propertyNames"] = schemaOf(node.propertyNames, options);
  // draft-07's spelling of dependentRequired: both consumers read draft-07, and Ajv's draft-07 class has no
  // dependentRequired (without strict mode it would skip the keyword in silence).
  if (node.dependentRequired !== undefined)
    out["dependencies"] = Object.fromEntries(node.dependentRequired.map((d) => [d.key, d.requires]));
  if (node.not !== undefined) out["not"] = schemaOf(node.not, options);
  if (node.conditional !== undefined) {
    out["if"] = schemaOf(node.conditional.if, options);
    if (node.conditional.then !== undefined) out["then"] = schemaOf(node.conditional.then, options);
    if (node.conditional.else !== undefined) out["else"] = schemaOf(node.conditional.else, options);
  }
  if (node.properties !== undefined) {
    const props: Record<string, unknown> = {};
    for (const p of node.properties) props[p.name] = schemaOf(p.node, options);
    out["properties"] = props;
  }
  if (node.required !== undefined) out["required"] = node.required;
  if (node.additional === "open") out["additionalProperties"] = true;
  else if (node.additional === "closed") out["additionalProperties"] = false;
  else if (node.additional !== undefined) out["additionalProperties"] = schemaOf(node.additional, options);
  if (node.items !== undefined) out["items"] = schemaOf(node.items, options);
  return out;
}
