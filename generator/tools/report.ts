// The shapes of a catalogue diff: each change with its verdict for callers, each tool's classes, and the summary.
import type { Effect, Verdict } from "../diff/types.js";

export type CatalogueSection = "server" | "tools" | "prompts" | "resourceTemplates";

/**
 * What happened to one tool (prompt, resource template) as a whole; docs/diff.md defines each. Breaking for callers:
 * removed, input-narrowed, input-changed, output-widened, output-changed (and the few metadata kinds that are).
 */
export type SubjectClass =
  | "added"
  | "removed"
  | "input-narrowed"
  | "input-widened"
  | "input-changed"
  | "output-widened"
  | "output-narrowed"
  | "output-changed"
  | "output-extended"
  | "description-only"
  | "metadata-changed";

export interface CatalogueChange {
  section: CatalogueSection;
  /** The tool's or prompt's name, the template's uriTemplate, or "server". */
  subject: string;
  /** "tool" (the tool as a whole or its metadata), "input", "output", "prompt", "arguments", "template" or "server". */
  part: string;
  /** Where inside the part: dotted fields, `[]` for items, `{}` for map values, `<Member>` for union members. */
  path: string;
  /** Stable identifier of the kind of change (docs/diff.md lists them). */
  kind: string;
  effect: Effect;
  /** Whether callers built on OLD (code generated from the OLD catalogue, say) break against a server that is NEW. */
  callers: Verdict;
  reason: string;
  /** JSON pointers into the OLD and NEW catalogues; null where the thing is absent. */
  old: string | null;
  new: string | null;
}

export interface SubjectSummary {
  section: CatalogueSection;
  subject: string;
  classes: SubjectClass[];
  callers: Verdict;
}

export interface CatalogueSideInfo {
  /** As named on the command line, or `live: <server>` for the catalogue `tools check` pulls. */
  file: string;
  server: { name: string; version: string };
  protocolVersion: string;
}

export interface CatalogueReport {
  format: "mcpgen-catalogue-diff/1";
  old: CatalogueSideInfo;
  new: CatalogueSideInfo;
  /** How the comparison was made: keywords not compared, references not fetched. */
  notes: string[];
  summary: {
    total: number;
    breaking: number;
    compatible: number;
    /** At most three breaking changes, removals first, then in report order. */
    important: Pick<CatalogueChange, "section" | "subject" | "part" | "path" | "kind" | "reason">[];
  };
  subjects: SubjectSummary[];
  changes: CatalogueChange[];
}
