// TypeScript types from a tool's JSON Schema: what the type system can say; the generated checker asserts the rest.
import { compareCodeUnits, isObject } from "../json.js";
import { localTarget, type RawSchemaObject } from "./schema-walk.js";

/** How one schema document's references are named: each local target a type alias of its own. */
export interface TypeScope {
  /** The schema document (a tool's inputSchema or outputSchema) its `$ref`s resolve in. */
  root: unknown;
  /** JSON pointer (from root) to the name of the type alias written for it. */
  names: ReadonlyMap<string, string>;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string): string => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

/** A doc comment from a schema's description (and title when there is no description), or nothing. */
export function docComment(schema: unknown, indent: string, extra: string[] = []): string {
  const lines: string[] = [];
  if (isObject(schema)) {
    const text = typeof schema["description"] === "string" ? schema["description"] : schema["title"];
    if (typeof text === "string" && text.trim() !== "") lines.push(...text.trim().split(/\r?\n/));
    if (schema["deprecated"] === true) lines.push("@deprecated");
  }
  lines.push(...extra);
  if (lines.length === 0) return "";
  const safe = lines.map((l) => l.replace(/\*\//g, "*\\/").trimEnd());
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  return `${indent}/**\n${safe.map((l) => (l === "" ? `${indent} *` : `${indent} * ${l}`)).join("\n")}\n${indent} */\n`;
}

/** Whether a type has a `|` or `&` outside brackets and strings, so it needs parentheses inside another type. */
function compound(type: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"') quote = c;
    else if (c === "{" || c === "[" || c === "(" || c === "<") depth++;
    else if (c === "}" || c === "]" || c === ")" || c === ">") depth--;
    else if (depth === 0 && (c === "|" || c === "&")) return true;
  }
  return false;
}

/** Wraps a union or intersection for use inside another type (an array's items, an intersection's member). */
function atom(type: string): string {
  return compound(type) ? `(${type})` : type;
}

function literal(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  // JSON objects and arrays read as TypeScript type literals too ({"a":1}, [1,2]).
  return JSON.stringify(value);
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes("unknown")) return "unknown";
  const kept = unique.filter((t) => t !== "never");
  return kept.length === 0 ? "never" : kept.join(" | ");
}

function intersection(types: string[]): string {
  const kept = [...new Set(types)].filter((t) => t !== "unknown");
  if (kept.includes("never")) return "never";
  return kept.length === 0 ? "unknown" : kept.length === 1 ? kept[0]! : kept.map(atom).join(" & ");
}

const TYPE_KEYWORDS_OBJECT = ["properties", "required", "additionalProperties", "patternProperties"];
const TYPE_KEYWORDS_ARRAY = ["items", "prefixItems"];

/** The TypeScript type of a schema; `depth` is the indentation level of the line it starts on. */
export function tsType(schema: unknown, scope: TypeScope, depth = 0): string {
  if (schema === false) return "never";
  if (!isObject(schema)) return "unknown";
  const s = schema as RawSchemaObject;
  const parts: string[] = [];

  const ref = s["$ref"];
  if (typeof ref === "string") {
    const target = localTarget(scope.root, ref);
    const name =
      typeof target === "string" && target !== "dangling" && target !== "remote" ? scope.names.get(target) : undefined;
    parts.push(name ?? "unknown");
  }

  if (s["const"] !== undefined) parts.push(literal(s["const"]));
  else if (Array.isArray(s["enum"])) parts.push(union(s["enum"].map(literal)));
  else {
    const base = baseType(s, scope, depth);
    if (base !== undefined) parts.push(base);
  }

  for (const applicator of ["anyOf", "oneOf"]) {
    const members = s[applicator];
    if (Array.isArray(members) && members.length > 0) parts.push(union(members.map((m) => tsType(m, scope, depth))));
  }
  const all = s["allOf"];
  if (Array.isArray(all)) for (const m of all) parts.push(tsType(m, scope, depth));
  return intersection(parts);
}

/** What `type` (or, without it, the object or array keywords) says. */
function baseType(s: RawSchemaObject, scope: TypeScope, depth: number): string | undefined {
  const declared = s["type"];
  let types: string[];
  if (typeof declared === "string") types = [declared];
  else if (Array.isArray(declared)) types = declared.filter((t): t is string => typeof t === "string");
  else if (TYPE_KEYWORDS_OBJECT.some((k) => s[k] !== undefined)) types = ["object"];
  else if (TYPE_KEYWORDS_ARRAY.some((k) => s[k] !== undefined)) types = ["array"];
  else return undefined;
  return union(
    types.map((t) => {
      switch (t) {
        case "string":
          return "string";
        case "number":
        case "integer":
          return "number";
        case "boolean":
          return "boolean";
        case "null":
          return "null";
        case "object":
          return objectType(s, scope, depth);
        case "array":
          return arrayType(s, scope, depth);
        default:
          return "unknown";
      }
    }),
  );
}

function objectType(s: RawSchemaObject, scope: TypeScope, depth: number): string {
  const properties = isObject(s["properties"]) ? (s["properties"] as RawSchemaObject) : {};
  const required = new Set(Array.isArray(s["required"]) ? s["required"].filter((r) => typeof r === "string") : []);
  const names = Object.keys(properties);
  for (const r of required) if (!names.includes(r)) names.push(r);
  const extra = s["additionalProperties"];
  const patterned = isObject(s["patternProperties"]) && Object.keys(s["patternProperties"]).length > 0;
  // Unknown keys are part of the type only where the schema says so: an index signature would let a misspelt
  // argument through unnoticed.
  let index: string | undefined;
  if (patterned || extra === true || (isObject(extra) && names.length > 0)) index = "unknown";
  else if (isObject(extra)) index = tsType(extra, scope, depth + 1);
  else if (names.length === 0 && extra !== false) index = "unknown";
  if (names.length === 0 && index === undefined) return "{ [key: string]: never }";
  const inner = "  ".repeat(depth + 1);
  const lines = names.map((name) => {
    const sub = properties[name];
    const type = Object.hasOwn(properties, name) ? tsType(sub, scope, depth + 1) : "unknown";
    return `${docComment(sub, inner)}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${type};`;
  });
  if (index !== undefined) lines.push(`${inner}[key: string]: ${index};`);
  return `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}`;
}

function arrayType(s: RawSchemaObject, scope: TypeScope, depth: number): string {
  const items = s["items"];
  // draft-07 writes a tuple as an items list, with additionalItems for the rest; 2020-12 as prefixItems and items.
  const prefix = Array.isArray(s["prefixItems"]) ? s["prefixItems"] : Array.isArray(items) ? items : undefined;
  const rest = Array.isArray(items) ? s["additionalItems"] : items;
  if (prefix === undefined) return `${atom(tsType(rest, scope, depth))}[]`;
  const min = typeof s["minItems"] === "number" ? s["minItems"] : 0;
  const members = prefix.map((m, i) => `${tsType(m, scope, depth)}${i < min ? "" : "?"}`);
  if (rest !== false) members.push(`...${atom(tsType(rest, scope, depth))}[]`);
  return `[${members.join(", ")}]`;
}

/** The JSON pointers of a schema's local reference targets, sorted, with the root ("") first when referenced. */
export function refTargets(root: unknown, refs: readonly string[]): string[] {
  const targets = new Set<string>();
  for (const ref of refs) {
    const t = localTarget(root, ref);
    if (t !== "dangling" && t !== "remote") targets.add(t);
  }
  return [...targets].sort(compareCodeUnits);
}
