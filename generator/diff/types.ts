// The shapes a schema diff reports: changes, each classified for clients and for servers, and the whole report.

export type Side = "client" | "server";
export type Verdict = "breaking" | "compatible";
/** How the set of accepted values moved: fewer (narrowed), more (widened), neither a subset (changed), or not at all. */
export type Effect = "narrowed" | "widened" | "changed" | "none";
export type Section = "methods" | "definitions" | "capabilities" | "envelope" | "api";

export interface Change {
  section: Section;
  /**
   * A method name, a shared definition (section "definitions"), a capabilities definition (ClientCapabilities) or
   * the envelope union (JSONRPCMessage).
   */
  subject: string;
  /** "method" for the message as a whole, "params", "result", "definition", "capability" or "message". */
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
  /**
   * Section "definitions" only: each method part (or capability tree, or the envelope) that reaches the changed
   * definition, with the verdict and reason that change has there; the row's verdict breaks a side when any does.
   */
  reachedBy?: Reach[];
}

/** One place a shared definition's change is felt: what the report would have said there on its own. */
export type Reach = Omit<Change, "kind" | "effect" | "reachedBy">;

/** A breaking change picked for the summary, with how many methods it reaches. */
export interface Important {
  section: Section;
  subject: string;
  part: string;
  path: string;
  kind: string;
  clients: Verdict;
  servers: Verdict;
  /** Methods it reaches: 1 for a method's own change, each reaching method for a shared definition, all for the envelope. */
  reach: number;
  reason: string;
}

export interface Summary {
  total: number;
  breakingClients: number;
  breakingServers: number;
  compatible: number;
  /** Every change counted once, by whom it breaks. */
  byVerdict: { both: number; clientsOnly: number; serversOnly: number; compatible: number };
  /** At most three breaking changes, most important first (see docs/diff.md: sides broken, then methods reached). */
  important: Important[];
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
  format: "mcpgen-diff/2";
  old: SideInfo;
  new: SideInfo;
  /** Facts about how the comparison was made: convention pairing, keywords not compared, results not found. */
  notes: string[];
  summary: Summary;
  changes: Change[];
}
