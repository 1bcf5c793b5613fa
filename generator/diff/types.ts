// The shapes a schema diff reports: changes, each classified for clients and for servers, and the whole report.

export type Side = "client" | "server";
export type Verdict = "breaking" | "compatible";
/** How the set of accepted values moved: fewer (narrowed), more (widened), neither a subset (changed), or not at all. */
export type Effect = "narrowed" | "widened" | "changed" | "none";
export type Section = "methods" | "capabilities" | "envelope" | "api";

export interface Change {
  section: Section;
  /** A method name, a capabilities definition (ClientCapabilities) or the envelope union (JSONRPCMessage). */
  subject: string;
  /** "method" for the message as a whole, "params", "result", "capability" or "message". */
  part: string;
  /** Where inside the part: dotted fields, `[]` for array items, `{}` for map values, `<Member>` for union members. */
  path: string;
  /** Stable identifier of the kind of change, e.g. "field-added-required" (docs/diff.md lists them). */
  kind: string;
  effect: Effect;
  clients: Verdict;
  servers: Verdict;
  /** One line: what changed and why it matters (or not) to each side. */
  reason: string;
  /** JSON pointers into the OLD and NEW schema files (for --api: file:line); null where the thing does not exist on that side. */
  old: string | null;
  new: string | null;
}

export interface SideInfo {
  /** The file as named on the command line (a path or git:REV:path). */
  file: string;
  /** "sidecar" when a methods sidecar was read, "convention" when methods were derived from the schema's unions; absent for --api. */
  methods?: "sidecar" | "convention";
  /** The sidecar read, when methods is "sidecar". */
  methodsFile?: string;
}

export interface DiffReport {
  format: "mcpgen-diff/1";
  old: SideInfo;
  new: SideInfo;
  /** Facts about how the comparison was made: convention pairing, keywords not compared, results not found. */
  notes: string[];
  summary: { total: number; breakingClients: number; breakingServers: number; compatible: number };
  changes: Change[];
}
