// Compares two catalogues: each tool's arguments and structured result through the schema diff's comparison, classified for callers.
import type { Classifier } from "../diff/classify.js";
import { Comparer, type FoundChange, type Walk } from "../diff/compare.js";
import type { Effect, Verdict } from "../diff/types.js";
import { canonicalJson, compareCodeUnits, isObject } from "../json.js";
import { escapeToken, getAt, toPointer, unescapeToken } from "../pointer.js";
import {
  CATALOGUE_FORMAT,
  CATALOGUE_MARK,
  promptName,
  templateKey,
  toolName,
  type Catalogue,
  type JsonObject,
} from "./catalogue.js";
import type {
  CatalogueChange,
  CatalogueReport,
  CatalogueSection,
  CatalogueSideInfo,
  SubjectClass,
  SubjectSummary,
} from "./report.js";
import { comparableSchema } from "./schema-nodes.js";
import { ANNOTATION_KEYWORDS, walkSchema } from "./schema-walk.js";

export interface CatalogueSide {
  info: CatalogueSideInfo;
  catalogue: Catalogue;
}

type Part = "input" | "output";

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
const verdictOf = (breaking: boolean): Verdict => (breaking ? "breaking" : "compatible");

/** What the part of a tool is called in a sentence. */
const partName = (part: Part, tool: string): string =>
  part === "input" ? `the arguments of ${tool}` : `the structured result of ${tool}`;

/**
 * Effects as callers feel them. A caller sends the arguments and reads the structured result, so narrowing the
 * arguments and widening the result break it. A property removed from the arguments is a narrowing however the
 * schema treats unknown keys (servers commonly refuse or drop what they no longer declare); one added as optional
 * widens them; one dropped from the result (optional) narrows what callers read.
 */
function callerEffect(kind: string, effect: Effect, part: Part): Effect {
  if (part === "input" && (kind === "field-removed-optional" || kind === "field-removed-required")) return "narrowed";
  if (part === "input" && kind === "field-added-optional" && effect === "none") return "widened";
  if (part === "output" && kind === "field-removed-optional" && effect === "none") return "narrowed";
  return effect;
}

function breaksCallers(kind: string, effect: Effect, part: Part): boolean {
  if (kind === "description-changed") return false;
  return effect === "changed" || (part === "input" ? effect === "narrowed" : effect === "widened");
}

/** The reason of a schema change, for callers. */
function phrase(kind: string, effect: Effect, path: string, what: string, part: Part, tool: string): string {
  const whole = partName(part, tool);
  const noun = part === "input" ? "argument" : "result field";
  switch (kind) {
    case "field-added-required":
      return part === "input"
        ? `required argument ${path} added to ${tool}: callers built on OLD do not send it`
        : `required result field ${path} added to ${whole}: callers built on OLD get it and may ignore it`;
    case "field-added-optional":
      if (part === "input")
        return `optional argument ${path} added to ${tool}: callers built on OLD just do not send it`;
      return effect === "none"
        ? `optional result field ${path} added to ${whole}: callers built on OLD ignore it`
        : `optional result field ${path} added to ${whole}: callers built on OLD refuse fields their outputSchema closed out`;
    case "field-removed-required":
    case "field-removed-optional":
      return part === "input"
        ? `argument ${path} removed from ${tool}: callers built on OLD may still send it`
        : kind === "field-removed-required"
          ? `required result field ${path} removed from ${whole}: callers built on OLD expect it`
          : `optional result field ${path} removed from ${whole}: callers built on OLD handle its absence`;
    case "field-made-required":
      return part === "input"
        ? `argument ${path} of ${tool} made required: callers built on OLD may leave it out`
        : `result field ${path} of ${whole} made required: callers built on OLD handle it either way`;
    case "field-made-optional":
      return part === "input"
        ? `argument ${path} of ${tool} made optional: callers built on OLD send it anyway`
        : `result field ${path} of ${whole} no longer required: callers built on OLD expect it`;
    case "description-changed":
      return `description of ${path || "the schema"} in ${whole} changed: documentation only`;
    default: {
      const subject = `${path || `the whole ${noun === "argument" ? "arguments object" : "structured result"}`} of ${whole}: ${what}`;
      if (effect === "narrowed")
        return part === "input"
          ? `${subject}: callers built on OLD may send values the server now refuses`
          : `${subject}: the server returns less than before, which callers built on OLD accept`;
      if (effect === "widened")
        return part === "input"
          ? `${subject}: the server accepts more than before`
          : `${subject}: callers built on OLD may receive values they do not expect`;
      if (effect === "changed")
        return part === "input"
          ? `${subject}: callers built on OLD send values the server now refuses`
          : `${subject}: callers built on OLD receive values they do not expect`;
      return `${subject}: no effect on which values are accepted`;
    }
  }
}

function classifierFor(part: Part, tool: string): Classifier {
  return (kind, effect, at) => {
    const felt = callerEffect(kind, effect, part);
    const verdict = verdictOf(breaksCallers(kind, felt, part));
    return {
      clients: verdict,
      servers: verdict,
      effect: felt,
      reason: phrase(kind, felt, at.path, at.what, part, tool),
    };
  };
}

/** The longest prefix of a pointer that exists in the file, so every reported pointer can be followed. */
function clamp(root: unknown, pointer: string | null): string | null {
  if (pointer === null) return null;
  let p = pointer;
  while (p !== "" && getAt(root, p) === undefined) p = p.slice(0, p.lastIndexOf("/"));
  return p;
}

/** A schema without its annotations: what is left decides which values it accepts. */
function assertions(schema: unknown): string {
  const copy = structuredClone(schema);
  walkSchema(copy, (node) => {
    for (const key of Object.keys(node)) if (ANNOTATION_KEYWORDS.has(key)) delete node[key];
  });
  return canonicalJson(copy);
}

const listFile = (c: Catalogue): Record<string, unknown> => ({
  [CATALOGUE_MARK]: CATALOGUE_FORMAT,
  server: c.server,
  protocolVersion: c.protocolVersion,
  tools: c.tools,
  prompts: c.prompts,
  resourceTemplates: c.resourceTemplates,
});

class CatalogueDiff {
  readonly changes: CatalogueChange[] = [];
  readonly notes: string[] = [];
  private readonly oldRoot: Record<string, unknown>;
  private readonly newRoot: Record<string, unknown>;

  constructor(
    private readonly o: Catalogue,
    private readonly n: Catalogue,
  ) {
    this.oldRoot = listFile(o);
    this.newRoot = listFile(n);
  }

  private push(change: Omit<CatalogueChange, "old" | "new">, oldPtr: string | null, newPtr: string | null): void {
    this.changes.push({ ...change, old: clamp(this.oldRoot, oldPtr), new: clamp(this.newRoot, newPtr) });
  }

  server(): void {
    const rows: [string, string, string, string][] = [
      ["server-name-changed", "/server/name", this.o.server.name, this.n.server.name],
      ["server-version-changed", "/server/version", this.o.server.version, this.n.server.version],
      ["protocol-version-changed", "/protocolVersion", this.o.protocolVersion, this.n.protocolVersion],
    ];
    for (const [kind, ptr, before, after] of rows) {
      if (before === after) continue;
      const what = kind === "protocol-version-changed" ? "negotiated protocol version" : `server ${kind.split("-")[1]}`;
      this.push(
        {
          section: "server",
          subject: "server",
          part: "server",
          path: ptr.slice(1).replace("/", "."),
          kind,
          effect: "none",
          callers: "compatible",
          reason: `${what} ${JSON.stringify(before)} -> ${JSON.stringify(after)}: the tools are compared on their own`,
        },
        ptr,
        ptr,
      );
    }
  }

  /** Entries of both lists paired by key, in key order, each with its pointer. */
  private pairs(list: "tools" | "prompts" | "resourceTemplates", key: (o: JsonObject) => string) {
    const index = (entries: JsonObject[]) =>
      new Map(entries.map((entry, i) => [key(entry), { entry, ptr: toPointer([list, i]) }]));
    const olds = index(this.o[list]);
    const news = index(this.n[list]);
    const keys = [...new Set([...olds.keys(), ...news.keys()])].sort(compareCodeUnits);
    return keys.map((k) => ({ key: k, old: olds.get(k), new: news.get(k) }));
  }

  tools(): void {
    for (const pair of this.pairs("tools", toolName)) {
      const base = { section: "tools" as const, subject: pair.key, path: "" };
      if (pair.old === undefined) {
        this.push(
          {
            ...base,
            part: "tool",
            kind: "tool-added",
            effect: "widened",
            callers: "compatible",
            reason: `tool ${pair.key} added: callers built on OLD do not call it`,
          },
          null,
          pair.new!.ptr,
        );
      } else if (pair.new === undefined) {
        this.push(
          {
            ...base,
            part: "tool",
            kind: "tool-removed",
            effect: "narrowed",
            callers: "breaking",
            reason: `tool ${pair.key} removed: callers built on OLD call it and get an error`,
          },
          pair.old.ptr,
          null,
        );
      } else this.tool(pair.key, pair.old, pair.new);
    }
  }

  private tool(name: string, o: { entry: JsonObject; ptr: string }, n: { entry: JsonObject; ptr: string }): void {
    const keys = [...new Set([...Object.keys(o.entry), ...Object.keys(n.entry)])].sort(compareCodeUnits);
    const row = (member: string, kind: string, effect: Effect, callers: Verdict, reason: string, part = "tool") =>
      this.push(
        { section: "tools", subject: name, part, path: member, kind, effect, callers, reason },
        `${o.ptr}/${member.split(".").map(escapeToken).join("/")}`,
        `${n.ptr}/${member.split(".").map(escapeToken).join("/")}`,
      );
    for (const key of keys) {
      const before = o.entry[key];
      const after = n.entry[key];
      if (key === "name" || same(before, after)) continue;
      if (key === "inputSchema" || (key === "outputSchema" && before !== undefined && after !== undefined)) {
        this.schema(
          name,
          key === "inputSchema" ? "input" : "output",
          before,
          after,
          `${o.ptr}/${key}`,
          `${n.ptr}/${key}`,
        );
      } else if (key === "outputSchema") {
        if (before === undefined)
          row(
            key,
            "output-schema-added",
            "narrowed",
            "compatible",
            `tool ${name} now declares its structured result: callers built on OLD do not read it`,
            "output",
          );
        else
          row(
            key,
            "output-schema-removed",
            "widened",
            "breaking",
            `tool ${name} no longer declares its structured result: callers built on OLD read what is no longer promised`,
            "output",
          );
      } else if (key === "title" || key === "description") {
        row(key, "description-changed", "none", "compatible", `${key} of tool ${name} changed: documentation only`);
      } else if (key === "annotations" && isObject(before) && isObject(after)) {
        for (const hint of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort(compareCodeUnits))
          if (!same(before[hint], after[hint]))
            row(
              `annotations.${hint}`,
              "annotation-changed",
              "none",
              "compatible",
              `annotation ${hint} of tool ${name} ${JSON.stringify(before[hint] ?? null)} -> ${JSON.stringify(after[hint] ?? null)}: hints do not change what the tool accepts or returns`,
            );
      } else if (key === "execution" && isObject(before ?? {}) && isObject(after ?? {})) {
        const was = isObject(before) ? before["taskSupport"] : undefined;
        const is = isObject(after) ? after["taskSupport"] : undefined;
        if (!same(was ?? null, is ?? null)) {
          const required = is === "required" && was !== "required";
          row(
            "execution.taskSupport",
            "task-support-changed",
            required ? "narrowed" : "widened",
            verdictOf(required),
            `task support of tool ${name} ${JSON.stringify(was ?? "forbidden")} -> ${JSON.stringify(is ?? "forbidden")}: ${
              required
                ? "callers built on OLD that do not run it as a task are refused"
                : "callers built on OLD still call it as they did"
            }`,
          );
        }
        const rest = (v: unknown) => (isObject(v) ? { ...v, taskSupport: null } : {});
        if (!same(rest(before), rest(after)))
          row(
            key,
            "member-changed",
            "none",
            "compatible",
            `execution of tool ${name} changed beyond taskSupport: not part of the call`,
          );
      } else {
        row(key, "member-changed", "none", "compatible", `${key} of tool ${name} changed: not part of the call`);
      }
    }
  }

  private schema(tool: string, part: Part, before: unknown, after: unknown, oldPtr: string, newPtr: string): void {
    const oldSchema = comparableSchema(before, oldPtr, this.notes, "OLD");
    const newSchema = comparableSchema(after, newPtr, this.notes, "NEW");
    const found: FoundChange[] = [];
    const walk: Walk = {
      old: oldSchema.env,
      new: newSchema.env,
      classify: classifierFor(part, tool),
      stopAt: new Set(),
      docs: true,
      visited: new Set(),
      out: found,
    };
    new Comparer(walk, { section: "methods", subject: tool, part }).compare(oldSchema.root, newSchema.root, "");
    for (const f of found)
      this.push(
        {
          section: "tools",
          subject: tool,
          part,
          path: f.path,
          kind: f.kind,
          effect: f.effect,
          callers: f.clients,
          reason: f.reason,
        },
        f.old === null ? null : oldSchema.toFile(f.old),
        f.new === null ? null : newSchema.toFile(f.new),
      );
    // What the model leaves out is compared as it is written: a change there is counted as breaking, to be reviewed.
    let unclassified = 0;
    for (const at of [...new Set([...oldSchema.uncompared.keys(), ...newSchema.uncompared.keys()])].sort(
      compareCodeUnits,
    )) {
      const was = oldSchema.uncompared.get(at);
      const is = newSchema.uncompared.get(at);
      if (was === is) continue;
      // Inside a subschema the other side lacks altogether: the model reports that subschema's addition or removal.
      const holder = at.slice(0, at.lastIndexOf("/"));
      if (getAt(was === undefined ? before : after, holder) === undefined) continue;
      unclassified++;
      const keyword = unescapeToken(at.slice(at.lastIndexOf("/") + 1));
      this.push(
        {
          section: "tools",
          subject: tool,
          part,
          path: at,
          kind: "schema-changed",
          effect: "changed",
          callers: "breaking",
          reason: `${keyword} at ${at} of ${partName(part, tool)} ${was === undefined ? "added" : is === undefined ? "removed" : "changed"}: mcpgen does not compare it, so it counts as breaking; review it`,
        },
        was === undefined ? oldPtr : `${oldPtr}${at}`,
        is === undefined ? newPtr : `${newPtr}${at}`,
      );
    }
    if (found.length > 0 || unclassified > 0 || assertions(before) !== assertions(after)) return;
    // Nothing that asserts moved: only annotations (title, default, examples, format...) did.
    this.push(
      {
        section: "tools",
        subject: tool,
        part,
        path: "",
        kind: "schema-annotations-changed",
        effect: "none",
        callers: "compatible",
        reason: `annotations (title, default, examples, format...) of ${partName(part, tool)} changed: documentation only`,
      },
      oldPtr,
      newPtr,
    );
  }

  prompts(): void {
    for (const pair of this.pairs("prompts", promptName)) {
      const base = { section: "prompts" as const, subject: pair.key, path: "" };
      if (pair.old === undefined || pair.new === undefined) {
        const added = pair.old === undefined;
        this.push(
          {
            ...base,
            part: "prompt",
            kind: added ? "prompt-added" : "prompt-removed",
            effect: added ? "widened" : "narrowed",
            callers: verdictOf(!added),
            reason: added
              ? `prompt ${pair.key} added: callers built on OLD do not ask for it`
              : `prompt ${pair.key} removed: callers built on OLD ask for it and get an error`,
          },
          pair.old?.ptr ?? null,
          pair.new?.ptr ?? null,
        );
        continue;
      }
      this.prompt(pair.key, pair.old, pair.new);
    }
  }

  private prompt(name: string, o: { entry: JsonObject; ptr: string }, n: { entry: JsonObject; ptr: string }): void {
    const keys = [...new Set([...Object.keys(o.entry), ...Object.keys(n.entry)])].sort(compareCodeUnits);
    for (const key of keys) {
      const before = o.entry[key];
      const after = n.entry[key];
      if (key === "name" || same(before, after)) continue;
      if (key === "arguments") {
        this.promptArguments(name, before, after, o.ptr, n.ptr);
        continue;
      }
      const doc = key === "title" || key === "description";
      this.push(
        {
          section: "prompts",
          subject: name,
          part: "prompt",
          path: key,
          kind: doc ? "description-changed" : "member-changed",
          effect: "none",
          callers: "compatible",
          reason: doc
            ? `${key} of prompt ${name} changed: documentation only`
            : `${key} of prompt ${name} changed: not part of the request`,
        },
        `${o.ptr}/${escapeToken(key)}`,
        `${n.ptr}/${escapeToken(key)}`,
      );
    }
  }

  private promptArguments(name: string, before: unknown, after: unknown, oldPtr: string, newPtr: string): void {
    const index = (list: unknown, ptr: string) =>
      new Map(
        (Array.isArray(list) ? list : []).flatMap((arg, i) =>
          isObject(arg) && typeof arg["name"] === "string"
            ? [[arg["name"], { arg, ptr: `${ptr}/arguments/${i}` }] as const]
            : [],
        ),
      );
    const olds = index(before, oldPtr);
    const news = index(after, newPtr);
    const push = (arg: string, kind: string, effect: Effect, reason: string, o: string | null, n: string | null) =>
      this.push(
        {
          section: "prompts",
          subject: name,
          part: "arguments",
          path: arg,
          kind,
          effect,
          callers: verdictOf(breaksCallers(kind, effect, "input")),
          reason,
        },
        o,
        n,
      );
    for (const arg of [...new Set([...olds.keys(), ...news.keys()])].sort(compareCodeUnits)) {
      const o = olds.get(arg);
      const n = news.get(arg);
      if (o === undefined) {
        const required = n!.arg["required"] === true;
        push(
          arg,
          required ? "argument-added-required" : "argument-added-optional",
          required ? "narrowed" : "widened",
          required
            ? `required argument ${arg} added to prompt ${name}: callers built on OLD do not pass it`
            : `optional argument ${arg} added to prompt ${name}: callers built on OLD just do not pass it`,
          oldPtr,
          n!.ptr,
        );
      } else if (n === undefined) {
        push(
          arg,
          "argument-removed",
          "narrowed",
          `argument ${arg} removed from prompt ${name}: callers built on OLD may still pass it`,
          o.ptr,
          newPtr,
        );
      } else {
        const was = o.arg["required"] === true;
        const is = n.arg["required"] === true;
        if (was !== is)
          push(
            arg,
            is ? "argument-made-required" : "argument-made-optional",
            is ? "narrowed" : "widened",
            is
              ? `argument ${arg} of prompt ${name} made required: callers built on OLD may leave it out`
              : `argument ${arg} of prompt ${name} made optional: callers built on OLD pass it anyway`,
            `${o.ptr}/required`,
            `${n.ptr}/required`,
          );
        for (const key of [...new Set([...Object.keys(o.arg), ...Object.keys(n.arg)])].sort(compareCodeUnits)) {
          if (key === "name" || key === "required" || same(o.arg[key], n.arg[key])) continue;
          const doc = key === "title" || key === "description";
          push(
            `${arg}.${key}`,
            doc ? "description-changed" : "member-changed",
            "none",
            `${key} of argument ${arg} of prompt ${name} changed: ${doc ? "documentation only" : "not part of the request"}`,
            `${o.ptr}/${escapeToken(key)}`,
            `${n.ptr}/${escapeToken(key)}`,
          );
        }
      }
    }
  }

  resourceTemplates(): void {
    for (const pair of this.pairs("resourceTemplates", templateKey)) {
      const base = { section: "resourceTemplates" as const, subject: pair.key, part: "template" };
      if (pair.old === undefined || pair.new === undefined) {
        const added = pair.old === undefined;
        this.push(
          {
            ...base,
            path: "",
            kind: added ? "template-added" : "template-removed",
            effect: added ? "widened" : "narrowed",
            callers: verdictOf(!added),
            reason: added
              ? `resource template ${pair.key} added: callers built on OLD do not read it`
              : `resource template ${pair.key} removed: callers built on OLD read resources it no longer promises`,
          },
          pair.old?.ptr ?? null,
          pair.new?.ptr ?? null,
        );
        continue;
      }
      const o = pair.old;
      const n = pair.new;
      for (const key of [...new Set([...Object.keys(o.entry), ...Object.keys(n.entry)])].sort(compareCodeUnits)) {
        if (key === "uriTemplate" || same(o.entry[key], n.entry[key])) continue;
        const mime = key === "mimeType";
        const doc = key === "name" || key === "title" || key === "description";
        this.push(
          {
            ...base,
            path: key,
            kind: mime ? "mime-type-changed" : doc ? "description-changed" : "member-changed",
            effect: mime ? "changed" : "none",
            callers: verdictOf(mime),
            reason: mime
              ? `MIME type of resource template ${pair.key} ${JSON.stringify(o.entry[key] ?? null)} -> ${JSON.stringify(n.entry[key] ?? null)}: callers built on OLD read content of another type`
              : `${key} of resource template ${pair.key} changed: ${doc ? "documentation only" : "not part of the read"}`,
          },
          `${o.ptr}/${escapeToken(key)}`,
          `${n.ptr}/${escapeToken(key)}`,
        );
      }
    }
  }
}

const SECTIONS: CatalogueSection[] = ["server", "tools", "prompts", "resourceTemplates"];
const PARTS = ["server", "tool", "prompt", "template", "input", "arguments", "output"];
const CLASS_ORDER: SubjectClass[] = [
  "added",
  "removed",
  "input-narrowed",
  "input-changed",
  "input-widened",
  "output-widened",
  "output-changed",
  "output-narrowed",
  "output-extended",
  "metadata-changed",
  "description-only",
];
const REMOVALS = new Set(["tool-removed", "prompt-removed", "template-removed"]);

function compareChanges(a: CatalogueChange, b: CatalogueChange): number {
  return (
    SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section) ||
    compareCodeUnits(a.subject, b.subject) ||
    PARTS.indexOf(a.part) - PARTS.indexOf(b.part) ||
    compareCodeUnits(a.path, b.path) ||
    compareCodeUnits(a.kind, b.kind) ||
    compareCodeUnits(a.old ?? "", b.old ?? "") ||
    compareCodeUnits(a.new ?? "", b.new ?? "") ||
    compareCodeUnits(a.reason, b.reason)
  );
}

/** The class a change gives its subject. */
function classOf(c: CatalogueChange): SubjectClass | "description" {
  if (c.kind.endsWith("-added") && (c.part === "tool" || c.part === "prompt" || c.part === "template") && c.path === "")
    return "added";
  if (REMOVALS.has(c.kind)) return "removed";
  if (c.kind === "description-changed" || c.kind === "schema-annotations-changed") return "description";
  if (c.part === "input" || c.part === "arguments")
    return c.effect === "narrowed" ? "input-narrowed" : c.effect === "changed" ? "input-changed" : "input-widened";
  if (c.part === "output") {
    if (c.effect === "widened") return "output-widened";
    if (c.effect === "changed") return "output-changed";
    if (c.effect === "narrowed") return "output-narrowed";
    return "output-extended";
  }
  return "metadata-changed";
}

function subjectsOf(changes: CatalogueChange[]): SubjectSummary[] {
  const bySubject = new Map<string, { section: CatalogueSection; subject: string; changes: CatalogueChange[] }>();
  for (const c of changes) {
    const key = `${c.section}\u0000${c.subject}`;
    const entry = bySubject.get(key) ?? { section: c.section, subject: c.subject, changes: [] };
    entry.changes.push(c);
    bySubject.set(key, entry);
  }
  return [...bySubject.values()].map(({ section, subject, changes: mine }) => {
    const found = new Set(mine.map(classOf));
    const classes =
      found.size === 1 && found.has("description")
        ? ["description-only" as const]
        : CLASS_ORDER.filter((k) => found.has(k));
    return { section, subject, classes, callers: verdictOf(mine.some((c) => c.callers === "breaking")) };
  });
}

/** The report of OLD against NEW: changes sorted, each subject's classes, the summary. */
export function diffCatalogues(oldSide: CatalogueSide, newSide: CatalogueSide): CatalogueReport {
  const diff = new CatalogueDiff(oldSide.catalogue, newSide.catalogue);
  diff.server();
  diff.tools();
  diff.prompts();
  diff.resourceTemplates();
  const changes = diff.changes.sort(compareChanges);
  const breaking = changes.filter((c) => c.callers === "breaking");
  const important = [...breaking]
    .map((c, order) => ({ c, order }))
    .sort((a, b) => Number(REMOVALS.has(b.c.kind)) - Number(REMOVALS.has(a.c.kind)) || a.order - b.order)
    .slice(0, 3)
    .map(({ c }) => ({
      section: c.section,
      subject: c.subject,
      part: c.part,
      path: c.path,
      kind: c.kind,
      reason: c.reason,
    }));
  return {
    format: "mcpgen-catalogue-diff/1",
    old: oldSide.info,
    new: newSide.info,
    notes: [...new Set(diff.notes)],
    summary: {
      total: changes.length,
      breaking: breaking.length,
      compatible: changes.length - breaking.length,
      important,
    },
    subjects: subjectsOf(changes),
    changes,
  };
}
