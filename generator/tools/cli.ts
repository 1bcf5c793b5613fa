// The `mcpgen tools` commands: pull a server's catalogue, generate typed bindings from one, check one against the server.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { DiffFormat, FailOn } from "../diff/format.js";
import { SchemaError } from "../errors.js";
import { writeFiles } from "../files.js";
import { readText } from "../json.js";
import { projectRoot } from "../root.js";
import { commandWith, shownPath, type RerunOption } from "../rerun.js";
import { untilInterrupted, watchTargets } from "../watch.js";
import { catalogueText, describeCounts, parseCatalogue, type Catalogue, type LoadedCatalogue } from "./catalogue.js";
import { diffCatalogues } from "./compare-catalogues.js";
import { emitBindings } from "./emit-bindings.js";
import { DEFAULT_MAX_PAGES, DEFAULT_TIMEOUT_MS, pullCatalogue, targetOf, type PullOptions } from "./pull.js";
import { catalogueExitCode, formatCatalogueReport } from "./report-format.js";
import type { CatalogueSideInfo } from "./report.js";

export interface ToolsIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The file the bindings are written to, in --out. */
export const BINDINGS_FILE = "index.ts";

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("a whole number, 1 or more");
  return n;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The options that say which server to pull from and how long to try. */
function connection(command: Command): Command {
  return command
    .option(
      "--server <command line>",
      "start a stdio server with this command line (quoted as a shell quotes words; no shell runs it)",
    )
    .option("--url <endpoint>", "a Streamable HTTP endpoint to connect to instead")
    .option(
      "--header <name: value>",
      'an HTTP header on every request, e.g. "Authorization: Bearer $TOKEN" (repeatable; with --url)',
      collect,
    )
    .option(
      "--env <NAME[=value]>",
      "an environment variable for the stdio server, whose environment is otherwise a clean default; NAME alone copies it from this one (repeatable; with --server)",
      collect,
    )
    .option(
      "--timeout-ms <ms>",
      "how long connecting and listing may take together",
      positiveInteger,
      DEFAULT_TIMEOUT_MS,
    )
    .option(
      "--max-pages <n>",
      "most pages of one list followed (a server handing out cursors forever is cut off)",
      positiveInteger,
      DEFAULT_MAX_PAGES,
    )
    .exitOverride();
}

/** The connection options as commander parsed them (repeatable options keep their singular names). */
interface ConnectionOpts {
  server?: string;
  url?: string;
  header?: string[];
  env?: string[];
  timeoutMs: number;
  maxPages: number;
}

function pullOptions(opts: ConnectionOpts): PullOptions {
  return {
    ...(opts.server !== undefined ? { server: opts.server } : {}),
    ...(opts.url !== undefined ? { url: opts.url } : {}),
    headers: opts.header ?? [],
    env: opts.env ?? [],
    timeoutMs: opts.timeoutMs,
    maxPages: opts.maxPages,
  };
}

/** Reads a catalogue file; a bad one is a SchemaError (exit 2) with the file and a JSON pointer or line:column. */
export function loadCatalogue(file: string): LoadedCatalogue {
  return parseCatalogue(file, readText(file));
}

function sideInfo(file: string, c: Catalogue): CatalogueSideInfo {
  return { file, server: c.server, protocolVersion: c.protocolVersion };
}

/**
 * The SDK module the bindings import: this project's generated/sdk.js when the output lies inside it (as generate
 * imports the runtime there), else the `mcpgen` package.
 */
export function defaultSdkImport(outDir: string): string {
  const out = resolve(outDir);
  if (!out.startsWith(projectRoot + sep)) return "mcpgen";
  const rel = relative(out, join(projectRoot, "generated")).split(sep).join("/");
  return `${rel.startsWith(".") ? rel : `./${rel}`}/sdk.js`;
}

/** The options of `tools generate` that decide what it writes, as its headers name them. */
const GENERATE_OPTIONS: RerunOption[] = [
  { key: "catalogue", flag: "--catalogue", path: true },
  { key: "out", flag: "--out", path: true },
  { key: "sdkImport", flag: "--sdk-import", path: false },
];

interface GenerateOpts {
  catalogue: string;
  out: string;
  sdkImport?: string;
  watch?: boolean;
}

function generateOnce(opts: GenerateOpts, command: string, io: ToolsIo): void {
  const loaded = loadCatalogue(opts.catalogue);
  const { content, notes } = emitBindings({
    loaded,
    sourceName: shownPath(resolve(opts.catalogue)),
    sdkImport: opts.sdkImport ?? defaultSdkImport(opts.out),
    command,
  });
  for (const n of notes) io.err(`note: ${n}`);
  const [written] = writeFiles(opts.out, [{ path: BINDINGS_FILE, content }]);
  const tools = loaded.catalogue.tools.length;
  io.out(
    `${written!.changed ? "wrote    " : "unchanged"} ${join(opts.out, BINDINGS_FILE)} (${written!.bytes} bytes, ${tools} tool${tools === 1 ? "" : "s"})`,
  );
}

export function registerToolsCommands(program: Command, io: ToolsIo): void {
  const tools = program
    .command("tools")
    .description("typed tool catalogues: pull a server's, generate bindings from one, check one against the server")
    .exitOverride();

  connection(
    tools
      .command("pull")
      .description(
        "connect to a server and write its catalogue (tools, prompts, resource templates) as canonical JSON: sorted, no timestamps, the same bytes for the same server",
      ),
  )
    .requiredOption("--out <file>", "the catalogue file to write")
    .action(async (opts: ConnectionOpts & { out: string }) => {
      const catalogue = await pullCatalogue(pullOptions(opts));
      const text = catalogueText(catalogue);
      const changed = !existsSync(opts.out) || readFileSync(opts.out, "utf8") !== text;
      if (changed) {
        mkdirSync(dirname(resolve(opts.out)), { recursive: true });
        writeFileSync(opts.out, text);
      }
      const server = `${catalogue.server.name} ${catalogue.server.version}`.trim();
      io.out(
        `${changed ? "wrote    " : "unchanged"} ${opts.out} (${describeCounts(catalogue)} of ${server || "the server"})`,
      );
    });

  tools
    .command("generate")
    .description(
      "write typed bindings for a catalogue's tools into --out/index.ts: bindTools(client) with one method per tool, arguments typed from inputSchema, structured results typed and checked against outputSchema",
    )
    .requiredOption("--catalogue <file>", "the catalogue to read (written by mcpgen tools pull)")
    .requiredOption("--out <dir>", "the directory to write index.ts into")
    .option(
      "--sdk-import <specifier>",
      "module the bindings import Client, CallToolResult and RpcError from (default: mcpgen; your own generated sdk.js works too)",
    )
    .option("--watch", "generate again whenever the catalogue changes")
    .exitOverride()
    .action(async (opts: GenerateOpts, self: Command) => {
      const command = commandWith(["mcpgen", "tools", "generate"], GENERATE_OPTIONS, self);
      if (!opts.watch) return generateOnce(opts, command, io);
      const run = async (changed: string[]): Promise<void> => {
        if (changed.length) io.out(`changed  ${changed.join(", ")}`);
        try {
          generateOnce(opts, command, io);
        } catch (error) {
          // A catalogue saved half-way is the common case: say so and wait for the next save.
          io.err(`error    ${error instanceof SchemaError ? error.format() : (error as Error).message}`);
          io.err("still watching; fix the file and save again");
        }
      };
      await run([]);
      const file = resolve(opts.catalogue);
      const { stop, watching } = watchTargets([{ dir: dirname(file), names: new Set([basename(file)]) }], run);
      io.out(`watching ${watching}`);
      await untilInterrupted(stop);
    });

  connection(
    tools
      .command("check")
      .description(
        "pull the server's catalogue and compare it with a snapshot: exit 0 when equal, 1 with a report classified for callers when it drifted, 2 on bad input",
      ),
  )
    .requiredOption("--catalogue <file>", "the snapshot to compare with (written by mcpgen tools pull)")
    .addOption(new Option("--format <format>", "report format").choices(["text", "json", "markdown"]).default("text"))
    .addOption(
      new Option("--fail-on <what>", "exit 1 when the server drifted at all, only when it breaks callers, or never")
        .choices(["any", "breaking", "none"])
        .default("any"),
    )
    .action(async (opts: ConnectionOpts & { catalogue: string; format: DiffFormat; failOn: FailOn }) => {
      // The snapshot is read first: a bad file is reported without starting the server.
      const snapshot = loadCatalogue(opts.catalogue);
      const live = await pullCatalogue(pullOptions(opts));
      const report = diffCatalogues(
        { info: sideInfo(opts.catalogue, snapshot.catalogue), catalogue: snapshot.catalogue },
        { info: sideInfo(`live ${targetOf(opts)}`, live), catalogue: live },
      );
      if (report.changes.length === 0 && opts.format === "text") {
        io.out(`${opts.catalogue} matches ${targetOf(opts)} (${describeCounts(live)})`);
        return;
      }
      io.out(formatCatalogueReport(report, opts.format));
      process.exitCode = catalogueExitCode(report, opts.failOn);
      if (report.changes.length > 0)
        io.err(
          `${opts.catalogue} differs from ${targetOf(opts)}: review the report, then pull again (mcpgen tools pull ... --out ${opts.catalogue}) and regenerate the bindings`,
        );
    });
}
