// Property-test generators driven by the model: valid values for any schema node, and mutants of them that are
// likely (not certainly: the oracle decides) invalid.
import fc from "fast-check";
import { resolveRef as resolve } from "../../generator/model.js";
import type { JsonType, JsonValue, SchemaNode } from "../../generator/model.js";

export type Defs = ReadonlyMap<string, SchemaNode>;
type Json = JsonValue;
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON round trip: what a peer could actually send (no -0, no undefined, no null-prototype objects). */
export const asJson = (v: unknown): Json => JSON.parse(JSON.stringify(v)) as Json;

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
    return 1 + (node.required ?? []).reduce((sum, name) => sum + (props.has(name) ? minCost(defs, props.get(name)!, visiting) : 1), 0);
  } finally {
    visiting.delete(node);
  }
}

/** allOf of object schemas as one node: properties joined (a name in both becomes an allOf), required unioned. */
function mergeAllOf(defs: Defs, members: SchemaNode[]): SchemaNode {
  const resolved = members.map((m) => resolve(defs, m));
  if (resolved.some((m) => m.anyOf)) throw new Error("allOf over anyOf is not in the MCP schema; the builder does not handle it");
  const flat = resolved.flatMap((m) => (m.allOf ? [mergeAllOf(defs, m.allOf)] : [m]));
  const props = new Map<string, SchemaNode>();
  for (const m of flat) for (const p of m.properties ?? []) props.set(p.name, props.has(p.name) ? { allOf: [props.get(p.name)!, p.node] } : p.node);
  let types: JsonType[] | undefined;
  for (const m of flat) {
    if (!m.types) continue;
    if (!types) { types = m.types; continue; }
    const prev: JsonType[] = types;
    types = m.types.flatMap((t): JsonType[] => (prev.includes(t) ? [t] : t === "number" && prev.includes("integer") ? ["integer"] : t === "integer" && prev.includes("number") ? ["integer"] : []));
  }
  const merged: SchemaNode = {};
  if (types) merged.types = types;
  if (props.size) merged.properties = [...props].map(([name, node]) => ({ name, node }));
  const required = [...new Set(flat.flatMap((m) => m.required ?? []))];
  if (required.length) merged.required = required;
  const additional = flat.map((m) => m.additional).filter((a) => a !== undefined && a !== "open");
  if (additional.length) merged.additional = additional[0]!;
  for (const m of flat) {
    if (m.const !== undefined) merged.const = m.const;
    if (m.enum !== undefined) merged.enum = m.enum;
    if (m.minimum !== undefined) merged.minimum = Math.max(m.minimum, merged.minimum ?? -Infinity);
    if (m.maximum !== undefined) merged.maximum = Math.min(m.maximum, merged.maximum ?? Infinity);
    if (m.items !== undefined) merged.items = m.items;
  }
  return merged;
}

// Keys for unknown properties: short, printable, sometimes JSON-ish oddities ("$x", "a/b", "~").
const extraKey = fc.oneof(fc.constantFrom("x-extra", "vendor/flag", "$x", "a~b", "ünï", "constructor", "toString"), fc.string({ minLength: 1, maxLength: 8 }));
const anyJson = (depth: number): fc.Arbitrary<Json> =>
  depth <= 0 ? fc.constantFrom<Json>(null, true, 0, "") : (fc.jsonValue({ maxDepth: Math.min(depth, 2) }) as fc.Arbitrary<Json>);

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
  if (node.allOf) return arbitraryFor(mergeAllOf(defs, node.allOf), defs, depth);
  if (node.const !== undefined) return fc.constant(node.const);
  if (node.enum !== undefined) {
    if (node.enum.length === 0) throw new Error("empty enum has no valid value");
    return fc.constantFrom(...node.enum);
  }
  const types: JsonType[] | undefined = node.types;
  if (types !== undefined && types.length === 0) throw new Error("type [] has no valid value");
  if (types === undefined) {
    // Any JSON type; object and array keywords still constrain objects and arrays.
    if (node.properties || node.required || node.additional !== undefined) return fc.oneof(objectOf(node, defs, depth), fc.constantFrom<Json>(null, 1, "s", false));
    if (node.items) return fc.oneof(arrayOf(node, defs, depth), fc.constantFrom<Json>(null, 1, "s", false));
    return anyJson(depth);
  }
  return fc.oneof(...types.map((t) => ofType(t, node, defs, depth)));
}

function ofType(type: JsonType, node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  switch (type) {
    case "null": return fc.constant(null);
    case "boolean": return fc.boolean();
    case "string": return fc.string({ maxLength: 12 });
    case "integer": {
      const min = node.minimum !== undefined ? Math.ceil(node.minimum) : undefined;
      const max = node.maximum !== undefined ? Math.floor(node.maximum) : undefined;
      if (min !== undefined || max !== undefined) return fc.integer({ min: min ?? max! - 100000, max: max ?? min! + 100000 });
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger());
    }
    case "number": {
      if (node.minimum !== undefined || node.maximum !== undefined) {
        return fc.double({ min: node.minimum ?? -1e9, max: node.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
      }
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    }
    case "array": return arrayOf(node, defs, depth);
    case "object": return objectOf(node, defs, depth);
  }
}

function arrayOf(node: SchemaNode, defs: Defs, depth: number): fc.Arbitrary<Json> {
  if (depth === 0) return fc.constant([]);
  const item = node.items ? arbitraryFor(node.items, defs, depth - 1) : anyJson(depth - 1);
  return fc.array(item, { maxLength: 3 });
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
  if (depth === 0 || additional === "closed") return base as fc.Arbitrary<Json>;
  const key = extraKey.filter((k) => !known.has(k) && !required.has(k));
  const extraValue = additional === undefined || additional === "open" ? anyJson(depth - 1) : arbitraryFor(additional, defs, depth - 1);
  // Extra keys only sometimes, so most values look like what peers send.
  const extras = fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(key, extraValue, { maxKeys: 2 }) });
  return fc.tuple(base, extras).map(([b, e]) => ({ ...e, ...b }) as Json);
}

// ---- mutants ----

/** Where a mutation can land: the value, the (resolved) node it was generated for, and how to replace it. */
interface Site { node: SchemaNode; value: Json; set: (v: Json) => void }

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
      collectSites(defs, p.node, value[p.name]!, (v) => { value[p.name] = v; }, out);
    }
    if (n.additional !== undefined && n.additional !== "open" && n.additional !== "closed") {
      for (const k of Object.keys(value)) {
        if (!known.has(k)) collectSites(defs, n.additional, value[k]!, (v) => { value[k] = v; }, out);
      }
    }
  }
  if (Array.isArray(value) && n.items) {
    value.forEach((item, i) => collectSites(defs, n.items!, item, (v) => { value[i] = v; }, out));
  }
}

/** One of each JSON type, integers and fractions apart, so "wrong type" always has a candidate. */
const SAMPLES: Json[] = [null, true, 0, 7, 1.5, -2, "", "text", [], [1], {}, { a: 1 }];
const ITEM_SAMPLES: Json[] = [null, 1.5, "text", {}];
const EXTRA_KEYS = ["x-mutant", "_meta", "jsonrpc", "params", "id", "type", "method", "result"];

export type MutationKind =
  | "drop-required" | "drop-optional" | "wrong-type" | "bad-const" | "bad-enum" | "fractional" | "out-of-range"
  | "extra-key" | "wrong-tag" | "bad-item" | "replace";
export const MUTATION_KINDS: readonly MutationKind[] = [
  "drop-required", "drop-optional", "wrong-type", "bad-const", "bad-enum", "fractional", "out-of-range", "extra-key", "wrong-tag", "bad-item", "replace",
];

interface Mutation { kind: MutationKind; apply: (site: Site) => void }

function perturb(value: Json): Json {
  if (typeof value === "string") return value === "" ? "x" : `${value}_`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (value === null) return "null";
  return null;
}

// Samples are copied on use: a mutant may be mutated again, and a shared sample would leak between mutants.
const fresh = (v: Json): Json => structuredClone(v);

/** Every concrete mutation that makes sense at a site (each key to drop, each wrong sample, each tag...). */
function mutationsAt(site: Site): Mutation[] {
  const { node, value } = site;
  const out: Mutation[] = [];
  const required = node.required ?? [];
  for (const s of SAMPLES) out.push({ kind: "replace", apply: (t) => t.set(fresh(s)) });
  if (isObject(value)) {
    for (const k of Object.keys(value)) {
      out.push({ kind: required.includes(k) ? "drop-required" : "drop-optional", apply: (t) => { delete (t.value as JsonObject)[k]; } });
    }
    // Each key with one sample (a fixed pairing that still gives every key a wrong-typed value somewhere).
    EXTRA_KEYS.forEach((k, i) => {
      const s = SAMPLES[(i * 5 + 1) % SAMPLES.length]!;
      out.push({ kind: "extra-key", apply: (t) => { (t.value as JsonObject)[k] = fresh(s); } });
    });
    if (node.discriminator) {
      const tag = node.discriminator;
      for (const option of [...tag.cases.map((c) => c.value), "no/such-tag", 0, null] as Json[]) {
        if (option !== value[tag.key]) out.push({ kind: "wrong-tag", apply: (t) => { (t.value as JsonObject)[tag.key] = option; } });
      }
    }
  }
  if (node.types && node.types.length > 0) {
    for (const s of SAMPLES.filter((x) => !jsonTypeOf(x).some((t) => node.types!.includes(t)))) out.push({ kind: "wrong-type", apply: (t) => t.set(fresh(s)) });
  }
  if (node.const !== undefined) out.push({ kind: "bad-const", apply: (t) => t.set(perturb(node.const!)) });
  for (const e of node.enum ?? []) out.push({ kind: "bad-enum", apply: (t) => t.set(perturb(e)) });
  if (typeof value === "number" && Number.isInteger(value)) out.push({ kind: "fractional", apply: (t) => t.set((t.value as number) + 0.5) });
  if (node.minimum !== undefined) out.push({ kind: "out-of-range", apply: (t) => t.set(node.minimum! - 0.5) });
  if (node.maximum !== undefined) out.push({ kind: "out-of-range", apply: (t) => t.set(node.maximum! + 0.5) });
  if (Array.isArray(value)) for (const s of ITEM_SAMPLES) out.push({ kind: "bad-item", apply: (t) => { (t.value as Json[]).push(fresh(s)); } });
  return out;
}

/** Picks uniformly by kind first, then among that kind's options, so rare kinds (tags, ranges) are not drowned. */
function pickMutation(options: Mutation[], a: number, b: number): Mutation {
  const kinds = [...new Set(options.map((o) => o.kind))];
  const kind = kinds[a % kinds.length]!;
  const ofKind = options.filter((o) => o.kind === kind);
  return ofKind[b % ofKind.length]!;
}

/**
 * A likely-invalid variant of a valid value: one or two mutations, each at a site (any depth) and of a kind the
 * choice list picks. The input is left untouched.
 */
export function mutate(defs: Defs, node: SchemaNode, valid: Json, choices: number[]): { value: Json; kinds: MutationKind[] } {
  let i = 0;
  const next = (): number => (choices.length ? choices[i++ % choices.length]! : 0);
  const holder: { root: Json } = { root: structuredClone(valid) };
  const kinds: MutationKind[] = [];
  const rounds = 1 + (next() % 2);
  for (let r = 0; r < rounds; r++) {
    const sites: Site[] = [];
    collectSites(defs, node, holder.root, (v) => { holder.root = v; }, sites);
    const site = sites[next() % sites.length]!;
    const mutation = pickMutation(mutationsAt(site), next(), next());
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
    const count = mutationsAt(probe[s]!).length;
    for (let m = 0; m < count; m++) {
      const holder: { root: Json } = { root: structuredClone(valid) };
      const sites: Site[] = [];
      collectSites(defs, node, holder.root, (v) => { holder.root = v; }, sites);
      const mutation = mutationsAt(sites[s]!)[m]!;
      mutation.apply(sites[s]!);
      yield { value: asJson(holder.root), kind: mutation.kind };
    }
  }
}
