// Compares two models: methods, shared definitions, capabilities and the JSON-RPC envelope, into one sorted report.
import { compareCodeUnits } from "../json.js";
import type { Direction, MessageModel } from "../model.js";
import { escapeToken, getAt } from "../pointer.js";
import { classifierFor, label, type Flow } from "./classify.js";
import { Comparer, type FoundChange, type Walk } from "./compare.js";
import type { LoadedSide } from "./source.js";
import { summarize } from "./summary.js";
import type { Change, DiffReport, Section, Side } from "./types.js";

export interface DiffOptions {
  /** Report changed descriptions too (they never break anything). */
  includeDocs?: boolean;
}

const CAPABILITIES = ["ClientCapabilities", "ServerCapabilities"] as const;
const ENVELOPE = "JSONRPCMessage";

function sendersOf(direction: Direction): Side[] {
  return direction === "both" ? ["client", "server"] : direction === "client-to-server" ? ["client"] : ["server"];
}

const other = (side: Side): Side => (side === "client" ? "server" : "client");
const uniq = (sides: Side[]): Side[] => (["client", "server"] as const).filter((s) => sides.includes(s));

/** The longest prefix of a pointer that exists in the file, so every reported pointer can be followed. */
function clamp(root: Record<string, unknown>, pointer: string | null): string | null {
  if (pointer === null) return null;
  let p = pointer;
  while (p !== "" && getAt(root, p) === undefined) p = p.slice(0, p.lastIndexOf("/"));
  return p;
}

const SECTION_ORDER: Section[] = ["methods", "definitions", "capabilities", "envelope", "api"];
const PART_ORDER = [
  "method",
  "params",
  "result",
  "definition",
  "capability",
  "message",
  "export",
  "type",
  "signature",
  "member",
];

export function compareChanges(a: Change, b: Change): number {
  return (
    SECTION_ORDER.indexOf(a.section) - SECTION_ORDER.indexOf(b.section) ||
    compareCodeUnits(a.subject, b.subject) ||
    PART_ORDER.indexOf(a.part) - PART_ORDER.indexOf(b.part) ||
    compareCodeUnits(a.path, b.path) ||
    compareCodeUnits(a.kind, b.kind) ||
    compareCodeUnits(a.old ?? "", b.old ?? "") ||
    compareCodeUnits(a.new ?? "", b.new ?? "") ||
    compareCodeUnits(a.reason, b.reason)
  );
}

export function diffSides(oldSide: LoadedSide, newSide: LoadedSide, options: DiffOptions = {}): DiffReport {
  const out: FoundChange[] = [];
  const docs = options.includeDocs ?? false;
  const walk = (flow: Flow, stopAt: readonly string[], section: Section, subject: string, part: string): Comparer => {
    const w: Walk = {
      old: oldSide.env,
      new: newSide.env,
      classify: classifierFor(flow),
      stopAt: new Set(stopAt),
      docs,
      visited: new Set(),
      out,
    };
    return new Comparer(w, { section, subject, part });
  };
  const msgPtr = (side: LoadedSide, m: MessageModel): string => `${side.env.defsPointer}/${escapeToken(m.message)}`;
  const push = (c: Omit<Change, "section" | "part" | "path"> & Partial<Pick<Change, "part" | "path">>): void => {
    out.push({ section: "methods", part: "method", path: "", ...c });
  };

  const defPtr = (side: LoadedSide, name: string): string => `${side.env.defsPointer}/${escapeToken(name)}`;
  /**
   * A request's results as sets of definitions: a variant added (2026-07-28's InputRequiredResult beside
   * CallToolResult) or removed is a change of its own; the variants on both sides are compared field by field.
   */
  const compareResults = (
    method: string,
    olds: string[],
    news: string[],
    comparer: Comparer,
    classify: ReturnType<typeof classifierFor>,
  ): void => {
    const at = (what: string) => ({
      section: "methods" as const,
      subject: method,
      part: "result",
      path: `<${what}>`,
      what,
    });
    const addedVariants = news.filter((r) => !olds.includes(r));
    const removedVariants = olds.filter((r) => !news.includes(r));
    const common = olds.filter((r) => news.includes(r));
    if (common.length === 0 && olds.length === 1 && news.length === 1) {
      // One result on each side under another name: the same answer, renamed or replaced; compare its fields.
      comparer.compare(
        { node: { ref: olds[0]! }, ptr: defPtr(oldSide, olds[0]!) },
        { node: { ref: news[0]! }, ptr: defPtr(newSide, news[0]!) },
        "",
      );
      return;
    }
    for (const r of removedVariants) {
      const c = classify("result-variant-removed", "narrowed", at(r));
      out.push({
        section: "methods",
        subject: method,
        part: "result",
        path: `<${r}>`,
        kind: "result-variant-removed",
        effect: "narrowed",
        clients: c.clients,
        servers: c.servers,
        reason: c.reason,
        old: defPtr(oldSide, r),
        new: defPtr(newSide, news[0]!),
      });
    }
    for (const r of addedVariants) {
      const c = classify("result-variant-added", "widened", at(r));
      out.push({
        section: "methods",
        subject: method,
        part: "result",
        path: `<${r}>`,
        kind: "result-variant-added",
        effect: "widened",
        clients: c.clients,
        servers: c.servers,
        reason: c.reason,
        old: defPtr(oldSide, olds[0]!),
        new: defPtr(newSide, r),
      });
    }
    const several = olds.length > 1 || news.length > 1;
    for (const r of common)
      comparer.compare(
        { node: { ref: r }, ptr: defPtr(oldSide, r) },
        { node: { ref: r }, ptr: defPtr(newSide, r) },
        several ? `<${r}>` : "",
      );
  };

  const olds = new Map(oldSide.model.messages.map((m) => [m.method, m]));
  const news = new Map(newSide.model.messages.map((m) => [m.method, m]));
  const methods = [...new Set([...olds.keys(), ...news.keys()])].sort(compareCodeUnits);
  for (const method of methods) {
    const o = olds.get(method);
    const n = news.get(method);
    if (!o || !n) {
      const m = (o ?? n)!;
      const S = label(sendersOf(m.direction));
      const R = label(uniq(sendersOf(m.direction).map(other)));
      const isRequest = m.kind === "request";
      if (n) {
        push({
          subject: method,
          kind: "method-added",
          effect: "none",
          clients: "compatible",
          servers: "compatible",
          reason: isRequest
            ? `${m.kind} ${method} added (${m.direction}): ${R} built on OLD answer -32601 (method not found), which ${S} must expect`
            : `notification ${method} added (${m.direction}): ${R} built on OLD ignore notifications they do not know`,
          old: null,
          new: msgPtr(newSide, n),
        });
      } else {
        const breaking = sendersOf(m.direction);
        push({
          subject: method,
          kind: "method-removed",
          effect: "narrowed",
          clients: breaking.includes("client") ? "breaking" : "compatible",
          servers: breaking.includes("server") ? "breaking" : "compatible",
          reason: isRequest
            ? `${m.kind} ${method} removed (${m.direction}): ${R} built on NEW answer -32601 (method not found) to ${S} built on OLD`
            : `notification ${method} removed (${m.direction}): ${R} built on NEW ignore it, so what ${S} built on OLD signal with it is lost`,
          old: msgPtr(oldSide, o!),
          new: null,
        });
      }
      continue;
    }
    const oPtr = msgPtr(oldSide, o);
    const nPtr = msgPtr(newSide, n);
    if (o.kind !== n.kind) {
      push({
        subject: method,
        kind: "kind-changed",
        effect: "changed",
        clients: "breaking",
        servers: "breaking",
        reason: `${method} changed from ${o.kind} to ${n.kind}: peers built on OLD and on NEW frame it differently`,
        old: oPtr,
        new: nPtr,
      });
      continue;
    }
    if (o.direction !== n.direction) {
      const lost = sendersOf(o.direction).filter((s) => !sendersOf(n.direction).includes(s));
      const gained = sendersOf(n.direction).filter((s) => !sendersOf(o.direction).includes(s));
      const parts = [
        ...lost.map((s) => `${label([other(s)])} built on NEW no longer accept it from ${label([s])} built on OLD`),
        ...gained.map(
          (s) =>
            `${label([s])} built on NEW may now send it, and ${label([other(s)])} built on OLD answer -32601 or ignore it`,
        ),
      ];
      push({
        subject: method,
        kind: "direction-changed",
        effect: lost.length ? "narrowed" : "none",
        clients: lost.includes("client") ? "breaking" : "compatible",
        servers: lost.includes("server") ? "breaking" : "compatible",
        reason: `${method} direction ${o.direction} -> ${n.direction}: ${parts.join("; ")}`,
        old: oPtr,
        new: nPtr,
      });
    }
    const senders = uniq([...sendersOf(o.direction), ...sendersOf(n.direction)]);
    const receivers = uniq(senders.map(other));
    const paramsFlow: Flow = { senders, receivers };
    for (const c of negotiation(method, o, n, senders, receivers))
      push({ ...c, subject: method, old: oPtr, new: nPtr });
    if (o.paramsRequired !== n.paramsRequired) {
      const effect = n.paramsRequired ? "narrowed" : "widened";
      const classified = classifierFor(paramsFlow)(
        n.paramsRequired ? "field-made-required" : "field-made-optional",
        effect,
        { section: "methods", subject: method, part: "params", path: "params", what: "params" },
      );
      out.push({
        section: "methods",
        subject: method,
        part: "params",
        path: "",
        kind: n.paramsRequired ? "params-made-required" : "params-made-optional",
        effect,
        clients: classified.clients,
        servers: classified.servers,
        reason: classified.reason.replace(/^param params of (\S+) params/, "params of $1"),
        old: oPtr,
        new: nPtr,
      });
    }
    if (docs) {
      const od = oldSide.env.defs.get(o.message)?.description ?? "";
      const nd = newSide.env.defs.get(n.message)?.description ?? "";
      if (od !== nd)
        push({
          subject: method,
          kind: "description-changed",
          effect: "none",
          clients: "compatible",
          servers: "compatible",
          reason: `description of ${method} changed: documentation only`,
          old: oPtr,
          new: nPtr,
        });
    }
    const stop = [...CAPABILITIES];
    walk(paramsFlow, stop, "methods", method, "params").compare(
      { node: o.params, ptr: `${oPtr}/properties/params` },
      { node: n.params, ptr: `${nPtr}/properties/params` },
      "",
    );
    if (o.kind === "request" && o.results !== undefined && n.results !== undefined) {
      compareResults(
        method,
        o.results,
        n.results,
        walk({ senders: receivers, receivers: senders }, stop, "methods", method, "result"),
        classifierFor({ senders: receivers, receivers: senders }),
      );
    }
  }

  for (const name of CAPABILITIES) {
    const o = oldSide.env.defs.get(name);
    const n = newSide.env.defs.get(name);
    if (!o || !n) continue;
    const declarer: Side = name === "ClientCapabilities" ? "client" : "server";
    walk({ senders: [declarer], receivers: [other(declarer)] }, [], "capabilities", name, "capability").compare(
      { node: { ref: name }, ptr: `${oldSide.env.defsPointer}/${name}` },
      { node: { ref: name }, ptr: `${newSide.env.defsPointer}/${name}` },
      "",
    );
  }

  const notes = [...oldSide.notes, ...newSide.notes];
  if (oldSide.env.defs.has(ENVELOPE) && newSide.env.defs.has(ENVELOPE)) {
    walk(
      { senders: ["client", "server"], receivers: ["client", "server"] },
      [],
      "envelope",
      ENVELOPE,
      "message",
    ).compare(
      { node: { ref: ENVELOPE }, ptr: `${oldSide.env.defsPointer}/${ENVELOPE}` },
      { node: { ref: ENVELOPE }, ptr: `${newSide.env.defsPointer}/${ENVELOPE}` },
      "",
    );
  } else {
    notes.push(`${ENVELOPE} is not defined on both sides; the JSON-RPC envelope was not compared`);
  }
  for (const name of CAPABILITIES) {
    if (!oldSide.env.defs.has(name) || !newSide.env.defs.has(name))
      notes.push(`${name} is not defined on both sides; it was not compared`);
  }

  const located = out.map((c) => ({ ...c, old: clamp(oldSide.root, c.old), new: clamp(newSide.root, c.new) }));
  const seen = new Set<string>();
  const changes = reportSharedOnce(located)
    .sort(compareChanges)
    .filter((c) => {
      const key = JSON.stringify(c);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  const allMethods = new Set([...olds.keys(), ...news.keys()]).size;
  return {
    format: "mcpgen-diff/2",
    old: oldSide.info,
    new: newSide.info,
    notes,
    summary: summarize(changes, allMethods),
    changes,
  };
}

type Negotiated = Pick<Change, "kind" | "effect" | "clients" | "servers" | "reason" | "path">;

/**
 * What a method's negotiation gained or lost: the receiver capability it needs, and whether it can be
 * task-augmented. A peer built on OLD and one built on NEW then disagree about when it may be sent, or sent as a task.
 */
function negotiation(
  method: string,
  o: MessageModel,
  n: MessageModel,
  senders: Side[],
  receivers: Side[],
): Negotiated[] {
  const found: Negotiated[] = [];
  const verdicts = (breaking: Side[]): Pick<Change, "clients" | "servers"> => ({
    clients: breaking.includes("client") ? "breaking" : "compatible",
    servers: breaking.includes("server") ? "breaking" : "compatible",
  });
  const S = label(senders);
  const R = label(receivers);
  const oc = o.capability;
  const nc = n.capability;
  if (oc !== nc) {
    if (oc === undefined)
      found.push({
        kind: "method-capability-added",
        effect: "narrowed",
        ...verdicts(receivers),
        reason: `${method} now needs the receiver's ${nc}: ${S} built on NEW do not send it to ${R} built on OLD that serve it without declaring ${nc}`,
        path: "capability",
      });
    else if (nc === undefined)
      found.push({
        kind: "method-capability-removed",
        effect: "widened",
        ...verdicts(senders),
        reason: `${method} no longer needs the receiver's ${oc}: ${S} built on OLD still refuse it to ${R} built on NEW that serve it without declaring ${oc}`,
        path: "capability",
      });
    else
      found.push({
        kind: "method-capability-changed",
        effect: "changed",
        ...verdicts([...senders, ...receivers]),
        reason: `${method} needs the receiver's ${nc} instead of ${oc}: a peer built on OLD and one built on NEW look for different declarations`,
        path: "capability",
      });
  }
  const ot = o.task?.capability;
  const nt = n.task?.capability;
  if (ot !== nt) {
    if (ot === undefined)
      found.push({
        kind: "task-augmentation-added",
        effect: "none",
        ...verdicts([]),
        reason: `${method} may now be task-augmented (${nt}): ${S} built on NEW do so only when the receiver declares ${nt}, which ${R} built on OLD do not`,
        path: "task",
      });
    else if (nt === undefined)
      found.push({
        kind: "task-augmentation-removed",
        effect: "narrowed",
        ...verdicts(senders),
        reason: `${method} can no longer be task-augmented: ${S} built on OLD that ran it as a task get plain answers from ${R} built on NEW, which do not declare ${ot}`,
        path: "task",
      });
    else
      found.push({
        kind: "task-augmentation-changed",
        effect: "changed",
        ...verdicts(senders),
        reason: `${method} is task-augmented under ${nt} instead of ${ot}: ${S} built on OLD look for a declaration ${R} built on NEW do not make`,
        path: "task",
      });
  }
  return found;
}

/** Where a change is felt, for a shared definition's list: "tools/call params", "ClientCapabilities", "the envelope". */
function placeOf(c: Change): string {
  return c.section === "methods" ? `${c.subject} ${c.part}` : c.section === "envelope" ? "the envelope" : c.subject;
}

/** Whom a shared definition's change breaks, across the places that reach it. */
function spread(members: readonly Change[]): string {
  const n = members.length;
  const count = (side: "clients" | "servers"): string | undefined => {
    const k = members.filter((m) => m[side] === "breaking").length;
    return k === 0 ? undefined : `${side} in ${k === n ? "all" : k}`;
  };
  const parts = [count("clients"), count("servers")].filter((x) => x !== undefined);
  return parts.length
    ? `breaks ${parts.join(" and ")} of the ${n} places that reach it`
    : `compatible in all ${n} places that reach it`;
}

/**
 * The same change to a definition, found once per method (or capability tree, or the envelope) that reaches it,
 * becomes one row under the definition: it breaks a side when it does so anywhere, and `reachedBy` keeps each
 * place's own verdict and reason. A change inside a definition only one place reaches stays with that place.
 */
function reportSharedOnce(found: FoundChange[]): Change[] {
  const groups = new Map<string, FoundChange[]>();
  for (const c of found) {
    if (!c.inDefinition) continue;
    const key = `${c.kind}\0${c.inDefinition.name}\0${c.inDefinition.path}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const shared = new Set<FoundChange>();
  const rows: Change[] = [];
  for (const members of groups.values()) {
    if (new Set(members.map(placeOf)).size < 2) continue;
    for (const m of members) shared.add(m);
    const ordered = [...members].sort(compareChanges);
    const first = ordered[0]!;
    const where = first.inDefinition!;
    rows.push({
      section: "definitions",
      subject: where.name,
      part: "definition",
      path: where.path,
      kind: first.kind,
      effect: first.effect,
      clients: ordered.some((m) => m.clients === "breaking") ? "breaking" : "compatible",
      servers: ordered.some((m) => m.servers === "breaking") ? "breaking" : "compatible",
      reason: `${where.what}: ${spread(ordered)}`,
      old: first.old,
      new: first.new,
      reachedBy: ordered.map((m) => ({
        section: m.section,
        subject: m.subject,
        part: m.part,
        path: m.path,
        clients: m.clients,
        servers: m.servers,
        reason: m.reason,
        old: m.old,
        new: m.new,
      })),
    });
  }
  for (const c of found) {
    if (shared.has(c)) continue;
    const { inDefinition: _where, ...change } = c;
    rows.push(change);
  }
  return rows;
}
