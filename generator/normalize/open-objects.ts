// Pass: open objects. `additionalProperties: {}` and `additionalProperties: true` mean the same thing;
// both become `true`, so later steps see one spelling of "any extra key, any value". The MCP schema's own
// spelling of TypeScript's `object` (no properties, `additionalProperties: true`) is marked opaque, so the
// types can say `object` where the spec does and an index signature where the spec has one.
import { mapSchema, type RawSchema } from "./walk.js";

export const OPAQUE = "x-mcpgen-opaque";

const isEmptyObject = (v: unknown): boolean =>
  v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0;

export function openObjects(schema: RawSchema): RawSchema {
  return mapSchema(schema, (node) => {
    const extra = node["additionalProperties"];
    if (extra === true && node["type"] === "object" && isEmptyObject(node["properties"])) {
      const { properties: _unused, ...rest } = node;
      return { ...rest, [OPAQUE]: true };
    }
    if (isEmptyObject(extra)) return { ...node, additionalProperties: true };
    return node;
  });
}
