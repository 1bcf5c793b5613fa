// Explains why a JSON value does not match a JSON Schema: a small interpreter returning JSON-pointer issues.
import type { ValidationIssue } from "../rpc/dispatch.js";

/** Bounds on one explanation; each has a safe default. */
export interface ExplainOptions {
  /** The document `$ref`s resolve in ("#/definitions/X", "#/$defs/X", "#"); default: the schema itself. */
  document?: unknown;
  /** Issues reported at most (default 20): a peer chooses how much is wrong, and the error carrying them is sent back. */
  maxIssues?: number;
  /** Nesting of schemas applied to one value at most (default 256), so a deep value cannot exhaust the stack. */
  maxDepth?: number;
}

export const DEFAULT_MAX_EXPLAINED_ISSUES = 20;
export const DEFAULT_MAX_EXPLAIN_DEPTH = 256;

type Schema = { readonly [keyword: string]: unknown };
/** An issue and the keyword that raised it (used to pick the anyOf branch a value was meant for). */
interface Found extends ValidationIssue {
  keyword: string;
}

interface Run {
  document: unknown;
  limit: number;
  maxDepth: number;
}

const patterns = new Map<string, RegExp | null>();
const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);
const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const num = (s: Schema, keyword: string): number | undefined =>
  typeof s[keyword] === "number" ? (s[keyword] as number) : undefined;
/** One JSON Pointer reference token (RFC 6901), with its leading slash. */
export function pointerPart(key: string | number): string {
  return "/" + String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}
const child = (at: string, key: string | number): string => at + pointerPart(key);
/** A value in a message, written out only when short: a long enum would bury the issue. */
const shown = (v: unknown): string => {
  const text = JSON.stringify(v);
  return text.length <= 80 ? `: ${text}` : "";
};

/**
 * Why `value` does not match `schema`: issues with a JSON pointer into the value, empty when it matches. Reads the
 * assertion keywords of draft-07 and 2020-12 (types, const, enum, numeric and string bounds, pattern, items,
 * prefixItems, additionalItems, contains, unique items, properties, required, additional and pattern properties,
 * property names, dependencies, allOf, anyOf, oneOf, not, if/then/else) and local `$ref`s; formats are annotations.
 * "Present" means "not undefined", as in the generated guards, so both give every value the same verdict.
 */
export function explainSchema(schema: unknown, value: unknown, options: ExplainOptions = {}): ValidationIssue[] {
  const run: Run = {
    document: options.document ?? schema,
    limit: Math.max(1, options.maxIssues ?? DEFAULT_MAX_EXPLAINED_ISSUES),
    maxDepth: options.maxDepth ?? DEFAULT_MAX_EXPLAIN_DEPTH,
  };
  const out: Found[] = [];
  check(run, schema, value, "", 0, out, [schema]);
  return out.map(({ pointer, message }) => ({ pointer, message }));
}

function matches(run: Run, schema: unknown, value: unknown, depth: number, followed: readonly unknown[]): boolean {
  const out: Found[] = [];
  check({ ...run, limit: 1 }, schema, value, "", depth, out, followed);
  return out.length === 0;
}

/** The subschema a local reference names, or undefined: other documents are never fetched. */
function resolve(document: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node = document;
  if (ref.length === 1) return node;
  if (ref[1] !== "/") return undefined;
  for (const token of decodeURIComponent(ref.slice(2)).split("/")) {
    const key = token.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!(typeof node === "object" && node !== null && has(node, key))) return undefined;
    node = (node as Schema)[key];
  }
  return node;
}

function regex(source: string): RegExp | null {
  let compiled = patterns.get(source);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(source, "u");
    } catch {
      compiled = null;
    }
    patterns.set(source, compiled);
  }
  return compiled;
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case "integer":
      // As the guards read it: no remainder (1e400 parses to Infinity, a JSON number).
      return typeof value === "number" && !(value % 1) && !Number.isNaN(value);
    case "number":
      return typeof value === "number" && !Number.isNaN(value);
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

/** JSON equality over own keys (JSON.parse makes "__proto__" an own key): 1 and 1.0 equal, key order ignored. */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => has(b, k) && equal((a as Schema)[k], (b as Schema)[k]));
}

/** One text per JSON value up to JSON equality, so uniqueItems is one pass over an array a peer sized. */
function canonical(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v !== "object" || v === null) return String(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  const o = v as Schema;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(",")}}`;
}

/** Code points, not UTF-16 units: a surrogate pair is one, a lone surrogate one. */
const codePoints = (s: string): number => {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
};

function check(
  run: Run,
  schema: unknown,
  value: unknown,
  at: string,
  depth: number,
  out: Found[],
  followed: readonly unknown[],
): void {
  const fail = (keyword: string, message: string, pointer = at): void => {
    if (out.length < run.limit) out.push({ pointer, message, keyword });
  };
  if (out.length >= run.limit) return;
  if (schema === false) return fail("false", "must NOT be present (the schema allows nothing here)");
  if (!isObject(schema)) return;
  if (depth > run.maxDepth) return fail("depth", `nested more than ${run.maxDepth} levels deep: not explained further`);
  const s = schema;
  const next = depth + 1;
  if (typeof s["$ref"] === "string") {
    const target = resolve(run.document, s["$ref"]);
    if (target === undefined) fail("$ref", `unresolvable reference ${JSON.stringify(s["$ref"])}`);
    // A reference back to a schema already applied to this same value adds nothing, and would not end.
    else if (!followed.includes(target)) check(run, target, value, at, next, out, [...followed, target]);
  }
  if (s["type"] !== undefined) {
    const types = Array.isArray(s["type"]) ? s["type"] : [s["type"]];
    // The other keywords would only repeat that the value is of another kind.
    if (!types.some((t) => hasType(value, t))) return fail("type", `must be ${types.join(",")}`);
  }
  if (has(s, "const") && !equal(s["const"], value)) fail("const", `must be equal to constant${shown(s["const"])}`);
  if (Array.isArray(s["enum"]) && !s["enum"].some((e) => equal(e, value)))
    fail("enum", `must be equal to one of the allowed values${shown(s["enum"])}`);
  if (typeof value === "number") checkNumber(s, value, fail);
  else if (typeof value === "string") checkString(s, value, fail);
  else if (Array.isArray(value)) checkArray(run, s, value, at, next, out, fail);
  else if (isObject(value)) checkObject(run, s, value, at, next, out, fail);
  for (const sub of list(s["allOf"])) check(run, sub, value, at, next, out, followed);
  if (Array.isArray(s["anyOf"])) explainUnion(run, s["anyOf"], value, at, next, out, followed, "anyOf");
  if (Array.isArray(s["oneOf"])) {
    const hits = s["oneOf"].filter((sub) => matches(run, sub, value, next, followed)).length;
    if (hits === 0) explainUnion(run, s["oneOf"], value, at, next, out, followed, "oneOf");
    else if (hits > 1) fail("oneOf", `must match exactly one schema in oneOf (matches ${hits})`);
  }
  if (s["not"] !== undefined && matches(run, s["not"], value, next, followed))
    fail("not", "must NOT be valid against the schema in not");
  if (s["if"] !== undefined) {
    const branch = matches(run, s["if"], value, next, followed) ? s["then"] : s["else"];
    if (branch !== undefined) check(run, branch, value, at, next, out, followed);
  }
}

type Fail = (keyword: string, message: string, pointer?: string) => void;

function checkNumber(s: Schema, v: number, fail: Fail): void {
  const bound = (keyword: string, op: string, ok: (limit: number) => boolean): void => {
    const limit = num(s, keyword);
    if (limit !== undefined && !ok(limit)) fail(keyword, `must be ${op} ${limit}`);
  };
  bound("minimum", ">=", (m) => v >= m);
  bound("maximum", "<=", (m) => v <= m);
  bound("exclusiveMinimum", ">", (m) => v > m);
  bound("exclusiveMaximum", "<", (m) => v < m);
  const step = num(s, "multipleOf");
  // Ajv's reading, which the guards share: the quotient must be an integer below 1e21, with no rounding tolerance.
  if (step !== undefined && !(Number.isInteger(v / step) && Math.abs(v / step) < 1e21))
    fail("multipleOf", `must be multiple of ${step}`);
}

function checkString(s: Schema, v: string, fail: Fail): void {
  const min = num(s, "minLength");
  const max = num(s, "maxLength");
  if (min !== undefined && codePoints(v) < min) fail("minLength", `must NOT have fewer than ${min} characters`);
  if (max !== undefined && codePoints(v) > max) fail("maxLength", `must NOT have more than ${max} characters`);
  if (typeof s["pattern"] === "string") {
    const re = regex(s["pattern"]);
    if (re === null) fail("pattern", `pattern ${JSON.stringify(s["pattern"])} is not a valid regular expression`);
    else if (!re.test(v)) fail("pattern", `must match pattern ${JSON.stringify(s["pattern"])}`);
  }
}

function checkArray(
  run: Run,
  s: Schema,
  v: readonly unknown[],
  at: string,
  depth: number,
  out: Found[],
  fail: Fail,
): void {
  const min = num(s, "minItems");
  const max = num(s, "maxItems");
  if (min !== undefined && v.length < min) fail("minItems", `must NOT have fewer than ${min} items`);
  if (max !== undefined && v.length > max) fail("maxItems", `must NOT have more than ${max} items`);
  if (s["uniqueItems"] === true) {
    const seen = new Map<unknown, number>();
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      // Scalars by SameValueZero (0 and -0 are one JSON number); objects and arrays by their canonical text.
      const key = typeof item === "object" && item !== null ? `\u0000${canonical(item)}` : item;
      const j = seen.get(key);
      if (j !== undefined) {
        fail("uniqueItems", `must NOT have duplicate items (items ## ${j} and ${i} are identical)`);
        break;
      }
      seen.set(key, i);
    }
  }
  // draft-07 writes a tuple as an items list (then additionalItems); 2020-12 as prefixItems (then items).
  const items = s["items"];
  const prefix = Array.isArray(s["prefixItems"]) ? s["prefixItems"] : list(items);
  const rest = Array.isArray(items) ? s["additionalItems"] : items;
  for (let i = 0; i < v.length && out.length < run.limit; i++) {
    const sub = i < prefix.length ? prefix[i] : rest;
    if (sub !== undefined) check(run, sub, v[i], child(at, i), depth, out, []);
  }
  if (s["contains"] !== undefined) {
    const found = v.filter((item) => matches(run, s["contains"], item, depth, [])).length;
    const least = num(s, "minContains") ?? 1;
    const most = num(s, "maxContains");
    if (found < least) fail("contains", `must contain at least ${least} valid item(s)`);
    if (most !== undefined && found > most) fail("contains", `must contain at most ${most} valid item(s)`);
  }
}

function checkObject(run: Run, s: Schema, v: Schema, at: string, depth: number, out: Found[], fail: Fail): void {
  for (const name of list(s["required"]))
    if (typeof name === "string" && v[name] === undefined)
      fail("required", `missing required property ${JSON.stringify(name)}`);
  const keys = Object.keys(v);
  const min = num(s, "minProperties");
  const max = num(s, "maxProperties");
  if (min !== undefined && keys.length < min) fail("minProperties", `must NOT have fewer than ${min} properties`);
  if (max !== undefined && keys.length > max) fail("maxProperties", `must NOT have more than ${max} properties`);
  const properties = isObject(s["properties"]) ? s["properties"] : {};
  for (const name of Object.keys(properties))
    if (v[name] !== undefined) check(run, properties[name], v[name], child(at, name), depth, out, []);
  const patternProperties = isObject(s["patternProperties"]) ? s["patternProperties"] : {};
  const additional = s["additionalProperties"];
  for (const key of keys) {
    if (out.length >= run.limit) return;
    let known = has(properties, key);
    for (const source of Object.keys(patternProperties))
      if (regex(source)?.test(key)) {
        known = true;
        check(run, patternProperties[source], v[key], child(at, key), depth, out, []);
      }
    if (!known && additional === false)
      fail("additionalProperties", `must NOT have additional properties (${key})`, child(at, key));
    else if (!known && additional !== undefined) check(run, additional, v[key], child(at, key), depth, out, []);
    if (s["propertyNames"] !== undefined) {
      const named: Found[] = [];
      check({ ...run, limit: 1 }, s["propertyNames"], key, "", depth, named, []);
      if (named[0]) fail("propertyNames", `property name must be valid: ${named[0].message}`, child(at, key));
    }
  }
  // dependentRequired and dependentSchemas (2020-12), or draft-07's dependencies holding either.
  for (const source of [s["dependentRequired"], s["dependentSchemas"], s["dependencies"]]) {
    if (!isObject(source)) continue;
    for (const key of Object.keys(source)) {
      if (v[key] === undefined) continue;
      const dependency = source[key];
      if (!Array.isArray(dependency)) check(run, dependency, v, at, depth, out, []);
      else
        for (const other of dependency)
          if (typeof other === "string" && v[other] === undefined)
            fail(
              "dependentRequired",
              `must have property ${JSON.stringify(other)} when property ${JSON.stringify(key)} is present`,
            );
    }
  }
}

/**
 * No branch of an anyOf (or oneOf) matched. When the value's kind and tags rule out all branches but one (its type,
 * or a const or enum on it or on one of its properties), that branch's issues say what is wrong; otherwise the union
 * as a whole is the issue.
 */
function explainUnion(
  run: Run,
  branches: readonly unknown[],
  value: unknown,
  at: string,
  depth: number,
  out: Found[],
  followed: readonly unknown[],
  keyword: string,
): void {
  const explained = branches.map((sub) => {
    const found: Found[] = [];
    check(run, sub, value, at, depth, found, followed);
    return found;
  });
  if (explained.some((found) => found.length === 0)) return;
  const ruledOut = (i: Found): boolean =>
    ((i.keyword === "type" || i.keyword === "false") && i.pointer === at) ||
    ((i.keyword === "const" || i.keyword === "enum") &&
      (i.pointer === at || (i.pointer.startsWith(`${at}/`) && !i.pointer.slice(at.length + 1).includes("/"))));
  const candidates = explained.filter((found) => !found.some(ruledOut));
  if (candidates.length === 1) {
    for (const issue of candidates[0]!) if (out.length < run.limit) out.push(issue);
  } else if (out.length < run.limit) out.push({ pointer: at, message: `must match a schema in ${keyword}`, keyword });
}
