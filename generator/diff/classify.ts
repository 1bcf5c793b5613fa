// The classification rules: who breaks when a payload's accepted values move, and the one-line reason (docs/diff.md).
import type { Effect, Section, Side, Verdict } from "./types.js";

/** Who sends the payload being compared and who receives it. */
export interface Flow {
  senders: Side[];
  receivers: Side[];
}

export interface At {
  section: Section;
  subject: string;
  part: string;
  path: string;
  /** A short phrase for the thing that changed (a field name, "type integer -> number", a union member). */
  what: string;
}

export interface Classified {
  clients: Verdict;
  servers: Verdict;
  reason: string;
  /** Set when the rule renames the kind (e.g. a field added under capabilities is "capability-added"). */
  kind?: string;
  effect?: Effect;
}

export type Classifier = (kind: string, effect: Effect, at: At) => Classified;

export const label = (sides: readonly Side[]): string =>
  sides.length === 2 ? "peers" : sides[0] === "client" ? "clients" : "servers";

/**
 * The core rule. A sender built on OLD talks to a receiver built on NEW and the other way round. Narrowing what the
 * receiver accepts breaks the OLD sender (it may still send what NEW refuses); widening it breaks the OLD receiver
 * (a NEW sender may send what it does not expect); a change that is neither breaks both.
 */
export function verdicts(effect: Effect, flow: Flow): { clients: Verdict; servers: Verdict } {
  const breaking = new Set<Side>();
  if (effect === "narrowed" || effect === "changed") flow.senders.forEach((s) => breaking.add(s));
  if (effect === "widened" || effect === "changed") flow.receivers.forEach((s) => breaking.add(s));
  return {
    clients: breaking.has("client") ? "breaking" : "compatible",
    servers: breaking.has("server") ? "breaking" : "compatible",
  };
}

function noun(part: string): string {
  return part === "params"
    ? "param"
    : part === "result"
      ? "result field"
      : part === "capability"
        ? "capability"
        : "field";
}

/** The union's own path: a member's path minus its `<Member>` segment. */
function unionAt(path: string): string {
  const up = path.replace(/\.?<[^<>]*>$/, "");
  return up === "" ? "the top" : up;
}

function where(at: At): string {
  return at.part === "params" || at.part === "result" ? `${at.subject} ${at.part}` : at.subject;
}

/** What changed and, after the colon, what it means for the senders S and receivers R of the payload. */
function phrase(kind: string, effect: Effect, at: At, S: string, R: string): [what: string, consequence: string] {
  const n = noun(at.part);
  const p = at.path;
  switch (kind) {
    case "field-added-required":
      return [`required ${n} ${p} added to ${where(at)}`, `${S} built on OLD do not send it`];
    case "field-added-optional":
      return [
        `optional ${n} ${p} added to ${where(at)}`,
        effect === "none"
          ? `${R} built on OLD ignore fields they do not know`
          : `${R} built on OLD refuse unknown fields`,
      ];
    case "field-removed-required":
      return [`required ${n} ${p} removed from ${where(at)}`, `${R} built on OLD expect it`];
    case "field-removed-optional":
      return [
        `optional ${n} ${p} removed from ${where(at)}`,
        effect === "none"
          ? `${R} built on OLD never relied on it, ${R} built on NEW ignore it`
          : `${R} built on NEW refuse it, ${S} built on OLD may send it`,
      ];
    case "field-made-required":
      return [`${n} ${p} of ${where(at)} made required`, `${S} built on OLD may leave it out`];
    case "field-made-optional":
      return [`${n} ${p} of ${where(at)} made optional`, `${R} built on OLD expect it`];
    case "union-member-added":
      return [`${at.what} added to the union at ${unionAt(p)} of ${where(at)}`, `${R} built on OLD do not handle it`];
    case "union-member-removed":
      return [
        `${at.what} removed from the union at ${unionAt(p)} of ${where(at)}`,
        `${S} built on OLD may still send it`,
      ];
    case "result-variant-added":
      return [`result ${at.what} added to ${at.subject}`, `${R} built on OLD do not expect it as an answer`];
    case "result-variant-removed":
      return [`result ${at.what} removed from ${at.subject}`, `${S} built on OLD may still answer with it`];
    case "capability-added":
      return [`capability ${p} added to ${where(at)}`, `${R} built on OLD ignore capabilities they do not know`];
    case "capability-removed":
      return [`capability ${p} removed from ${where(at)}`, `${R} built on NEW no longer negotiate it`];
    case "description-changed":
      return [`description of ${p || "the whole"} in ${where(at)} changed`, "documentation only"];
    default: {
      const subject = `${p || "value"} of ${where(at)}: ${at.what}`;
      if (effect === "narrowed") return [subject, `${S} built on OLD may send values ${R} built on NEW refuse`];
      if (effect === "widened") return [subject, `${R} built on OLD may receive values they do not accept`];
      if (effect === "changed") return [subject, "peers built on OLD and on NEW disagree on the value"];
      return [subject, "no effect on the wire"];
    }
  }
}

/** What changed, without whom it breaks: the first half of a reason, for a change reported under a shared definition. */
export function describeChange(kind: string, effect: Effect, at: At): string {
  return phrase(kind, effect, at, "senders", "receivers")[0];
}

export function classifierFor(flow: Flow): Classifier {
  const S = label(flow.senders);
  const R = label(flow.receivers);
  return (kind, effect, at) => {
    const p = at.path;
    if (at.part === "capability" && (kind.startsWith("field-added") || kind.startsWith("field-removed"))) {
      if (kind.startsWith("field-added")) {
        return {
          ...verdicts("none", flow),
          kind: "capability-added",
          effect: "none",
          reason: `capability ${p} added to ${at.subject}: ${R} built on OLD ignore capabilities they do not know, ${S} built on OLD just do not declare it`,
        };
      }
      return {
        ...verdicts("narrowed", flow),
        kind: "capability-removed",
        effect: "narrowed",
        reason: `capability ${p} removed from ${at.subject}: ${R} built on NEW no longer negotiate it, so what ${S} built on OLD advertise goes unused`,
      };
    }
    const [what, consequence] = phrase(kind, effect, at, S, R);
    return { ...verdicts(effect, flow), reason: `${what}: ${consequence}` };
  };
}
