// The `mcpgen diff` and `mcpgen schema rebase` commands, registered onto the main program by generator/cli.ts.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { shownPath } from "../rerun.js";
import { Option, type Command } from "commander";
import { CONFIG_FILE, configFor, type RevisionConfig } from "../config.js";
import { SchemaError } from "../errors.js";
import { defaultSources } from "../schema-build.js";
import { diffSides } from "./diff.js";
import { exitCodeFor, formatReport, type DiffFormat, type FailOn } from "./format.js";
import { rebase } from "./rebase.js";
import { loadSide } from "./source.js";
import { catalogueDiff } from "../tools/diff-command.js";
import { catalogueExitCode, formatCatalogueReport } from "../tools/report-format.js";

export interface DiffIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface DiffOpts {
  format: DiffFormat;
  failOn: FailOn;
  includeDocs?: boolean;
  api?: boolean;
  oldMethods?: string;
  newMethods?: string;
  convention?: boolean;
}

export function registerDiffCommands(program: Command, io: DiffIo): void {
  program
    .command("diff")
    .description(
      "compare two MCP schemas (files or git:REV:path) and classify each change for clients and servers; two tool catalogues (mcpgen tools pull) tool by tool, for callers; with --api, two generated packages",
    )
    .argument(
      "<old>",
      "the OLD schema: a file, git:REV:path, or a revision the config lists (with --api: a generated package directory)",
    )
    .argument(
      "<new>",
      "the NEW schema: a file, git:REV:path, or a revision the config lists (with --api: a generated package directory)",
    )
    .addOption(new Option("--format <format>", "output format").choices(["text", "json", "markdown"]).default("text"))
    .addOption(
      new Option("--fail-on <what>", "exit 1 when the report has breaking changes, any change, or never")
        .choices(["breaking", "any", "none"])
        .default("breaking"),
    )
    .option("--include-docs", "also list changed descriptions (never breaking)")
    .option("--api", "compare the exported TypeScript API of two generated packages instead")
    .option(
      "--old-methods <file>",
      "methods sidecar of OLD (default: methods.json beside it, else derived by convention)",
    )
    .option(
      "--new-methods <file>",
      "methods sidecar of NEW (default: methods.json beside it, else derived by convention)",
    )
    .option("--convention", "derive methods from the schemas' unions even where a sidecar exists")
    .option(
      "--config <file>",
      `settings file whose revisions OLD and NEW may name (default: ${CONFIG_FILE} in the working directory, if present)`,
    )
    .exitOverride()
    .action(async (oldSpec: string, newSpec: string, opts: DiffOpts, self: Command) => {
      let report;
      if (opts.api) {
        // ts-morph is loaded only here, so a schema diff does not pay for it.
        const { diffApi } = await import("./api.js");
        report = diffApi(oldSpec, newSpec);
      } else {
        // Two tool catalogues (mcpgen tools pull) are compared tool by tool, for their callers.
        const catalogues = catalogueDiff(oldSpec, newSpec, opts);
        if (catalogues !== undefined) {
          io.out(formatCatalogueReport(catalogues, opts.format));
          process.exitCode = catalogueExitCode(catalogues, opts.failOn);
          return;
        }
        const revisions = revisionsNamed([oldSpec, newSpec], self);
        const side = (spec: string, who: "OLD" | "NEW", methods: string | undefined) => {
          const revision = revisions.get(spec);
          // Config paths are absolute; the report names them as the user would.
          const sidecar = methods ?? (revision?.methods !== undefined ? shownPath(revision.methods) : undefined);
          return loadSide(revision ? shownPath(revision.schema) : spec, who, {
            ...(sidecar !== undefined ? { methods: sidecar } : {}),
            convention: opts.convention ?? false,
          });
        };
        const oldSide = side(oldSpec, "OLD", opts.oldMethods);
        const newSide = side(newSpec, "NEW", opts.newMethods);
        report = diffSides(oldSide, newSide, { includeDocs: opts.includeDocs ?? false });
      }
      io.out(formatReport(report, opts.format));
      process.exitCode = exitCodeFor(report, opts.failOn);
    });
}

/**
 * The arguments that name a revision of the config (a multi-revision config's `revision`), each with its schema
 * and sidecar. A file of that name wins: an argument is a revision only when it is not a path that exists.
 */
function revisionsNamed(specs: string[], command: Command): Map<string, RevisionConfig> {
  const named = new Map<string, RevisionConfig>();
  const candidates = specs.filter((s) => !s.startsWith("git:") && !existsSync(s));
  if (candidates.length === 0) return named;
  const config = configFor(command);
  for (const r of config?.revisions ?? []) if (candidates.includes(r.revision)) named.set(r.revision, r);
  return named;
}

interface RebaseOpts {
  dir: string;
  out?: string;
  methods?: string;
  format: DiffFormat;
}

export function registerRebaseCommand(schema: Command, io: DiffIo): void {
  schema
    .command("rebase")
    .description(
      "rebuild schema.json from a new upstream base plus our patches, overlay and sidecar; report what no longer applies and diff old against new",
    )
    .argument("<new-base>", "the new upstream schema.json")
    .option(
      "--dir <dir>",
      "schema directory holding patches.json, overlay.json, methods.json and the current schema.json",
      "schema",
    )
    .option("--out <dir>", "where to write the rebased schema.json (default: --dir)")
    .option("--methods <file>", "methods sidecar (default: methods.json in --dir)")
    .addOption(
      new Option("--format <format>", "format of the diff").choices(["text", "json", "markdown"]).default("text"),
    )
    .exitOverride()
    .action((newBase: string, opts: RebaseOpts) => {
      const sources = defaultSources(opts.dir);
      const methodsFile = opts.methods ?? join(opts.dir, "methods.json");
      const outDir = opts.out ?? opts.dir;
      const target = join(outDir, "schema.json");
      const result = rebase(sources, newBase, methodsFile, target);
      mkdirSync(outDir, { recursive: true });
      const current = join(opts.dir, "schema.json");
      // Read the current combined schema before it may be overwritten (when --out is --dir).
      const oldSide = loadSide(current, "OLD", { methods: methodsFile });
      writeFileSync(target, result.text);
      io.out(`wrote ${target} (base ${newBase})`);
      const rel = (f: string): string => relative(process.cwd(), resolve(f)) || f;
      for (const c of result.conflicts)
        io.err(
          `conflict ${rel(c.source === "patches" ? sources.patchesFile : sources.overlayFile)}#${c.pointer}: ${c.reason}; left out`,
        );
      for (const s of result.sidecar) io.err(`sidecar  ${s}`);
      let newSide;
      try {
        newSide = loadSide(target, "NEW", { methods: methodsFile });
      } catch (error) {
        if (!(error instanceof SchemaError)) throw error;
        newSide = loadSide(target, "NEW", { convention: true });
        newSide.notes.unshift(
          `NEW: the sidecar does not fit the rebased schema (${error.format()}); methods derived by convention for this diff`,
        );
      }
      io.out(formatReport(diffSides(oldSide, newSide), opts.format));
      const problems = result.conflicts.length + result.sidecar.length;
      io.out(
        problems
          ? `${result.conflicts.length} conflict(s), ${result.sidecar.length} sidecar problem(s): resolve them in overlay.json, patches.json and methods.json`
          : "the overlay, patches and sidecar all apply",
      );
      process.exitCode = problems ? 1 : 0;
    });
}
