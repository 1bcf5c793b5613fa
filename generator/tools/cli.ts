// The `mcpgen tools` commands: pull a server's catalogue, generate typed bindings from one, check one against the server.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { DiffFormat, FailOn } from "../diff/format.js";
import { SchemaError, UsageError } from "../errors.js";
import { CONFIG_FILE, configFor, type ToolsConfig } from "../config.js";
import { writeFiles } from "../files.js";
import { readText } from "../json.js";
import { projectRoot } from "../root.js";
import { commandWith, shownPath, type RerunOption } from "../rerun.js";
import { DEFAULT_DEBOUNCE_MS, debounceOption, untilInterrupted, watchTargets } from "../watch.js";
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
  debounceMs?: number;
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

/**
 * The servers a command runs for: the one its own flags name, else every entry of the config's `tools` (so a project
 * lists its servers once and CI runs `mcpgen tools check`). `needs` names the flag an entry must then supply.
 */
function targets<T>(
  self: Command,
  own: T | undefined,
  fromConfig: (entry: ToolsConfig) => T | undefined,
  needs: string,
): T[] {
  if (own !== undefined) return [own];
  const config = configFor(self);
  const file = (self.getOptionValue("config") as string | undefined) ?? CONFIG_FILE;
  if (config?.tools === undefined)
    throw new UsageError(`${needs} is required (or list servers under "tools" in ${CONFIG_FILE})`);
  return config.tools.map((entry, i) => {
    const target = fromConfig(entry);
    if (target === undefined)
      throw new SchemaError(
        file,
        `tools entry ${i} has no ${needs.replace(/^--/, "")} for this command`,
        `/tools/${i}`,
      );
    return target;
  });
}

/** A config entry's connection, with the command's own limits (--timeout-ms, --max-pages). */
function entryConnection(entry: ToolsConfig, opts: ConnectionOpts): ConnectionOpts | undefined {
  if (entry.server === undefined && entry.url === undefined) return undefined;
  return {
    ...(entry.server !== undefined ? { server: entry.server } : {}),
    ...(entry.url !== undefined ? { url: entry.url } : {}),
    header: entry.header ?? [],
    env: entry.env ?? [],
    timeoutMs: opts.timeoutMs,
    maxPages: opts.maxPages,
  };
}

const CONFIG_OPTION = `settings file listing the servers under "tools" (default: ${CONFIG_FILE} in the working directory, if present); used when the command's own flags name no server`;

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
    .option("--out <file>", "the catalogue file to write")
    .option("--config <file>", CONFIG_OPTION)
    .action(async (opts: ConnectionOpts & { out?: string }, self: Command) => {
      const own = opts.out === undefined ? undefined : { out: opts.out, connection: opts };
      const jobs = targets(
        self,
        own,
        (entry) => {
          const connection = entryConnection(entry, opts);
          return connection === undefined ? undefined : { out: entry.catalogue, connection };
        },
        "--out",
      );
      for (const job of jobs) {
        const catalogue = await pullCatalogue(pullOptions(job.connection));
        const text = catalogueText(catalogue);
        const out = job.out;
        const changed = !existsSync(out) || readFileSync(out, "utf8") !== text;
        if (changed) {
          mkdirSync(dirname(resolve(out)), { recursive: true });
          writeFileSync(out, text);
        }
        const server = `${catalogue.server.name} ${catalogue.server.version}`.trim();
        io.out(
          `${changed ? "wrote    " : "unchanged"} ${shown(out)} (${describeCounts(catalogue)} of ${server || "the server"})`,
        );
      }
    });

  tools
    .command("generate")
    .description(
      "write typed bindings for a catalogue's tools into --out/index.ts: bindTools(client) with one method per tool, arguments typed from inputSchema, structured results typed and checked against outputSchema",
    )
    .option("--catalogue <file>", "the catalogue to read (written by mcpgen tools pull)")
    .option("--out <dir>", "the directory to write index.ts into")
    .option("--config <file>", CONFIG_OPTION)
    .option(
      "--sdk-import <specifier>",
      "module the bindings import Client, CallToolResult and RpcError from (default: mcpgen; your own generated sdk.js works too)",
    )
    .option("--watch", "generate again whenever the catalogue changes")
    .option(
      "--debounce-ms <ms>",
      "with --watch: how long the catalogue must be quiet after a save before it generates again",
      debounceOption,
      DEFAULT_DEBOUNCE_MS,
    )
    .exitOverride()
    .action(async (flags: Partial<GenerateOpts>, self: Command) => {
      const command = commandWith(["mcpgen", "tools", "generate"], GENERATE_OPTIONS, self);
      if ((flags.catalogue === undefined) !== (flags.out === undefined))
        throw new UsageError(
          "--catalogue and --out go together (or neither, to generate every server the config lists)",
        );
      if (flags.catalogue === undefined) {
        if (flags.watch) throw new UsageError("--watch needs --catalogue and --out");
        const jobs = targets<GenerateOpts>(
          self,
          undefined,
          (entry) =>
            entry.out === undefined
              ? undefined
              : {
                  catalogue: entry.catalogue,
                  out: entry.out,
                  ...(entry.sdkImport !== undefined ? { sdkImport: entry.sdkImport } : {}),
                },
          "--out",
        );
        for (const job of jobs) {
          const rerun = `mcpgen tools generate --catalogue ${shown(job.catalogue)} --out ${shown(job.out)}`;
          generateOnce(job, rerun, io);
        }
        return;
      }
      const opts = flags as GenerateOpts;
      if (!opts.watch && self.getOptionValueSource("debounceMs") === "cli")
        throw new UsageError("--debounce-ms needs --watch");
      if (!opts.watch) return generateOnce(opts, command, io);
      const run = async (changed: string[]): Promise<void> => {
        // Watch status is a diagnostic (stderr); what a run writes is its report (stdout).
        if (changed.length) io.err(`changed  ${changed.map(shownPath).join(", ")}`);
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
      const { stop, watching } = watchTargets(
        [{ dir: dirname(file), names: new Set([basename(file)]) }],
        run,
        opts.debounceMs,
      );
      io.err(`watching ${watching}`);
      await untilInterrupted(stop);
    });

  connection(
    tools
      .command("check")
      .description(
        "pull the server's catalogue and compare it with a snapshot: exit 0 when equal, 1 with a report classified for callers when it drifted, 2 on bad input",
      ),
  )
    .option("--catalogue <file>", "the snapshot to compare with (written by mcpgen tools pull)")
    .option("--config <file>", CONFIG_OPTION)
    .addOption(new Option("--format <format>", "report format").choices(["text", "json", "markdown"]).default("text"))
    .addOption(
      new Option("--fail-on <what>", "exit 1 when the server drifted at all, only when it breaks callers, or never")
        .choices(["any", "breaking", "none"])
        .default("any"),
    )
    .action(
      async (opts: ConnectionOpts & { catalogue?: string; format: DiffFormat; failOn: FailOn }, self: Command) => {
        const own = opts.catalogue === undefined ? undefined : { catalogue: opts.catalogue, connection: opts };
        const jobs = targets(
          self,
          own,
          (entry) => {
            const connection = entryConnection(entry, opts);
            return connection === undefined ? undefined : { catalogue: entry.catalogue, connection };
          },
          "--catalogue",
        );
        // Every snapshot is read first: a bad file is reported without starting any server.
        const snapshots = jobs.map((job) => loadCatalogue(job.catalogue));
        let exit = 0;
        for (const [i, job] of jobs.entries()) {
          const file = shown(job.catalogue);
          const snapshot = snapshots[i]!;
          const target = targetOf(job.connection);
          const live = await pullCatalogue(pullOptions(job.connection));
          const report = diffCatalogues(
            { info: sideInfo(file, snapshot.catalogue), catalogue: snapshot.catalogue },
            { info: sideInfo(`live ${target}`, live), catalogue: live },
          );
          if (report.changes.length === 0 && opts.format === "text") {
            io.out(`${file} matches ${target} (${describeCounts(live)})`);
            continue;
          }
          io.out(formatCatalogueReport(report, opts.format));
          exit = Math.max(exit, catalogueExitCode(report, opts.failOn));
          if (report.changes.length > 0)
            io.err(
              `${file} differs from ${target}: review the report, then pull again (mcpgen tools pull ... --out ${file}) and regenerate the bindings`,
            );
        }
        if (exit !== 0) process.exitCode = exit;
      },
    );
}

/** A path as messages show it: relative to the working directory when it lies below it (config paths are absolute). */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) ? rel.split(sep).join("/") : file;
}
