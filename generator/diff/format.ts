// Renders a diff report as terminal text (summary first, then grouped by method or shared definition), stable
// JSON, or Markdown for a pull request comment.
import { canonicalJson } from "../json.js";
import type { Change, DiffReport, Important, SideInfo } from "./types.js";

export type DiffFormat = "text" | "json" | "markdown";
export type FailOn = "breaking" | "any" | "none";

/** Exit code for --fail-on: 1 when the report holds what the policy fails on, else 0. */
export function exitCodeFor(report: DiffReport, failOn: FailOn): number {
  if (failOn === "none") return 0;
  if (failOn === "any") return report.changes.length > 0 ? 1 : 0;
  return report.summary.breakingClients + report.summary.breakingServers > 0 ? 1 : 0;
}

function verdictTag(c: Pick<Change, "clients" | "servers">): string {
  const who = [c.clients === "breaking" ? "clients" : "", c.servers === "breaking" ? "servers" : ""].filter(Boolean);
  return who.length ? `BREAKS ${who.join("+")}` : "compatible";
}

const at = (p: string | null): string => (p === null ? "-" : p.startsWith("/") || p === "" ? `#${p}` : p);

function groups(report: DiffReport): { title: string; changes: Change[] }[] {
  const out: { title: string; changes: Change[] }[] = [];
  for (const c of report.changes) {
    const title =
      c.section === "methods" || c.section === "api"
        ? c.subject
        : c.section === "definitions"
          ? `${c.subject} (shared definition)`
          : `${c.section}: ${c.subject}`;
    const last = out[out.length - 1];
    if (last && last.title === title) last.changes.push(c);
    else out.push({ title, changes: [c] });
  }
  return out;
}

function sideLine(side: SideInfo): string {
  if (side.methods === undefined) return side.file;
  return `${side.file} (methods: ${side.methods === "sidecar" ? `sidecar ${side.methodsFile}` : "derived by convention"})`;
}

function summaryLine(report: DiffReport): string {
  const s = report.summary;
  return `${s.total} change${s.total === 1 ? "" : "s"}: ${s.breakingClients} break clients, ${s.breakingServers} break servers, ${s.compatible} compatible`;
}

function verdictCounts(report: DiffReport): string {
  const v = report.summary.byVerdict;
  return `${v.both} break clients and servers, ${v.clientsOnly} clients only, ${v.serversOnly} servers only; ${v.compatible} compatible`;
}

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

/** Where a summary's important change lies: a method's part, a shared definition, a capability tree, the envelope. */
function placeTitle(i: Important): string {
  if (i.section === "methods") return `${i.subject} ${i.part}`;
  if (i.section === "definitions") return `${i.subject} (shared)`;
  return i.section === "envelope" ? `envelope ${i.subject}` : i.subject;
}

/** Places a shared definition's change reaches, as one list. */
const reachedList = (c: Change): string =>
  (c.reachedBy ?? [])
    .map((r) => (r.section === "methods" ? `${r.subject} ${r.part}` : `${r.subject} ${r.path}`))
    .join(", ");

export function formatText(report: DiffReport): string {
  const lines = [`OLD ${sideLine(report.old)}`, `NEW ${sideLine(report.new)}`];
  if (report.changes.length) {
    lines.push("", `summary: ${plural(report.summary.total, "change")}: ${verdictCounts(report)}`);
    if (report.summary.important.length) {
      lines.push("most important (sides broken times methods reached):");
      report.summary.important.forEach((i, n) =>
        lines.push(`  ${n + 1}. ${verdictTag(i)} ${placeTitle(i)}: ${i.reason} [${plural(i.reach, "method")}]`),
      );
    }
  }
  if (report.notes.length) lines.push("");
  for (const n of report.notes) lines.push(`note: ${n}`);
  for (const g of groups(report)) {
    lines.push("", g.title);
    for (const c of g.changes) {
      lines.push(`  ${verdictTag(c).padEnd(22)} ${c.part.padEnd(10)} ${c.reason}`);
      if (c.reachedBy) lines.push(`  ${"".padEnd(22)} ${"".padEnd(10)} reached by ${reachedList(c)}`);
      lines.push(`  ${"".padEnd(22)} ${"".padEnd(10)} old ${at(c.old)}  new ${at(c.new)}`);
    }
  }
  lines.push("", report.changes.length ? summaryLine(report) : "no changes");
  return lines.join("\n");
}

export function formatJson(report: DiffReport): string {
  return canonicalJson(report).trimEnd();
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (s: string | null): string =>
  s === null ? "–" : `\`${s === "" || s.startsWith("/") ? "#" : ""}${s.replace(/`/g, "'")}\``;

export function formatMarkdown(report: DiffReport): string {
  const lines = ["### mcpgen diff", "", `**OLD** \`${report.old.file}\` · **NEW** \`${report.new.file}\``, ""];
  const broken = report.summary.breakingClients + report.summary.breakingServers > 0;
  lines.push(
    report.changes.length ? `**${summaryLine(report)}**${broken ? "" : " (nothing breaks)"}` : "**No changes.**",
  );
  if (report.changes.length) {
    const v = report.summary.byVerdict;
    lines.push(
      "",
      "| Breaks clients and servers | Clients only | Servers only | Compatible |",
      "|---|---|---|---|",
      `| ${v.both} | ${v.clientsOnly} | ${v.serversOnly} | ${v.compatible} |`,
    );
  }
  if (report.summary.important.length) {
    lines.push("", "Most important (sides broken times methods reached):", "");
    report.summary.important.forEach((i, n) =>
      lines.push(
        `${n + 1}. **${verdictTag(i)}** \`${placeTitle(i)}\`: ${cell(i.reason)} (${plural(i.reach, "method")})`,
      ),
    );
  }
  if (report.notes.length) {
    lines.push("", "<details><summary>How the schemas were compared</summary>", "");
    for (const n of report.notes) lines.push(`- ${cell(n)}`);
    lines.push("", "</details>");
  }
  for (const g of groups(report)) {
    lines.push("", `#### \`${g.title}\``, "", "| Clients | Servers | Change | OLD | NEW |", "|---|---|---|---|---|");
    for (const c of g.changes) {
      const v = (x: string): string => (x === "breaking" ? "**breaking**" : "compatible");
      const reached = c.reachedBy ? ` — reached by ${cell(reachedList(c))}` : "";
      lines.push(
        `| ${v(c.clients)} | ${v(c.servers)} | ${cell(c.reason)}${reached} | ${code(c.old)} | ${code(c.new)} |`,
      );
    }
  }
  return lines.join("\n");
}

export function formatReport(report: DiffReport, format: DiffFormat): string {
  return format === "json" ? formatJson(report) : format === "markdown" ? formatMarkdown(report) : formatText(report);
}
