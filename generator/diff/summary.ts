// The summary block of a diff report: counts by verdict and the few breaking changes a reviewer should read first.
import type { Change, Important, Summary } from "./types.js";

/** How many breaking changes the summary names. */
export const IMPORTANT_COUNT = 3;

/**
 * How many methods a change reaches: a shared definition each method that reaches it, the JSON-RPC envelope every
 * method (each message passes through it), anything else one.
 */
export function reachOf(change: Change, allMethods: number): number {
  if (change.section === "envelope") return allMethods;
  if (change.reachedBy === undefined) return 1;
  if (change.reachedBy.some((r) => r.section === "envelope")) return allMethods;
  return Math.max(1, new Set(change.reachedBy.filter((r) => r.section === "methods").map((r) => r.subject)).size);
}

const sidesBroken = (c: Change): number => (c.clients === "breaking" ? 1 : 0) + (c.servers === "breaking" ? 1 : 0);

/** Kinds that change what a method is or what answers it, before those that change one field: ties are rare. */
const SEVERE = new Set([
  "method-removed",
  "kind-changed",
  "direction-changed",
  "result-variant-added",
  "result-variant-removed",
  "params-made-required",
]);

/**
 * Counts by verdict, and the most important breaking changes: ranked by the sides broken (1 or 2) times the
 * methods reached, then changes to what a method is or answers with before changes to a field, then report
 * order. What breaks both peers of every method stops an upgrade; what one method's clients must add is a line
 * in a changelog.
 */
export function summarize(changes: readonly Change[], allMethods: number): Summary {
  const both = changes.filter((c) => c.clients === "breaking" && c.servers === "breaking").length;
  const clientsOnly = changes.filter((c) => c.clients === "breaking" && c.servers !== "breaking").length;
  const serversOnly = changes.filter((c) => c.clients !== "breaking" && c.servers === "breaking").length;
  const compatible = changes.length - both - clientsOnly - serversOnly;
  const important: Important[] = changes
    .map((c, order) => ({ c, order, reach: reachOf(c, allMethods) }))
    .filter(({ c }) => sidesBroken(c) > 0)
    .sort(
      (a, b) =>
        sidesBroken(b.c) * b.reach - sidesBroken(a.c) * a.reach ||
        Number(SEVERE.has(b.c.kind)) - Number(SEVERE.has(a.c.kind)) ||
        a.order - b.order,
    )
    .slice(0, IMPORTANT_COUNT)
    .map(({ c, reach }) => ({
      section: c.section,
      subject: c.subject,
      part: c.part,
      path: c.path,
      kind: c.kind,
      clients: c.clients,
      servers: c.servers,
      reach,
      reason: c.reason,
    }));
  return {
    total: changes.length,
    breakingClients: both + clientsOnly,
    breakingServers: both + serversOnly,
    compatible,
    byVerdict: { both, clientsOnly, serversOnly, compatible },
    important,
  };
}
