// Pass: integer vs number. A type list naming both keeps only "number" (every integer is a number), and
// type lists are put in one fixed order so equal schemas compare equal.
import { mapSchema, type RawSchema } from "./walk.js";

const ORDER = ["null", "boolean", "integer", "number", "string", "array", "object"];

export function integers(schema: RawSchema): RawSchema {
  return mapSchema(schema, (node) => {
    const type = node["type"];
    if (!Array.isArray(type)) return node;
    let types = [...new Set(type.map(String))];
    if (types.includes("number")) types = types.filter((t) => t !== "integer");
    types.sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
    return { ...node, type: types.length === 1 ? types[0] : types };
  });
}
