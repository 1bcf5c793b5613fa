// Renders a catalogue diff as terminal text, stable JSON, or Markdown for a pull request comment; and its exit code.
import type { DiffFormat, FailOn } from "../diff/format.js";
import { canonicalJson } from "../json.js";
import type { CatalogueChange, CatalogueReport, CatalogueSideInfo, SubjectSummary } from "./report.js";

/** Exit code for --fail-on, as for schemas: 1 when the report holds what the policy fails on, else 0. */
export function catalogueExitCode(report: CatalogueReport, failOn: FailOn): number {
  if (failOn === "none") return 0;
  if (failOn === "any") return report.changes.length > 0 ? 1 : 0;
  return report.summary.breaking > 0 ? 1 : 0;
}

const SECTION_NAMES = { server: "server", tools: "tool", prompts: "prompt", resourceTemplates: "resource template" };

const title = (s: Pick<SubjectSummary, "section" | "subject">): string =>
  s.section === "server" ? "server" : `${SECTION_NAMES[s.section]} ${s.subject}`;

const sideLine = (side: CatalogueSideInfo): string =>
  `${side.file} (${`${side.server.name} ${side.server.version}`.trim() || "unnamed server"}, protocol ${side.protocolVersion || "unknown"})`;

const at = (p: string | null): string => (p === null ? "-" : `#${p}`);
const tag = (c: Pick<CatalogueChange, "callers">): string => (c.callers === "breaking" ? "BREAKING" : "compatible");
const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

function summaryLine(report: CatalogueReport): string {
  const s = report.summary;
  return `${plural(s.total, "change")}: ${s.breaking} breaking for callers, ${s.compatible} compatible`;
}

function grouped(report: CatalogueReport): { subject: SubjectSummary; changes: CatalogueChange[] }[] {
  return report.subjects.map((subject) => ({
    subject,
    changes: report.changes.filter((c) => c.section === subject.section && c.subject === subject.subject),
  }));
}

export function formatCatalogueText(report: CatalogueReport): string {
  const lines = [`OLD ${sideLine(report.old)}`, `NEW ${sideLine(report.new)}`];
  if (report.changes.length > 0) lines.push("", `summary: ${summaryLine(report)}`);
  if (report.summary.important.length > 0) {
    lines.push("most important:");
    report.summary.important.forEach((c, i) => lines.push(`  ${i + 1}. ${title(c)}: ${c.reason}`));
  }
  if (report.notes.length > 0) lines.push("");
  for (const n of report.notes) lines.push(`note: ${n}`);
  for (const { subject, changes } of grouped(report)) {
    lines.push("", `${title(subject)}: ${subject.classes.join(", ")} (${tag(subject)})`);
    for (const c of changes) {
      lines.push(`  ${tag(c).padEnd(10)} ${c.part.padEnd(9)} ${c.reason}`);
      lines.push(`  ${"".padEnd(10)} ${"".padEnd(9)} old ${at(c.old)}  new ${at(c.new)}`);
    }
  }
  lines.push("", report.changes.length > 0 ? summaryLine(report) : "no changes");
  return lines.join("\n");
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (s: string | null): string => (s === null ? "–" : `\`#${s.replace(/`/g, "'")}\``);

export function formatCatalogueMarkdown(report: CatalogueReport): string {
  const lines = [
    "### mcpgen diff (tool catalogues)",
    "",
    `**OLD** \`${cell(sideLine(report.old))}\` · **NEW** \`${cell(sideLine(report.new))}\``,
    "",
    report.changes.length > 0
      ? `**${summaryLine(report)}**${report.summary.breaking === 0 ? " (nothing breaks)" : ""}`
      : "**No changes.**",
  ];
  if (report.summary.important.length > 0) {
    lines.push("", "Most important:", "");
    report.summary.important.forEach((c, i) => lines.push(`${i + 1}. \`${title(c)}\`: ${cell(c.reason)}`));
  }
  if (report.notes.length > 0) {
    lines.push("", "<details><summary>How the catalogues were compared</summary>", "");
    for (const n of report.notes) lines.push(`- ${cell(n)}`);
    lines.push("", "</details>");
  }
  for (const { subject, changes } of grouped(report)) {
    lines.push(
      "",
      `#### \`${title(subject)}\`: ${subject.classes.join(", ")}${subject.callers === "breaking" ? " (**breaking**)" : ""}`,
      "",
      "| Callers | Part | Change | OLD | NEW |",
      "|---|---|---|---|---|",
    );
    for (const c of changes)
      lines.push(
        `| ${c.callers === "breaking" ? "**breaking**" : "compatible"} | ${c.part} | ${cell(c.reason)} | ${code(c.old)} | ${code(c.new)} |`,
      );
  }
  return lines.join("\n");
}

export function formatCatalogueReport(report: CatalogueReport, format: DiffFormat): string {
  if (format === "json") return canonicalJson(report).trimEnd();
  return format === "markdown" ? formatCatalogueMarkdown(report) : formatCatalogueText(report);
}
