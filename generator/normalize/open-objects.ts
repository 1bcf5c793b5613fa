// Pass: open objects. `additionalProperties: {}` and `additionalProperties: true` mean the same thing;
// both become `true`, so later steps see one spelling of "any extra key, any value".
import { mapSchema, type RawSchema } from "./walk.js";

export function openObjects(schema: RawSchema): RawSchema {
  return mapSchema(schema, (node) => {
    const extra = node["additionalProperties"];
    if (extra !== null && typeof extra === "object" && !Array.isArray(extra) && Object.keys(extra).length === 0) {
      return { ...node, additionalProperties: true };
    }
    return node;
  });
}
