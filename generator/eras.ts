// The era map, derived from the models of the revisions a config lists: which methods each revision has, which
// results are cacheable, which params member names the Mcp-Name header, and the input requests of each revision.
import { canonicalJson, compareCodeUnits } from "./json.js";
import { definitionMap, paramsGuardName, type Direction, type Model, type SchemaNode } from "./model.js";

/** The definition a cacheable result extends (2026-07-28: `ttlMs` and `cacheScope`). */
export const CACHEABLE_RESULT = "CacheableResult";

export interface RevisionModel {
  revision: string;
  model: Model;
  /** The revision the stubs and handler types come from. */
  sdk: boolean;
}

export interface InputRequestFacts {
  /** Guard name of the params (`is<params>` in the revision's guards). */
  params: string;
  /** The result definition (`is<result>` in the revision's guards); several for a union. */
  results: string[];
  /** The client capability the request needs, as a dotted path; absent when none. */
  capability?: string;
}

export interface RevisionFacts {
  revision: string;
  source: Model["source"];
  sdk: boolean;
  /** Method to how it travels: every message of the revision's dispatch tables. */
  methods: Map<string, { kind: "request" | "notification"; direction: Direction }>;
  /** Request method to the result of it that extends CacheableResult. */
  cacheable: Map<string, string>;
  /** Request method to the params member the Mcp-Name header carries. */
  mcpName: Map<string, string>;
  inputRequests: Map<string, InputRequestFacts>;
}

export interface EraMap {
  /** Sorted by name, which for MCP's dated revisions is oldest first. */
  revisions: RevisionFacts[];
  /** Every method of any revision, sorted, with the revisions that have it (in the order of `revisions`). */
  methods: Map<string, string[]>;
}

/** A node as far as it decides what is valid: without descriptions and formats (annotations only). */
function shapeOf(node: SchemaNode): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      if (key === "description" || key === "format") continue;
      // Values of const and enum are data: a member of them named "description" is kept.
      out[key] = key === "const" || key === "enum" ? child : strip(child);
    }
    return out;
  };
  return strip(node);
}

/**
 * Whether a definition extends another as the schema.ts `extends` says, which the JSON Schema flattens: every
 * member of the base is a member of the definition with the same shape, and every required one still required.
 */
export function extendsDefinition(defs: ReadonlyMap<string, SchemaNode>, name: string, base: string): boolean {
  const node = defs.get(name);
  const parent = defs.get(base);
  if (node === undefined || parent === undefined || name === base) return false;
  const members = new Map((node.properties ?? []).map((p) => [p.name, p.node]));
  const required = new Set(node.required ?? []);
  if (!(parent.properties ?? []).length) return false;
  return (
    (parent.properties ?? []).every((p) => {
      const own = members.get(p.name);
      return own !== undefined && canonicalJson(shapeOf(own)) === canonicalJson(shapeOf(p.node));
    }) && (parent.required ?? []).every((r) => required.has(r))
  );
}

/** The facts of one revision, from its model alone. */
export function revisionFacts(revision: string, model: Model, sdk: boolean): RevisionFacts {
  const defs = definitionMap(model);
  const methods = new Map(model.messages.map((m) => [m.method, { kind: m.kind, direction: m.direction }]));
  const cacheable = new Map<string, string>();
  const mcpName = new Map<string, string>();
  for (const m of model.messages) {
    if (m.kind !== "request") continue;
    const result = (m.results ?? []).find((r) => extendsDefinition(defs, r, CACHEABLE_RESULT));
    if (result !== undefined) cacheable.set(m.method, result);
    if (m.mcpName !== undefined) mcpName.set(m.method, m.mcpName);
  }
  const inputRequests = new Map<string, InputRequestFacts>();
  for (const m of model.inputRequests ?? []) {
    inputRequests.set(m.method, {
      params: paramsGuardName(m),
      results: m.results ?? [],
      ...(m.capability !== undefined ? { capability: m.capability } : {}),
    });
  }
  return { revision, source: model.source, sdk, methods, cacheable, mcpName, inputRequests };
}

/**
 * The era map of several revisions. Each revision's facts come from its own model, so a method a revision drops
 * is missing from that revision here without anyone listing it.
 */
export function deriveEras(models: RevisionModel[]): EraMap {
  const revisions = models
    .map((r) => revisionFacts(r.revision, r.model, r.sdk))
    .sort((a, b) => compareCodeUnits(a.revision, b.revision));
  const methods = new Map<string, string[]>();
  for (const r of revisions)
    for (const method of r.methods.keys()) methods.set(method, [...(methods.get(method) ?? []), r.revision]);
  const sorted = new Map([...methods].sort(([a], [b]) => compareCodeUnits(a, b)));
  return { revisions, methods: sorted };
}
