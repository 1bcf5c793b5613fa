// Pass: a $ref with sibling keywords. Annotations stay beside the ref (they become doc comments); constraints
// move into an allOf so the ref itself stays a bare reference and no tool invents a numbered copy of the type.
import { mapSchema, type RawSchema } from "./walk.js";

const ANNOTATIONS = new Set(["$ref", "description", "title", "$comment", "default", "examples", "deprecated"]);

export function refSiblings(schema: RawSchema): RawSchema {
  return mapSchema(schema, (node) => {
    if (typeof node["$ref"] !== "string") return node;
    const constraints = Object.keys(node).filter((k) => !ANNOTATIONS.has(k));
    if (constraints.length === 0) return node;
    const rest: RawSchema = {};
    for (const k of constraints) rest[k] = node[k];
    const out: RawSchema = { allOf: [{ $ref: node["$ref"] }, rest] };
    if (node["description"] !== undefined) out["description"] = node["description"];
    return out;
  });
}
