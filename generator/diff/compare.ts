// Structural comparison of two schema nodes from two models: reports how the accepted values moved, per field.
import { compareCodeUnits } from "../json.js";
import { NUMBER_KEYWORDS, type JsonType, type JsonValue, type SchemaNode } from "../model.js";
import { escapeToken } from "../pointer.js";
import { describeChange, type Classifier } from "./classify.js";
import type { Change, Effect } from "./types.js";

/**
 * A change as the comparison finds it, with where it lies inside the innermost definition entered on the way
 * (NEW's, else OLD's): the same change reached from several methods is reported once, under that definition.
 */
export interface FoundChange extends Change {
  inDefinition?: { name: string; path: string; what: string };
}

/** One model's definitions and where they live in its file. */
export interface Env {
  defs: ReadonlyMap<string, SchemaNode>;
  defsPointer: string;
}

/** A node and its JSON pointer in the file. */
export interface Pos {
  node: SchemaNode;
  ptr: string;
}

/** Where the comparison stands and what it reports into. */
export interface Walk {
  old: Env;
  new: Env;
  classify: Classifier;
  /** Definitions not entered (reported in a section of their own), by name when both sides name the same. */
  stopAt: ReadonlySet<string>;
  docs: boolean;
  /** Pairs of (old, new) pointers already compared: cycles end and a shared definition is reported once per part. */
  visited: Set<string>;
  out: FoundChange[];
}

interface Resolved extends Pos {
  /** The last definition name followed, if any. */
  name?: string;
}

function resolvePos(env: Env, pos: Pos): Resolved {
  let current: Resolved = pos;
  for (let hops = 0; current.node.ref !== undefined; hops++) {
    const name = current.node.ref;
    const node = env.defs.get(name);
    if (!node || hops > 64) return current;
    current = { node, ptr: `${env.defsPointer}/${escapeToken(name)}`, name };
  }
  return current;
}

const join = (path: string, segment: string): string =>
  path === "" ? segment : segment.startsWith("[") || segment.startsWith("{") ? path + segment : `${path}.${segment}`;

function show(value: JsonValue | undefined): string {
  return JSON.stringify(value);
}

/** Bounds besides minimum and maximum; a "min" or "exclusiveMin" bound that rises, or a "max" one that falls, narrows. */
const OTHER_BOUNDS = NUMBER_KEYWORDS.filter(
  (k): k is Exclude<(typeof NUMBER_KEYWORDS)[number], "minimum" | "maximum" | "multipleOf"> =>
    k !== "minimum" && k !== "maximum" && k !== "multipleOf",
);
/** Assertions with no order to compare by: added narrows, removed widens, changed is a change. */
const WHOLE_ASSERTIONS = [
  "multipleOf",
  "pattern",
  "uniqueItems",
  "propertyNames",
  "dependentRequired",
  "not",
  "conditional",
] as const;

/** The facts of a (possibly allOf) node that the comparison reads, with each property's position. */
interface View {
  types?: Set<JsonType>;
  constValue?: { value: JsonValue };
  enumValues?: JsonValue[];
  minimum?: number;
  maximum?: number;
  /** The other bounds (lengths, counts, exclusive limits), by keyword. */
  bounds: Map<string, number>;
  /** Assertions compared as a whole (pattern, multipleOf, not...): keyword to the model's JSON of it. */
  assertions: Map<string, string>;
  props: Map<string, Pos>;
  required: Set<string>;
  /** "none" covers both an absent keyword and an open one: either way unknown keys are allowed. */
  additional: { kind: "none" } | { kind: "closed" } | { kind: "node"; pos: Pos };
  items?: Pos;
  objectish: boolean;
}

function viewOf(env: Env, pos: Resolved): View {
  const node = pos.node;
  const view: View = {
    bounds: new Map(),
    assertions: new Map(),
    props: new Map(),
    required: new Set(),
    additional: { kind: "none" },
    objectish: false,
  };
  if (node.allOf) {
    node.allOf.forEach((member, i) => {
      const part = viewOf(env, resolvePos(env, { node: member, ptr: `${pos.ptr}/allOf/${i}` }));
      if (part.types) view.types = view.types ? new Set([...view.types].filter((t) => part.types!.has(t))) : part.types;
      for (const [name, p] of part.props) if (!view.props.has(name)) view.props.set(name, p);
      for (const r of part.required) view.required.add(r);
      if (part.additional.kind === "closed") view.additional = part.additional;
      view.objectish ||= part.objectish;
      if (part.constValue) view.constValue = part.constValue;
      if (part.enumValues) view.enumValues = part.enumValues;
    });
    return view;
  }
  if (node.types) view.types = new Set(node.types);
  if (node.const !== undefined) view.constValue = { value: node.const };
  if (node.enum) view.enumValues = node.enum;
  if (node.minimum !== undefined) view.minimum = node.minimum;
  if (node.maximum !== undefined) view.maximum = node.maximum;
  for (const key of OTHER_BOUNDS) if (node[key] !== undefined) view.bounds.set(key, node[key]);
  for (const key of WHOLE_ASSERTIONS) if (node[key] !== undefined) view.assertions.set(key, JSON.stringify(node[key]));
  for (const p of node.properties ?? [])
    view.props.set(p.name, { node: p.node, ptr: `${pos.ptr}/properties/${escapeToken(p.name)}` });
  for (const r of node.required ?? []) view.required.add(r);
  if (node.additional === "closed") view.additional = { kind: "closed" };
  else if (node.additional !== undefined && node.additional !== "open")
    view.additional = { kind: "node", pos: { node: node.additional, ptr: `${pos.ptr}/additionalProperties` } };
  if (node.items) view.items = { node: node.items, ptr: `${pos.ptr}/items` };
  view.objectish =
    view.props.size > 0 ||
    view.required.size > 0 ||
    (view.types?.has("object") ?? false) ||
    node.additional !== undefined;
  return view;
}

interface Member {
  pos: Pos;
  label: string;
  tag?: string;
  signature: string;
}

function describeTypes(view: View): string {
  if (view.constValue) return show(view.constValue.value);
  return view.types ? [...view.types].join("|") : "any";
}

/** A name for an inline member: its definition, its tag, or its shape ("array of A|B"). */
function describeMember(env: Env, view: View): string {
  if (view.items && view.types?.size === 1 && view.types.has("array")) {
    const items = resolvePos(env, view.items);
    const names = items.node.anyOf
      ? items.node.anyOf.map((m) => m.ref ?? "inline")
      : [view.items.node.ref ?? describeTypes(viewOf(env, items))];
    return `array of ${names.join("|")}`;
  }
  return describeTypes(view);
}

function membersOf(env: Env, pos: Resolved): Member[] {
  const union = pos.node.anyOf;
  const list: Pos[] = union ? union.map((m, i) => ({ node: m, ptr: `${pos.ptr}/anyOf/${i}` })) : [pos];
  const tags = new Map<number, string>();
  for (const c of pos.node.discriminator?.cases ?? []) tags.set(c.member, c.value);
  return list.map((member, i) => {
    const target = resolvePos(env, member);
    const view = viewOf(env, target);
    const signature = `${describeTypes(view)}:${[...view.props.keys()].sort(compareCodeUnits).join(",")}`;
    const tag = union ? tags.get(i) : undefined;
    const label = member.node.ref ?? (union ? undefined : pos.name) ?? tag ?? describeMember(env, view);
    return { pos: member, label, ...(tag !== undefined ? { tag } : {}), signature };
  });
}

/** Pairs the members of two unions: by tag, then definition name, then shape, then a lone leftover of each. */
function pairMembers(
  olds: Member[],
  news: Member[],
): { pairs: [Member, Member][]; removed: Member[]; added: Member[] } {
  const pairs: [Member, Member][] = [];
  let o = [...olds];
  let n = [...news];
  const take = (key: (m: Member) => string | undefined): void => {
    for (const om of [...o]) {
      const k = key(om);
      if (k === undefined) continue;
      const candidates = n.filter((nm) => key(nm) === k);
      if (candidates.length !== 1 || o.filter((x) => key(x) === k).length !== 1) continue;
      pairs.push([om, candidates[0]!]);
      o = o.filter((x) => x !== om);
      n = n.filter((x) => x !== candidates[0]);
    }
  };
  take((m) => m.tag);
  take((m) => m.pos.node.ref);
  take((m) => m.signature);
  // What is left pairs by the most shared property names among members of the same type (a member split in two,
  // a definition renamed and extended), best overlap first; no overlap, no pair, unless one of each remains.
  const typeOf = (m: Member): string => m.signature.split(":")[0]!;
  const propsOf = (m: Member): string[] => m.signature.split(":")[1]!.split(",").filter(Boolean);
  const scored: { om: Member; nm: Member; score: number }[] = [];
  for (const om of o) {
    for (const nm of n) {
      const ta = typeOf(om).split("|");
      const tb = typeOf(nm).split("|");
      const sharedTypes = ta.filter(
        (t) =>
          tb.includes(t) || (t === "integer" && tb.includes("number")) || (t === "number" && tb.includes("integer")),
      ).length;
      if (sharedTypes === 0) continue;
      const a = propsOf(om);
      const b = new Set(propsOf(nm));
      const shared = a.filter((x) => b.has(x)).length;
      const score =
        a.length + b.size === 0 ? sharedTypes / Math.max(ta.length, tb.length) : shared / Math.max(a.length, b.size);
      if (score > 0 || (o.length === 1 && n.length === 1)) scored.push({ om, nm, score });
    }
  }
  scored.sort((x, y) => y.score - x.score);
  for (const { om, nm } of scored) {
    if (!o.includes(om) || !n.includes(nm)) continue;
    pairs.push([om, nm]);
    o = o.filter((x) => x !== om);
    n = n.filter((x) => x !== nm);
  }
  return { pairs, removed: o, added: n };
}

function covers(types: Set<JsonType> | undefined, t: JsonType): boolean {
  if (!types) return true;
  return types.has(t) || (t === "integer" && types.has("number"));
}

function effectOf(narrowed: boolean, widened: boolean): Effect {
  return narrowed && widened ? "changed" : narrowed ? "narrowed" : widened ? "widened" : "none";
}

/** `path` relative to `base`, a prefix of it (the path at which a definition was entered). */
function below(path: string, base: string): string {
  if (base === "" || !path.startsWith(base)) return path;
  return path.slice(base.length).replace(/^\./, "");
}

export class Comparer {
  /** The innermost definition entered and the path at which it was. */
  private inside: { name: string; base: string } | undefined;

  constructor(
    private readonly w: Walk,
    private readonly base: { section: Change["section"]; subject: string; part: string },
  ) {}

  private emit(
    kind: string,
    effect: Effect,
    what: string,
    path: string,
    oldPtr: string | null,
    newPtr: string | null,
    extra?: string,
  ): void {
    const verdict = this.w.classify(kind, effect, { ...this.base, path, what });
    const finalKind = verdict.kind ?? kind;
    const finalEffect = verdict.effect ?? effect;
    const found: FoundChange = {
      ...this.base,
      path,
      kind: finalKind,
      effect: finalEffect,
      clients: verdict.clients,
      servers: verdict.servers,
      reason: extra ? `${verdict.reason} (${extra})` : verdict.reason,
      old: oldPtr,
      new: newPtr,
    };
    if (this.inside) {
      const rel = below(path, this.inside.base);
      const said = describeChange(finalKind, finalEffect, {
        section: "definitions",
        subject: this.inside.name,
        part: "definition",
        path: rel,
        what,
      });
      found.inDefinition = { name: this.inside.name, path: rel, what: extra ? `${said} (${extra})` : said };
    }
    this.w.out.push(found);
  }

  /** Compares what the two positions accept, reporting every difference under `path`. */
  compare(oldPos: Pos, newPos: Pos, path: string): void {
    const ro = resolvePos(this.w.old, oldPos);
    const rn = resolvePos(this.w.new, newPos);
    if (this.w.docs) {
      if ((oldPos.node.description ?? "") !== (newPos.node.description ?? ""))
        this.emit("description-changed", "none", "description", path, oldPos.ptr, newPos.ptr);
    }
    if (ro.name !== undefined && ro.name === rn.name && this.w.stopAt.has(ro.name)) return;
    const key = `${ro.ptr}|${rn.ptr}`;
    if (this.w.visited.has(key)) return;
    this.w.visited.add(key);
    const outer = this.inside;
    const entered = rn.name ?? ro.name;
    if (entered !== undefined) this.inside = { name: entered, base: path };
    try {
      this.compareResolved(oldPos, newPos, ro, rn, path);
    } finally {
      this.inside = outer;
    }
  }

  private compareResolved(oldPos: Pos, newPos: Pos, ro: Resolved, rn: Resolved, path: string): void {
    if (this.w.docs && ro !== oldPos && rn !== newPos && (ro.node.description ?? "") !== (rn.node.description ?? "")) {
      this.emit("description-changed", "none", "description", path, ro.ptr, rn.ptr);
    }
    if (ro.node.anyOf || rn.node.anyOf) return this.compareUnion(ro, rn, path);
    this.compareValue(ro, rn, path);
  }

  private compareUnion(ro: Resolved, rn: Resolved, path: string): void {
    const { pairs, removed, added } = pairMembers(membersOf(this.w.old, ro), membersOf(this.w.new, rn));
    for (const m of removed)
      this.emit("union-member-removed", "narrowed", m.label, join(path, `<${m.label}>`), m.pos.ptr, rn.ptr);
    for (const m of added)
      this.emit("union-member-added", "widened", m.label, join(path, `<${m.label}>`), ro.ptr, m.pos.ptr);
    const single = pairs.length === 1 && !ro.node.anyOf && !rn.node.anyOf;
    for (const [om, nm] of pairs) this.compare(om.pos, nm.pos, single ? path : join(path, `<${nm.label}>`));
  }

  private compareValue(ro: Resolved, rn: Resolved, path: string): void {
    const vo = viewOf(this.w.old, ro);
    const vn = viewOf(this.w.new, rn);

    // Types: "integer" is inside "number"; an absent type list accepts anything.
    const oldTypes = vo.types;
    const newTypes = vn.types;
    const lost = oldTypes ? [...oldTypes].filter((t) => !covers(newTypes, t)) : newTypes ? ["any"] : [];
    const gained = newTypes ? [...newTypes].filter((t) => !covers(oldTypes, t)) : oldTypes ? ["any"] : [];
    if (lost.length || gained.length) {
      const effect = effectOf(lost.length > 0, gained.length > 0);
      this.emit(
        effect === "widened" ? "type-widened" : effect === "narrowed" ? "type-narrowed" : "type-changed",
        effect,
        `type ${describeTypes({ ...vo, constValue: undefined } as View)} -> ${describeTypes({ ...vn, constValue: undefined } as View)}`,
        path,
        ro.ptr,
        rn.ptr,
      );
      const overlap =
        !oldTypes ||
        !newTypes ||
        [...oldTypes].some((t) => covers(newTypes, t)) ||
        [...newTypes].some((t) => covers(oldTypes, t));
      if (!overlap) return;
    }

    // Constants and enumerations.
    const oc = vo.constValue;
    const nc = vn.constValue;
    if (oc && nc && show(oc.value) !== show(nc.value))
      this.emit("const-changed", "changed", `const ${show(oc.value)} -> ${show(nc.value)}`, path, ro.ptr, rn.ptr);
    else if (oc && !nc && !vn.enumValues)
      this.emit("const-removed", "widened", `const ${show(oc.value)} lifted`, path, ro.ptr, rn.ptr);
    else if (!oc && nc && !vo.enumValues)
      this.emit("const-added", "narrowed", `const ${show(nc.value)} imposed`, path, ro.ptr, rn.ptr);
    const oe = vo.enumValues ?? (oc && vn.enumValues ? [oc.value] : undefined);
    const ne = vn.enumValues ?? (nc && vo.enumValues ? [nc.value] : undefined);
    if (oe && ne) {
      const os = new Set(oe.map(show));
      const ns = new Set(ne.map(show));
      const removed = [...os].filter((v) => !ns.has(v));
      const added = [...ns].filter((v) => !os.has(v));
      if (removed.length)
        this.emit("enum-values-removed", "narrowed", `enum values ${removed.join(", ")} removed`, path, ro.ptr, rn.ptr);
      if (added.length)
        this.emit("enum-values-added", "widened", `enum values ${added.join(", ")} added`, path, ro.ptr, rn.ptr);
    } else if (oe && !ne && !nc) this.emit("enum-removed", "widened", "enumeration lifted", path, ro.ptr, rn.ptr);
    else if (!oe && ne && !oc)
      this.emit("enum-added", "narrowed", `restricted to ${ne.map(show).join(", ")}`, path, ro.ptr, rn.ptr);

    // Bounds.
    const bounds: [string, number | undefined, number | undefined][] = [
      ["minimum", vo.minimum, vn.minimum],
      ["maximum", vo.maximum, vn.maximum],
      ...OTHER_BOUNDS.map((b): [string, number | undefined, number | undefined] => [
        b,
        vo.bounds.get(b),
        vn.bounds.get(b),
      ]),
    ];
    for (const [bound, ob, nb] of bounds) {
      if (ob === nb) continue;
      // A lower bound narrows when it rises, an upper bound when it falls.
      const lower = /^(min|exclusiveMin)/.test(bound);
      const narrowed = nb !== undefined && (ob === undefined || (lower ? nb > ob : nb < ob));
      this.emit(
        narrowed ? "bound-narrowed" : "bound-widened",
        narrowed ? "narrowed" : "widened",
        `${bound} ${ob ?? "none"} -> ${nb ?? "none"}`,
        path,
        ro.ptr,
        rn.ptr,
      );
    }
    for (const keyword of WHOLE_ASSERTIONS) {
      const oa = vo.assertions.get(keyword);
      const na = vn.assertions.get(keyword);
      if (oa === na) continue;
      if (oa === undefined) this.emit("constraint-added", "narrowed", `${keyword} ${na} imposed`, path, ro.ptr, rn.ptr);
      else if (na === undefined)
        this.emit("constraint-removed", "widened", `${keyword} ${oa} lifted`, path, ro.ptr, rn.ptr);
      else this.emit("constraint-changed", "changed", `${keyword} ${oa} -> ${na}`, path, ro.ptr, rn.ptr);
    }

    if (vo.objectish || vn.objectish) this.compareObject(ro, rn, vo, vn, path);

    if (vo.items && vn.items) this.compare(vo.items, vn.items, join(path, "[]"));
    else if (vo.items && !vn.items && vn.types?.has("array"))
      this.emit("items-lifted", "widened", "item schema removed", join(path, "[]"), vo.items.ptr, rn.ptr);
    else if (!vo.items && vn.items && vo.types?.has("array"))
      this.emit("items-added", "narrowed", "item schema imposed", join(path, "[]"), ro.ptr, vn.items.ptr);
  }

  private compareObject(ro: Resolved, rn: Resolved, vo: View, vn: View, path: string): void {
    const names = [...new Set([...vo.props.keys(), ...vn.props.keys(), ...vo.required, ...vn.required])].sort(
      compareCodeUnits,
    );
    for (const name of names) {
      const op = vo.props.get(name);
      const np = vn.props.get(name);
      const oreq = vo.required.has(name);
      const nreq = vn.required.has(name);
      const field = join(path, name);
      const oldIn = op !== undefined || oreq;
      const newIn = np !== undefined || nreq;
      if (!oldIn && newIn) {
        if (nreq) this.emit("field-added-required", "narrowed", name, field, ro.ptr, np?.ptr ?? rn.ptr);
        else if (vo.additional.kind === "closed")
          this.emit(
            "field-added-optional",
            "widened",
            name,
            field,
            ro.ptr,
            np!.ptr,
            "OLD closed the object to unknown fields",
          );
        else this.emit("field-added-optional", "none", name, field, ro.ptr, np!.ptr);
        continue;
      }
      if (oldIn && !newIn) {
        if (oreq) this.emit("field-removed-required", "widened", name, field, op?.ptr ?? ro.ptr, rn.ptr);
        else if (vn.additional.kind === "closed")
          this.emit(
            "field-removed-optional",
            "narrowed",
            name,
            field,
            op!.ptr,
            rn.ptr,
            "NEW closes the object to unknown fields",
          );
        else this.emit("field-removed-optional", "none", name, field, op!.ptr, rn.ptr);
        continue;
      }
      if (!oreq && nreq)
        this.emit("field-made-required", "narrowed", name, field, op?.ptr ?? ro.ptr, np?.ptr ?? rn.ptr);
      if (oreq && !nreq) this.emit("field-made-optional", "widened", name, field, op?.ptr ?? ro.ptr, np?.ptr ?? rn.ptr);
      if (op && np) this.compare(op, np, field);
    }
    const oa = vo.additional;
    const na = vn.additional;
    if (oa.kind !== na.kind) {
      if (oa.kind === "closed")
        this.emit("unknown-fields-allowed", "widened", "unknown fields", join(path, "{}"), ro.ptr, rn.ptr);
      else if (na.kind === "closed")
        this.emit("unknown-fields-refused", "narrowed", "unknown fields", join(path, "{}"), ro.ptr, rn.ptr);
      else if (oa.kind === "node")
        this.emit(
          "map-values-lifted",
          "widened",
          "value schema of unknown fields",
          join(path, "{}"),
          oa.pos.ptr,
          rn.ptr,
        );
      else if (na.kind === "node")
        this.emit(
          "map-values-added",
          "narrowed",
          "value schema of unknown fields",
          join(path, "{}"),
          ro.ptr,
          na.pos.ptr,
        );
    } else if (oa.kind === "node" && na.kind === "node") {
      this.compare(oa.pos, na.pos, join(path, "{}"));
    }
  }
}
