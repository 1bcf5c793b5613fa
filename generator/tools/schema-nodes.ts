// A tool's JSON Schema as mcpgen's model nodes, so the schema diff's comparison (diff/compare.ts) can walk it.
import type { Env, Pos } from "../diff/compare.js";
import { canonicalJson, isObject } from "../json.js";
import { MODEL_KEYWORDS, type SchemaNode } from "../model.js";
import { normalizeSchema, toNode } from "../normalize/index.js";
import { escapeToken, getAt, toPointer, unescapeToken } from "../pointer.js";
import { ANNOTATION_KEYWORDS, localTarget, walkSchema, type RawSchemaObject } from "./schema-walk.js";

/** Keywords the model represents and compares. */
const COMPARED = new Set<string>(MODEL_KEYWORDS);

/** The synthetic definitions' place: every reported pointer under it is mapped back into the catalogue. */
const DEFS = "$defs";

/** One schema of one tool, ready to compare: its definitions, the root's position, and how to map pointers back. */
export interface ComparableSchema {
  env: Env;
  root: Pos;
  /** A pointer the comparison reports, as a pointer into the catalogue file. */
  toFile(pointer: string): string;
  /**
   * What the model leaves out (keywords it does not hold, references to other documents), by pointer from the
   * schema's root, as canonical JSON: a change there is found by comparing these, not by the model.
   */
  uncompared: Map<string, string>;
}

/**
 * Builds the model nodes of `schema`, found at `base` in the catalogue. Every local `$ref` target becomes a
 * definition of its own (named after its last token), so the comparison enters it as it enters a schema's
 * definitions; references to other documents are compared as "anything", and keywords the model does not hold
 * are left out, each named in `notes`.
 */
export function comparableSchema(schema: unknown, base: string, notes: string[], who: string): ComparableSchema {
  const targets = new Map<string, string>();
  const names = new Set<string>();
  const nameOf = (pointer: string): string => {
    let name = targets.get(pointer);
    if (name !== undefined) return name;
    const last = pointer === "" ? "root" : unescapeToken(pointer.slice(pointer.lastIndexOf("/") + 1));
    const stem = last.replace(/[^A-Za-z0-9_]/g, "_") || "schema";
    name = stem;
    for (let n = 2; names.has(name); n++) name = `${stem}${n}`;
    names.add(name);
    targets.set(pointer, name);
    return name;
  };
  const rootName = nameOf("");
  const dropped = new Map<string, string[]>();
  const uncompared = new Map<string, string>();
  const rewrite = (node: unknown, at: string): unknown => {
    if (!isObject(node)) return node;
    const out: RawSchemaObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") {
        const target = localTarget(schema, value);
        if (target === "remote" || target === "dangling") {
          dropped.set("$ref (not fetched)", [...(dropped.get("$ref (not fetched)") ?? []), `${base}${at}`]);
          uncompared.set(`${at}/$ref`, canonicalJson(value));
          continue;
        }
        out[key] = `#/${DEFS}/${nameOf(target)}`;
      } else if (COMPARED.has(key) && !(key === "items" && Array.isArray(value))) out[key] = value;
      else if (!ANNOTATION_KEYWORDS.has(key)) {
        dropped.set(key, [...(dropped.get(key) ?? []), `${base}${at}/${escapeToken(key)}`]);
        uncompared.set(`${at}/${escapeToken(key)}`, canonicalJson(value));
      } else if (key === "description") out[key] = value;
    }
    return out;
  };
  // Rewrite every subschema in place of a copy, keeping the structure so pointers stay those of the file.
  const copy = structuredClone(schema) as RawSchemaObject;
  const rewritten = new Map<string, RawSchemaObject>();
  walkSchema(copy, (node, tokens) => {
    rewritten.set(toPointer(tokens), node);
  });
  for (const [pointer, node] of [...rewritten].reverse()) {
    const fresh = rewrite(node, pointer) as RawSchemaObject;
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, fresh);
  }
  for (const [keyword, where] of dropped)
    notes.push(
      `${who}: ${keyword} is not compared (${where.length} place${where.length === 1 ? "" : "s"}: ${where
        .slice(0, 3)
        .map((w) => `#${w}`)
        .join(", ")}${where.length > 3 ? ", ..." : ""})`,
    );

  // Targets found while rewriting: each a definition, as the rewritten copy has it at its pointer.
  const defs: RawSchemaObject = {};
  for (const [pointer, name] of targets) defs[name] = pointer === "" ? copy : getAt(copy, pointer);
  const normalized = normalizeSchema({ [DEFS]: defs }, DEFS)[DEFS] as RawSchemaObject;
  const nodes = new Map<string, SchemaNode>();
  for (const [name, raw] of Object.entries(normalized)) nodes.set(name, toNode(raw, `#/${DEFS}/`));
  const pointerOf = new Map([...targets].map(([pointer, name]) => [name, pointer]));
  return {
    env: { defs: nodes, defsPointer: `/${DEFS}` },
    root: { node: { ref: rootName }, ptr: base },
    uncompared,
    toFile(pointer) {
      if (!pointer.startsWith(`/${DEFS}/`)) return pointer;
      const rest = pointer.slice(DEFS.length + 2);
      const slash = rest.indexOf("/");
      const name = unescapeToken(slash < 0 ? rest : rest.slice(0, slash));
      const target = pointerOf.get(name);
      return target === undefined ? pointer : `${base}${target}${slash < 0 ? "" : rest.slice(slash)}`;
    },
  };
}
