// Property-test generators driven by the model: valid values for any schema node, and mutants of them that are
// likely (not certainly: the oracle decides) invalid.
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { schemaOf } from "../../generator/emit/schema-of.js";
import { resolveRef as resolve } from "../../generator/model.js";
import type { JsonType, JsonValue, SchemaNode } from "../../generator/model.js";

export type Defs = ReadonlyMap<string, SchemaNode>;
type Json = JsonValue;
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

const NEGATIVE_ZERO = "@@mcpgen-negative-zero@@";
/**
 * JSON round trip: what a peer could actually send (no undefined, no null-prototype objects). JSON.stringify
 * writes -0 as 0, but a peer may write `-0` and JSON.parse keeps it, so -0 survives here.
 */
export const asJson = (v: unknown): Json =>
  JSON.parse(
    JSON.stringify(v, (_k, x: unknown) => (Object.is(x, -0) ? NEGATIVE_ZERO : x)).replaceAll(
      JSON.stringify(NEGATIVE_ZERO),
      "-0",
    ),
  ) as Json;

/** Sets an own key, "__proto__" included (JSON.parse makes it an own key; plain assignment would set the prototype). */
function setOwn(o: JsonObject, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** JSON text with sorted keys: equal for values JSON Schema calls equal (key order aside; 1 and 1.0 are one number). */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

// ---- the model's own verdict, for generation only ----

const modelAjv = new WeakMap<Defs, { ajv: Ajv2020; compiled: WeakMap<SchemaNode, ValidateFunction> }>();
const modelRef = (name: string): Record<string, unknown> => ({ $ref: `mcp-model#/definitions/${name}` });

/**
 * Whether a value satisfies a model node, by Ajv on the node written back as JSON Schema. Generation uses it to
 * keep only valid values where building them exactly is not worth it (not, if/then/else, patterns with lengths,
 * property counts); the verdict the tests compare against is always Ajv on the original schema.
 */
export function satisfies(defs: Defs, node: SchemaNode, value: unknown): boolean {
  let entry = modelAjv.get(defs);
  if (!entry) {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const definitions: Record<string, unknown> = {};
    for (const [name, n] of defs) definitions[name] = schemaOf(n, { descriptions: false, ref: modelRef });
    ajv.addSchema({ definitions }, "mcp-model");
    entry = { ajv, compiled: new WeakMap() };
    modelAjv.set(defs, entry);
  }
  let fn = entry.compiled.get(node);
  if (!fn) {
    fn = entry.ajv.compile(schemaOf(node, { descriptions: false, ref: modelRef }));
    entry.compiled.set(node, fn);
  }
  return fn(value) === true;
}

/** Keywords generation does not build exactly, so generated values are checked against the node (see satisfies). */
const needsCheck = (n: SchemaNode): boolean =>
  n.not !== undefined ||
  n.conditional !== undefined ||
  n.pattern !== undefined ||
  n.propertyNames !== undefined ||
  n.minProperties !== undefined ||
  n.maxProperties !== undefined ||
  n.multipleOf !== undefined ||
  n.dependentRequired !== undefined;

/** Rough size of the smallest valid value, so that at the depth limit anyOf picks a member that ends quickly. */
function minCost(defs: Defs, node: SchemaNode, visiting: Set<SchemaNode> = new Set()): number {
  if (visiting.has(node)) return Infinity;
  visiting.add(node);
  try {
    if (node.ref !== undefined) return minCost(defs, defs.get(node.ref)!, visiting);
    if (node.anyOf) return Math.min(...node.anyOf.map((m) => minCost(defs, m, visiting)));
    if (node.allOf) return node.allOf.reduce((sum, m) => sum + minCost(defs, m, visiting), 0);
    if (node.const !== undefined || node.enum !== undefined) return 1;
    const props = new Map((node.properties ?? []).map((p) => [p.name, p.node]));
    const mustBeObject = node.types?.length === 1 && node.types[0] === "object";
    if (!mustBeObject) return 1;
    return (
      1 +
      (node.required ?? []).reduce(
        (sum, name) => sum + (props.has(name) ? minCost(defs, props.get(name)!, visiting) : 1),
        0,
      )
    );
  } finally {
    visiting.delete(node);
  }
}

/**
 * allOf as alternatives of plain members: an anyOf among the members is spread out, one alternative per anyOf
 * member (at most `limit` alternatives), so each alternative can be merged into one node.
 */
function spreadAllOf(defs: Defs, members: SchemaNode[], limit = 16): SchemaNode[][] {
  let out: SchemaNode[][] = [[]];
  for (const member of members) {
    const m = resolve(defs, member);
    const options = m.anyOf
      ? m.anyOf
      : m.allOf
        ? spreadAllOf(defs, m.allOf, limit).map((alt): SchemaNode => ({ allOf: alt }))
        : [m];
    out = out.flatMap((alt) => options.map((o) => [...alt, o])).slice(0, limit);
  }
  return out.map((alt) =>
    alt.flatMap((m) => {
      const r = resolve(defs, m);
      return r.allOf ? spreadAllOf(defs, r.allOf, limit)[0]! : r.anyOf ? [r.anyOf[0]!] : [r];
    }),
  );
}

/**
 * Plain members (no anyOf) as one node: properties joined (a name in both becomes an allOf), required unioned,
 * bounds tightened; for what cannot be merged (a second pattern, not, if) the first wins and the caller checks
 * generated values against the whole allOf.
 */
function mergeAllOf(defs: Defs, members: SchemaNode[]): SchemaNode {
  const flat = members.map((m) => resolve(defs, m));
  const props = new Map<string, SchemaNode>();
  for (const m of flat)
    for (const p of m.properties ?? [])
      props.set(p.name, props.has(p.name) ? { allOf: [props.get(p.name)!, p.node] } : p.node);
  let types: JsonType[] | undefined;
  for (const m of flat) {
    if (!m.types) continue;
    if (!types) {
      types = m.types;
      continue;
    }
    const prev: JsonType[] = types;
    types = m.types.flatMap((t): JsonType[] =>
      prev.includes(t)
        ? [t]
        : t === "number" && prev.includes("integer")
          ? ["integer"]
          : t === "integer" && prev.includes("number")
            ? ["integer"]
            : [],
    );
  }
  const merged: SchemaNode = {};
  if (types) merged.types = types;
  if (props.size) merged.properties = [...props].map(([name, node]) => ({ name, node }));
  const required = [...new Set(flat.flatMap((m) => m.required ?? []))];
  if (required.length) merged.required = required;
  const additional = flat.map((m) => m.additional).filter((a) => a !== undefined && a !== "open");
  if (additional.length) merged.additional = additional[0]!;
  const lower = ["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"] as const;
  const upper = ["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"] as const;
  for (const m of flat) {
    if (m.const !== undefined) merged.const = m.const;
    if (m.enum !== undefined) merged.enum = m.enum;
    for (const k of lower) if (m[k] !== undefined) merged[k] = Math.max(m[k], merged[k] ?? -Infinity);
    for (const k of upper) if (m[k] !== undefined) merged[k] = Math.min(m[k], merged[k] ?? Infinity);
    if (m.items !== undefined) merged.items = m.items;
    if (m.uniqueItems) merged.uniqueItems = true;
    if (m.dependentRequired) merged.dependentRequired = [...(merged.dependentRequired ?? []), ...m.dependentRequired];
    for (const k of ["multipleOf", "pattern", "propertyNames", "not", "conditional"] as const)
      if (m[k] !== undefined && merged[k] === undefined) (merged as Record<string, unknown>)[k] = m[k];
  }
  return merged;
}

// Keys for unknown properties: short, printable, sometimes JSON-ish oddities ("$x", "a/b", "~").
const extraKey = fc.oneof(
  fc.constantFrom("x-extra", "vendor/flag", "$x", "a~b", "ünï", "constructor", "toString"),
  fc.string({ minLength: 1, maxLength: 8 }),
);
const anyJson = (depth: number): fc.Arbitrary<Json> =>
  depth <= 0
    ? fc.constantFrom<Json>(null, true, 0, "")
    : (fc.jsonValue({ maxDepth: Math.min(depth, 2) }) as fc.Arbitrary<Json>);

const memo = new WeakMap<SchemaNode, Map<number, fc.Arbitrary<Json>>>();

/**
 * Valid values for `node`. `depth` is spent on refs and on nesting; at zero, anyOf takes its smallest member,
 * objects carry only required properties and arrays are empty, so generation always ends.
 */
export function arbitraryFor(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  let byDepth = memo.get(node);
  if (!byDepth) memo.set(node, (byDepth = new Map()));
  const d = Math.max(depth, 0);
  let arb = byDepth.get(d);
  if (!arb) {
    arb = build(node, defs, d);
    byDepth.set(d, arb);
  }
  return arb;
}

function build(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  if (node.ref !== undefined) {
    const target = defs.get(node.ref);
    if (!target) throw new Error(`unknown definition ${node.ref}`);
    return arbitraryFor(target, defs, depth - 1);
  }
  if (node.anyOf) {
    if (node.anyOf.length === 0) throw new Error("empty anyOf has no valid value");
    if (depth === 0) {
      const costs = node.anyOf.map((m) => minCost(defs, m));
      return arbitraryFor(node.anyOf[costs.indexOf(Math.min(...costs))]!, defs, 0);
    }
    return fc.oneof(...node.anyOf.map((m) => arbitraryFor(m, defs, depth)));
  }
  if (node.allOf) {
    const alternatives = spreadAllOf(defs, node.allOf);
    const arbs = alternatives.map((alt) => arbitraryFor(mergeAllOf(defs, alt), defs, depth));
    const arb = arbs.length === 1 ? arbs[0]! : fc.oneof(...arbs);
    // A merged alternative may miss what merging cannot express; the bundled schema's allOfs merge exactly.
    const exact = alternatives.length === 1 && alternatives[0]!.every((m) => !needsCheck(m));
    return exact ? arb : arb.filter((v) => satisfies(defs, node, v));
  }
  if (node.conditional !== undefined || node.not !== undefined) {
    // The value keywords alone, then (for if/then/else) with each branch's keywords merged in; the check keeps
    // the values that took the branch their `if` says and do not match `not`.
    const { conditional, not: _not, ...base } = node;
    const branches = conditional
      ? [
          mergeAllOf(defs, [base, conditional.if, ...(conditional.then ? [conditional.then] : [])]),
          conditional.else ? mergeAllOf(defs, [base, conditional.else]) : base,
        ]
      : [base];
    return fc.oneof(...branches.map((b) => arbitraryFor(b, defs, depth))).filter((v) => satisfies(defs, node, v));
  }
  if (needsCheck(node)) return plain(node, defs, depth).filter((v) => satisfies(defs, node, v));
  return plain(node, defs, depth);
}

/** Values for a node with no allOf, anyOf, ref, not or if: by const, enum or type, keyword by keyword. */
function plain(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  if (node.const !== undefined) return fc.constant(node.const);
  if (node.enum !== undefined) {
    if (node.enum.length === 0) throw new Error("empty enum has no valid value");
    return fc.constantFrom(...node.enum);
  }
  const types: JsonType[] | undefined = node.types;
  if (types !== undefined && types.length === 0) throw new Error("type [] has no valid value");
  if (types === undefined) {
    // Any JSON type; object and array keywords still constrain objects and arrays.
    if (node.properties || node.required || node.additional !== undefined)
      return fc.oneof(objectOf(node, defs, depth), fc.constantFrom<Json>(null, 1, "s", false));
    if (node.items) return fc.oneof(arrayOf(node, defs, depth), fc.constantFrom<Json>(null, 1, "s", false));
    // Keywords for one type each: every type, each built to its own keywords.
    if (TYPED_KEYWORDS.some((k) => node[k] !== undefined))
      return fc.oneof(...ALL_TYPES.map((t) => ofType(t, node, defs, depth)));
    return anyJson(depth);
  }
  return fc.oneof(...types.map((t) => ofType(t, node, defs, depth)));
}

const ALL_TYPES: JsonType[] = ["null", "boolean", "integer", "number", "string", "array", "object"];
const TYPED_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "propertyNames",
  "dependentRequired",
] as const;

/** One code point per unit, from ASCII, the rest of the BMP and the astral planes, so lengths in code points and in UTF-16 units differ. */
const codePoint = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("é", "ß", "中", "😀", "𝄞", "\u{10FFFF}", "\u{1F1E6}") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);

function stringOf(node: SchemaNode): fc.Arbitrary<Json> {
  if (node.pattern !== undefined) {
    // Lengths, if any, are left to the check (see needsCheck).
    return fc.stringMatching(new RegExp(node.pattern, "u"));
  }
  if (node.minLength === undefined && node.maxLength === undefined) return fc.string({ maxLength: 12 });
  const min = node.minLength ?? 0;
  return fc.string({ unit: codePoint, minLength: min, maxLength: Math.min(node.maxLength ?? Infinity, min + 8) });
}

/** Integers k with k * step inside [lo, hi], as those multiples; `step` 1 gives plain integers. */
function multiples(lo: number, hi: number, step: number): fc.Arbitrary<number> {
  const kLo = Number.isFinite(lo) ? Math.ceil(lo / step) : undefined;
  const kHi = Number.isFinite(hi) ? Math.floor(hi / step) : undefined;
  const k =
    kLo === undefined && kHi === undefined
      ? fc.integer({ min: -1000, max: 1000 })
      : fc.integer({ min: kLo ?? kHi! - 100000, max: kHi ?? kLo! + 100000 });
  return k.map((n) => n * step);
}

function numberOf(node: SchemaNode, integer: boolean): fc.Arbitrary<Json> {
  const bounded =
    node.minimum !== undefined ||
    node.maximum !== undefined ||
    node.exclusiveMinimum !== undefined ||
    node.exclusiveMaximum !== undefined;
  if (!bounded && node.multipleOf === undefined) {
    if (integer) return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger());
    return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
  }
  const lo = Math.max(node.minimum ?? -Infinity, node.exclusiveMinimum ?? -Infinity);
  const hi = Math.min(node.maximum ?? Infinity, node.exclusiveMaximum ?? Infinity);
  const inside = (v: number): boolean =>
    (node.minimum === undefined || v >= node.minimum) &&
    (node.maximum === undefined || v <= node.maximum) &&
    (node.exclusiveMinimum === undefined || v > node.exclusiveMinimum) &&
    (node.exclusiveMaximum === undefined || v < node.exclusiveMaximum);
  if (node.multipleOf !== undefined) {
    // Multiples of an integer step that are integers, or of any step; the node check drops float near-misses.
    const step =
      integer && !Number.isInteger(node.multipleOf)
        ? node.multipleOf * Math.round(1 / node.multipleOf) || 1
        : node.multipleOf;
    return multiples(lo, hi, step).filter(inside);
  }
  if (integer) return multiples(lo, hi, 1).filter(inside);
  return fc
    .double({
      min: Number.isFinite(lo) ? lo : -1e9,
      max: Number.isFinite(hi) ? hi : 1e9,
      minExcluded: node.exclusiveMinimum !== undefined && lo === node.exclusiveMinimum,
      maxExcluded: node.exclusiveMaximum !== undefined && hi === node.exclusiveMaximum,
      noNaN: true,
      noDefaultInfinity: true,
    })
    .filter(inside);
}

function ofType(type: JsonType, node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "string":
      return stringOf(node);
    case "integer":
      return numberOf(node, true);
    case "number":
      return numberOf(node, false);
    case "array":
      return arrayOf(node, defs, depth);
    case "object":
      return objectOf(node, defs, depth);
  }
}

function arrayOf(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  const min = node.minItems ?? 0;
  if (depth === 0 && min === 0) return fc.constant([]);
  const item = node.items ? arbitraryFor(node.items, defs, depth - 1) : anyJson(depth - 1);
  const bounds = { minLength: min, maxLength: Math.min(node.maxItems ?? Infinity, Math.max(3, min)) };
  if (node.uniqueItems) return fc.uniqueArray(item, { ...bounds, selector: canonical });
  return fc.array(item, bounds);
}

/** Strings that are valid property names for a node's propertyNames, if any. */
function keyOf(defs: Defs, node: SchemaNode, known: Set<string>): fc.Arbitrary<string> {
  const ok = (k: string): boolean =>
    !known.has(k) && (node.propertyNames === undefined || satisfies(defs, node.propertyNames, k));
  if (node.propertyNames === undefined) return extraKey.filter(ok);
  const names = resolve(defs, node.propertyNames);
  const strings =
    names.const !== undefined || names.enum !== undefined
      ? fc.constantFrom(...[names.const, ...(names.enum ?? [])].filter((v): v is string => typeof v === "string"))
      : stringOf(names);
  return (strings as fc.Arbitrary<string>).filter(ok);
}

function objectOf(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  const required = new Set(node.required ?? []);
  const known = new Set((node.properties ?? []).map((p) => p.name));
  const shape: Record<string, fc.Arbitrary<Json>> = {};
  for (const p of node.properties ?? []) {
    if (depth === 0 && !required.has(p.name)) continue;
    shape[p.name] = arbitraryFor(p.node, defs, depth - 1);
  }
  // Required names the schema declares no property for can hold anything.
  for (const name of required) if (!known.has(name)) shape[name] = anyJson(depth - 1);
  const base = fc.record(shape, { requiredKeys: [...required] });
  const additional = node.additional;
  // Keys a minProperties needs beyond the declared properties come from extra keys, even at depth 0.
  const needed = Math.max(0, (node.minProperties ?? 0) - known.size);
  let out: fc.Arbitrary<Json>;
  if ((depth === 0 && needed === 0) || additional === "closed") out = base as fc.Arbitrary<Json>;
  else {
    const key = keyOf(defs, node, new Set([...known, ...required]));
    const extraValue =
      additional === undefined || additional === "open"
        ? anyJson(depth - 1)
        : arbitraryFor(additional, defs, depth - 1);
    // Extra keys only sometimes, so most values look like what peers send.
    const dictionary = fc.dictionary(key, extraValue, { minKeys: needed, maxKeys: Math.max(2, needed) });
    const extras =
      needed > 0
        ? dictionary
        : fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: dictionary });
    out = fc.tuple(base, extras).map(([b, e]) => ({ ...e, ...b }) as Json);
  }
  if (node.maxProperties !== undefined) {
    // Too many keys: drop optional ones until the count fits (the node check catches what this cannot fix).
    const max = node.maxProperties;
    out = out.map((o) => {
      const copy = { ...(o as JsonObject) };
      for (const k of Object.keys(copy)) if (Object.keys(copy).length > max && !required.has(k)) delete copy[k];
      return copy;
    });
  }
  if (node.dependentRequired !== undefined) {
    // A present key brings the keys it depends on, with values for their own property schemas.
    const wanted = [...new Set(node.dependentRequired.flatMap((d) => d.requires))];
    const props = new Map((node.properties ?? []).map((p) => [p.name, p.node]));
    const fillers = fc.record(
      Object.fromEntries(
        wanted.map((r) => [r, props.has(r) ? arbitraryFor(props.get(r)!, defs, depth - 1) : anyJson(depth - 1)]),
      ),
    );
    out = fc.tuple(out, fillers).map(([o, f]) => {
      const copy = { ...(o as JsonObject) };
      for (const d of node.dependentRequired!)
        if (copy[d.key] !== undefined) for (const r of d.requires) if (copy[r] === undefined) copy[r] = f[r]!;
      return copy;
    });
  }
  return out;
}

// ---- mutants ----

/** Where a mutation can land: the value, the (resolved) node it was generated for, and how to replace it. */
interface Site {
  node: SchemaNode;
  value: Json;
  set: (v: Json) => void;
}

function jsonTypeOf(v: Json): JsonType[] {
  if (v === null) return ["null"];
  if (Array.isArray(v)) return ["array"];
  if (typeof v === "number") return Number.isInteger(v) ? ["integer", "number"] : ["number"];
  return [typeof v as JsonType];
}

/** A cheap look at whether a value was likely generated for a node: types, const, enum, required keys. */
function roughlyMatches(defs: Defs, node: SchemaNode, v: Json): boolean {
  const n = resolve(defs, node);
  if (n.anyOf) return n.anyOf.some((m) => roughlyMatches(defs, m, v));
  if (n.allOf) return n.allOf.every((m) => roughlyMatches(defs, m, v));
  if (n.types && !jsonTypeOf(v).some((t) => n.types!.includes(t))) return false;
  if (n.const !== undefined && JSON.stringify(n.const) !== JSON.stringify(v)) return false;
  if (n.enum && !n.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) return false;
  if (isObject(v)) {
    for (const r of n.required ?? []) if (!(r in v)) return false;
    for (const p of n.properties ?? []) {
      const pn = resolve(defs, p.node);
      if (p.name in v && pn.const !== undefined && JSON.stringify(pn.const) !== JSON.stringify(v[p.name])) return false;
    }
  }
  return true;
}

/** Every place in `value` a mutation can land, in a fixed (pre-order) sequence, so a clone yields the same list. */
function collectSites(defs: Defs, node: SchemaNode, value: Json, set: Site["set"], out: Site[]): void {
  const n = resolve(defs, node);
  if (n.anyOf) {
    out.push({ node: n, value, set });
    let member: SchemaNode | undefined;
    if (n.discriminator && isObject(value)) {
      const hit = n.discriminator.cases.find((c) => c.value === value[n.discriminator!.key]);
      member = hit ? n.anyOf[hit.member] : undefined;
    } else {
      member = n.anyOf.find((m) => roughlyMatches(defs, m, value));
    }
    if (member) collectSites(defs, member, value, set, out);
    return;
  }
  if (n.allOf) {
    for (const m of n.allOf) collectSites(defs, m, value, set, out);
    return;
  }
  out.push({ node: n, value, set });
  if (isObject(value)) {
    const known = new Set<string>();
    for (const p of n.properties ?? []) {
      known.add(p.name);
      if (!(p.name in value)) continue;
      collectSites(
        defs,
        p.node,
        value[p.name]!,
        (v) => {
          value[p.name] = v;
        },
        out,
      );
    }
    if (n.additional !== undefined && n.additional !== "open" && n.additional !== "closed") {
      for (const k of Object.keys(value)) {
        if (!known.has(k))
          collectSites(
            defs,
            n.additional,
            value[k]!,
            (v) => {
              value[k] = v;
            },
            out,
          );
      }
    }
  }
  if (Array.isArray(value) && n.items) {
    value.forEach((item, i) =>
      collectSites(
        defs,
        n.items!,
        item,
        (v) => {
          value[i] = v;
        },
        out,
      ),
    );
  }
}

/** One of each JSON type, integers and fractions apart, so "wrong type" always has a candidate. */
const SAMPLES: Json[] = [null, true, 0, 7, 1.5, -2, "", "text", [], [1], {}, { a: 1 }];
const ITEM_SAMPLES: Json[] = [null, 1.5, "text", {}];
const EXTRA_KEYS = ["x-mutant", "_meta", "jsonrpc", "params", "id", "type", "method", "result"];

export type MutationKind =
  | "drop-required"
  | "drop-optional"
  | "wrong-type"
  | "bad-const"
  | "bad-enum"
  | "fractional"
  | "out-of-range"
  | "extra-key"
  | "wrong-tag"
  | "bad-item"
  | "replace"
  // Keyword mutations: each puts a value just outside (or just inside) one keyword's bound.
  | "too-few-items"
  | "too-many-items"
  | "duplicate-item"
  | "too-short"
  | "too-long"
  | "astral-length"
  | "pattern-mismatch"
  | "exclusive-bound"
  | "not-multiple"
  | "too-few-properties"
  | "too-many-properties"
  | "bad-property-name"
  | "dependent-missing"
  | "matches-not"
  | "flip-branch"
  | "near-const";
/** The kinds every MCP schema exercises. */
export const MUTATION_KINDS: readonly MutationKind[] = [
  "drop-required",
  "drop-optional",
  "wrong-type",
  "bad-const",
  "bad-enum",
  "fractional",
  "out-of-range",
  "extra-key",
  "wrong-tag",
  "bad-item",
  "replace",
];
/** The kinds for the assertion keywords beyond those (test/fixtures/keywords exercises each). */
export const KEYWORD_MUTATION_KINDS: readonly MutationKind[] = [
  "too-few-items",
  "too-many-items",
  "duplicate-item",
  "too-short",
  "too-long",
  "astral-length",
  "pattern-mismatch",
  "exclusive-bound",
  "not-multiple",
  "too-few-properties",
  "too-many-properties",
  "bad-property-name",
  "dependent-missing",
  "matches-not",
  "flip-branch",
  "near-const",
];

interface Mutation {
  kind: MutationKind;
  apply: (site: Site) => void;
}

function perturb(value: Json): Json {
  if (typeof value === "string") return value === "" ? "x" : `${value}_`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (value === null) return "null";
  return null;
}

// Samples are copied on use: a mutant may be mutated again, and a shared sample would leak between mutants.
const fresh = (v: Json): Json => structuredClone(v);

/** The neighbouring double in the direction of `toward`: the first value on the other side of a bound. */
function nextAfter(x: number, toward: number): number {
  if (x === toward || !Number.isFinite(x)) return x;
  if (x === 0) return toward > 0 ? Number.MIN_VALUE : -Number.MIN_VALUE;
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const bits = buf.getBigInt64(0);
  buf.setBigInt64(0, toward > x === x > 0 ? bits + 1n : bits - 1n);
  return buf.getFloat64(0);
}

/** A value a node would likely accept, for keys a mutation adds: its const, first enum value, or a sample of its type. */
function plausible(defs: Defs, node: SchemaNode): Json {
  const n = resolve(defs, node);
  if (n.const !== undefined) return n.const;
  if (n.enum?.length) return n.enum[0]!;
  if (n.types) return SAMPLES.find((s) => jsonTypeOf(s).some((t) => n.types!.includes(t))) ?? null;
  return "text";
}

/** Variants of a const or enum member that is an object or array: key order changed (still equal), and near misses. */
function nearConsts(value: Json): Json[] {
  if (Array.isArray(value))
    return [
      [...value].reverse(),
      value.slice(0, -1),
      [...value, null],
      value.map((v, i) => (i === value.length - 1 ? perturb(v) : v)),
    ];
  if (!isObject(value)) return [];
  const keys = Object.keys(value);
  const reordered: JsonObject = {};
  for (const k of [...keys].reverse()) reordered[k] = value[k]!;
  const out: Json[] = [reordered, { ...value, "x-extra": 1 }];
  if (keys.length) {
    const last = keys[keys.length - 1]!;
    const { [last]: _dropped, ...rest } = value;
    out.push(rest, { ...value, [last]: perturb(value[last]!) });
    // The same number of keys, one of them "__proto__" holding {}: unequal, unless equality reads inherited keys.
    const proto = { ...rest };
    setOwn(proto, "__proto__", {});
    out.push(proto);
    // A nested object or array changed one level down.
    for (const k of keys) for (const inner of nearConsts(value[k]!).slice(0, 2)) out.push({ ...value, [k]: inner });
  }
  return out;
}

/** Every concrete mutation that makes sense at a site (each key to drop, each wrong sample, each tag...). */
function mutationsAt(defs: Defs, site: Site): Mutation[] {
  const { node, value } = site;
  const out: Mutation[] = [];
  const add = (kind: MutationKind, apply: Mutation["apply"]): void => void out.push({ kind, apply });
  const setTo = (kind: MutationKind, v: Json): void => add(kind, (t) => t.set(fresh(v)));
  const required = node.required ?? [];
  for (const s of SAMPLES) setTo("replace", s);
  if (isObject(value)) {
    for (const k of Object.keys(value)) {
      add(required.includes(k) ? "drop-required" : "drop-optional", (t) => {
        delete (t.value as JsonObject)[k];
      });
    }
    // Each key with one sample (a fixed pairing that still gives every key a wrong-typed value somewhere).
    EXTRA_KEYS.forEach((k, i) => {
      const s = SAMPLES[(i * 5 + 1) % SAMPLES.length]!;
      add("extra-key", (t) => {
        (t.value as JsonObject)[k] = fresh(s);
      });
    });
    if (node.discriminator) {
      const tag = node.discriminator;
      for (const option of [...tag.cases.map((c) => c.value), "no/such-tag", 0, null] as Json[]) {
        if (option !== value[tag.key])
          add("wrong-tag", (t) => {
            (t.value as JsonObject)[tag.key] = option;
          });
      }
    }
  }
  if (node.types && node.types.length > 0) {
    for (const s of SAMPLES.filter((x) => !jsonTypeOf(x).some((t) => node.types!.includes(t)))) setTo("wrong-type", s);
  }
  if (node.const !== undefined) {
    add("bad-const", (t) => t.set(perturb(node.const!)));
    for (const v of nearConsts(node.const)) setTo("near-const", v);
  }
  for (const e of node.enum ?? []) {
    add("bad-enum", (t) => t.set(perturb(e)));
    for (const v of nearConsts(e)) setTo("near-const", v);
  }
  if (typeof value === "number" && Number.isInteger(value)) add("fractional", (t) => t.set((t.value as number) + 0.5));
  // Bounds: half a unit outside, the bound itself and the neighbouring double on either side.
  for (const [bound, inclusive] of [
    [node.minimum, true],
    [node.maximum, true],
    [node.exclusiveMinimum, false],
    [node.exclusiveMaximum, false],
  ] as const) {
    if (bound === undefined) continue;
    const kind: MutationKind = inclusive ? "out-of-range" : "exclusive-bound";
    const outward = bound === node.minimum || bound === node.exclusiveMinimum ? -Infinity : Infinity;
    for (const v of [bound + (outward < 0 ? -0.5 : 0.5), bound, nextAfter(bound, outward), nextAfter(bound, -outward)])
      setTo(kind, v);
  }
  if (node.multipleOf !== undefined) {
    const m = node.multipleOf;
    const k = typeof value === "number" ? Math.round(value / m) : 3;
    // Half a step off; k * m in floating point and as a person would write it (0.30000000000000004 and 0.3 for
    // 3 * 0.1: Ajv, and so the guards, accept neither); a multiple whose quotient is 1e21 or more.
    for (const v of [k * m + m / 2, k * m, Number((k * m).toPrecision(12)), (k + 1) * m, m * 1e21, -m])
      setTo("not-multiple", v);
  }
  if (typeof value === "string" || node.minLength !== undefined || node.maxLength !== undefined) {
    // Astral characters are two UTF-16 units but one code point each; lone surrogates are one each.
    const astral = "\u{1F600}";
    if (node.minLength !== undefined && node.minLength > 0) {
      const n = node.minLength;
      for (const v of ["a".repeat(n - 1), astral.repeat(n - 1), "\ud83d".repeat(n - 1)]) setTo("too-short", v);
      for (const v of [astral.repeat(n), "\ud83d".repeat(n), "\ude00\ud83d".repeat(Math.ceil(n / 2))])
        setTo("astral-length", v);
    }
    if (node.maxLength !== undefined) {
      const n = node.maxLength;
      for (const v of ["a".repeat(n + 1), astral.repeat(n + 1), astral + "a".repeat(n)]) setTo("too-long", v);
      for (const v of [
        astral.repeat(n),
        astral + "a".repeat(Math.max(0, n - 1)),
        "\ud83d\ude00\ud83d".repeat(Math.floor(n / 2)),
      ])
        setTo("astral-length", v);
    }
  }
  if (node.pattern !== undefined) {
    const base = typeof value === "string" ? value : "text";
    const candidates = [
      "",
      " ",
      "!",
      `${base}\n`,
      ` ${base}`,
      base.slice(1),
      base.toUpperCase(),
      "\u{1F600}\u{1F600}\u{1F600}",
      "\u{1F600}".repeat(4),
      "x".repeat(40),
      "\ud83d",
    ];
    for (const v of candidates) setTo("pattern-mismatch", v);
  }
  if (Array.isArray(value)) {
    for (const s of ITEM_SAMPLES)
      add("bad-item", (t) => {
        (t.value as Json[]).push(fresh(s));
      });
    const filler = (i: number): Json =>
      fresh(value.length ? value[i % value.length]! : ITEM_SAMPLES[i % ITEM_SAMPLES.length]!);
    const resize = (kind: MutationKind, n: number): void =>
      add(kind, (t) => {
        const a = t.value as Json[];
        if (a.length > n) a.length = n;
        for (let i = a.length; i < n; i++) a.push(filler(i));
      });
    if (node.minItems !== undefined && node.minItems > 0) {
      resize("too-few-items", node.minItems - 1);
      resize("too-few-items", node.minItems);
    }
    if (node.maxItems !== undefined) {
      resize("too-many-items", node.maxItems + 1);
      resize("too-many-items", node.maxItems);
    }
    if (node.uniqueItems) {
      value.forEach((item, i) => {
        add("duplicate-item", (t) => {
          (t.value as Json[]).push(fresh(item));
        });
        for (const v of nearConsts(item).slice(0, 2))
          add("duplicate-item", (t) => {
            (t.value as Json[]).splice(i + 1, 0, fresh(v));
          });
      });
      if (value.some((x) => typeof x === "number"))
        add("duplicate-item", (t) => {
          (t.value as Json[]).push(-0, 0);
        });
    }
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    const optionalFirst = [...keys.filter((k) => !required.includes(k)), ...keys.filter((k) => required.includes(k))];
    if (node.minProperties !== undefined && node.minProperties > 0) {
      const keep = node.minProperties - 1;
      add("too-few-properties", (t) => {
        for (const k of optionalFirst.slice(0, Math.max(0, keys.length - keep))) delete (t.value as JsonObject)[k];
      });
    }
    const fill = (kind: MutationKind, n: number): void =>
      add(kind, (t) => {
        const o = t.value as JsonObject;
        const sample = keys.length ? value[keys[0]!]! : "text";
        for (let i = 0; Object.keys(o).length < n; i++) o[`k${i}`] = fresh(sample);
      });
    if (node.maxProperties !== undefined) {
      fill("too-many-properties", node.maxProperties + 1);
      fill("too-many-properties", node.maxProperties);
    }
    if (node.propertyNames !== undefined) {
      const sample = keys.length ? value[keys[0]!]! : "text";
      for (const k of ["", "A", "a b", "\u{1F600}", "a".repeat(11), "1a", "constructor", "é", "__proto__"])
        add("bad-property-name", (t) => setOwn(t.value as JsonObject, k, fresh(sample)));
    }
    const props = new Map((node.properties ?? []).map((p) => [p.name, p.node]));
    for (const d of node.dependentRequired ?? []) {
      if (value[d.key] !== undefined)
        for (const r of d.requires)
          add("dependent-missing", (t) => {
            delete (t.value as JsonObject)[r];
          });
      else
        add("dependent-missing", (t) => {
          (t.value as JsonObject)[d.key] = fresh(props.has(d.key) ? plausible(defs, props.get(d.key)!) : "text");
        });
    }
  }
  if (node.not !== undefined) {
    // Values the `not` schema matches: its constants, a value of its type, the keys it requires.
    const n = resolve(defs, node.not);
    for (const v of [...(n.const !== undefined ? [n.const] : []), ...(n.enum ?? [])]) setTo("matches-not", v);
    for (const s of SAMPLES) if (n.types?.some((t) => jsonTypeOf(s).includes(t))) setTo("matches-not", s);
    if (isObject(value))
      for (const r of n.required ?? [])
        add("matches-not", (t) => {
          (t.value as JsonObject)[r] = "text";
        });
  }
  if (node.conditional !== undefined && isObject(value)) {
    // Switch which branch applies (the `if` schema's consts and enums), or drop what a branch requires.
    const c = node.conditional;
    const cond = resolve(defs, c.if);
    for (const p of cond.properties ?? []) {
      const pn = resolve(defs, p.node);
      for (const v of [...(pn.const !== undefined ? [pn.const, perturb(pn.const)] : []), ...(pn.enum ?? [])])
        add("flip-branch", (t) => {
          (t.value as JsonObject)[p.name] = fresh(v);
        });
    }
    for (const branch of [c.then, c.else]) {
      for (const r of branch ? (resolve(defs, branch).required ?? []) : [])
        add("flip-branch", (t) => {
          delete (t.value as JsonObject)[r];
        });
    }
  }
  return out;
}

/** Picks uniformly by kind first, then among that kind's options, so rare kinds (tags, ranges) are not drowned. */
function pickMutation(options: Mutation[], a: number, b: number): Mutation {
  const kinds = [...new Set(options.map((o) => o.kind))];
  const kind = kinds[a % kinds.length]!;
  const ofKind = options.filter((o) => o.kind === kind);
  return ofKind[b % ofKind.length]!;
}

/** The mutation sites of a value held in `holder`: a site at the root replaces holder.root. */
function sitesIn(defs: Defs, node: SchemaNode, holder: { root: Json }): Site[] {
  const sites: Site[] = [];
  collectSites(defs, node, holder.root, (v) => void (holder.root = v), sites);
  return sites;
}

/**
 * A likely-invalid variant of a valid value: one or two mutations, each at a site (any depth) and of a kind the
 * choice list picks. The input is left untouched.
 */
export function mutate(
  defs: Defs,
  node: SchemaNode,
  valid: Json,
  choices: number[],
): { value: Json; kinds: MutationKind[] } {
  let i = 0;
  const next = (): number => (choices.length ? choices[i++ % choices.length]! : 0);
  const holder: { root: Json } = { root: structuredClone(valid) };
  const kinds: MutationKind[] = [];
  const rounds = 1 + (next() % 2);
  for (let r = 0; r < rounds; r++) {
    const sites = sitesIn(defs, node, holder);
    const site = sites[next() % sites.length]!;
    const mutation = pickMutation(mutationsAt(defs, site), next(), next());
    mutation.apply(site);
    kinds.push(mutation.kind);
  }
  return { value: asJson(holder.root), kinds };
}

/** Every single-mutation variant of a value: each mutation at each site, on its own copy. */
export function* allMutants(defs: Defs, node: SchemaNode, valid: Json): Generator<{ value: Json; kind: MutationKind }> {
  const probe: Site[] = [];
  collectSites(defs, node, valid, () => {}, probe);
  for (let s = 0; s < probe.length; s++) {
    const count = mutationsAt(defs, probe[s]!).length;
    for (let m = 0; m < count; m++) {
      const holder: { root: Json } = { root: structuredClone(valid) };
      const sites = sitesIn(defs, node, holder);
      const mutation = mutationsAt(defs, sites[s]!)[m]!;
      mutation.apply(sites[s]!);
      yield { value: asJson(holder.root), kind: mutation.kind };
    }
  }
}
