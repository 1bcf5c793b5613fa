// Pass: tagged unions written as anyOf. When every member is an object with the same required property
import { isObject } from "../json.js";
// holding a distinct string const (`method`, `type`, ...), the union is marked with that discriminator so
// guards can switch on the tag instead of trying each member.
import { mapSchema, type RawSchema } from "./walk.js";

export const DISCRIMINATOR = "x-mcpgen-discriminator";

function resolve(defs: RawSchema, node: RawSchema, prefix: string): RawSchema | undefined {
  let current: RawSchema = node;
  for (let hops = 0; typeof current["$ref"] === "string"; hops++) {
    const ref = current["$ref"] as string;
    if (hops > 64 || !ref.startsWith(prefix)) return undefined;
    const next = defs[ref.slice(prefix.length)];
    if (!isObject(next)) return undefined;
    current = next;
  }
  return current;
}

/** Tag values of one member for each candidate key: required properties whose schema is a string const. */
function tags(member: RawSchema): Map<string, string> {
  const out = new Map<string, string>();
  const props = member["properties"];
  const required = member["required"];
  if (!isObject(props) || !Array.isArray(required)) return out;
  for (const key of required) {
    const prop = props[key as string];
    if (isObject(prop) && typeof prop["const"] === "string") out.set(key as string, prop["const"]);
  }
  return out;
}

/** Candidate keys in order of preference: the MCP conventions first, then any other. */
const PREFERRED = ["method", "type", "kind"];

export function taggedUnions(schema: RawSchema, defsKey: "$defs" | "definitions"): RawSchema {
  const defs = (schema[defsKey] ?? {}) as RawSchema;
  const prefix = `#/${defsKey}/`;
  return mapSchema(schema, (node) => {
    const members = node["anyOf"];
    if (!Array.isArray(members) || members.length < 2) return node;
    const memberTags: Map<string, string>[] = [];
    for (const member of members) {
      const target = isObject(member) ? resolve(defs, member, prefix) : undefined;
      if (!target || target["type"] !== "object") return node;
      memberTags.push(tags(target));
    }
    const shared = [...memberTags[0]!.keys()].filter((k) => memberTags.every((t) => t.has(k)));
    shared.sort((a, b) => {
      const pa = PREFERRED.indexOf(a),
        pb = PREFERRED.indexOf(b);
      return (pa < 0 ? 99 : pa) - (pb < 0 ? 99 : pb) || (a < b ? -1 : a > b ? 1 : 0);
    });
    for (const key of shared) {
      const values = memberTags.map((t) => t.get(key)!);
      if (new Set(values).size !== values.length) continue;
      const cases = values
        .map((value, member) => ({ value, member }))
        .sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
      return { ...node, [DISCRIMINATOR]: { key, cases } };
    }
    return node;
  });
}
