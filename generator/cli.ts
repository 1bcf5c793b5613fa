// The mcpgen command line: generate, check, schema init and build, diff, tools; errors become exit codes (1 drift, 2 bad input).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { HEADER_LINES } from "./emit/header.js";
import { SchemaError, UsageError } from "./errors.js";
import { compareWithDisk, type Drift, writeFiles } from "./files.js";
import { projectRoot } from "./load.js";
import { isObject } from "./json.js";
import { rerunCommand, shownPath } from "./rerun.js";
import { buildCombinedText, defaultSources } from "./schema-build.js";
import { DEFAULT_DIFF_LINES, unifiedDiff } from "./unified-diff.js";
import { registerDiffCommands, registerRebaseCommand } from "./diff/cli.js";
import { configFor, registerConfig, revisionsFor, type RevisionConfig } from "./config.js";
import { registerWatch } from "./watch.js";
import { registerToolsCommands } from "./tools/cli.js";

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(l + "\n"), err: (l) => process.stderr.write(l + "\n") };

function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw new SchemaError(path, `${what}: no such file`);
}

/** When the schema was built from base + overlay, it must equal what the build makes now. */
function combinedSchemaDrift(schemaFile: string, diffLines: number): { report: string; fix: string } | undefined {
  const dir = dirname(resolve(schemaFile));
  const sources = defaultSources(dir);
  if (!existsSync(sources.overlayFile) || !existsSync(sources.baseFile) || !existsSync(sources.patchesFile))
    return undefined;
  const rel = shownPath(dir);
  const fix = rel === "schema" ? "mcpgen schema build" : `mcpgen schema build --dir ${rel}`;
  const { text, conflicts } = buildCombinedText(sources);
  if (conflicts.length)
    return {
      report: `the overlay no longer applies: ${conflicts.map((c) => `${c.source}#${c.pointer}: ${c.reason}`).join("; ")}`,
      fix,
    };
  const onDisk = readFileSync(schemaFile, "utf8");
  if (onDisk === text) return undefined;
  return {
    report: `differs from base + patches + overlay\n${unifiedDiff(onDisk, text, { maxLines: diffLines })}`,
    fix,
  };
}

/**
 * check's report: a diff per stale file below its header, then each change of the headers once, with the files
 * it concerns (a new schema hash changes all of them; that is one line, not one diff per file).
 */
function driftReport(outDir: string, drift: Drift): string[] {
  const problems: string[] = [];
  const headers = new Map<string, string[]>();
  const headerOnly: string[] = [];
  for (const s of drift.stale) {
    const path = join(outDir, s.path);
    if (s.header) headers.set(s.header, [...(headers.get(s.header) ?? []), path]);
    if (s.diff) problems.push(`stale    ${path}\n--- ${path} (on disk)\n+++ ${path} (generated now)\n${s.diff}`);
    else headerOnly.push(path);
  }
  if (headerOnly.length) problems.push(`stale    ${headerOnly.join(", ")}: only the header differs`);
  for (const [lines, paths] of headers) {
    const which = paths.length === drift.stale.length ? `every stale file (${paths.length})` : paths.join(", ");
    // Only the rerun line differs: most likely check was given other options than generate was.
    const onlyCommand = lines
      .split("\n")
      .every((l) => l.startsWith("-// Do not edit:") || l.startsWith("+// Do not edit:"));
    const hint = onlyCommand
      ? "\n(the headers name the command that wrote them: give check the options generate was run with)"
      : "";
    problems.push(`header   of ${which}:\n${lines}${hint}`);
  }
  for (const m of drift.missing) problems.push(`missing  ${join(outDir, m)}`);
  for (const e of drift.extra) problems.push(`extra    ${join(outDir, e)}`);
  return problems;
}

/**
 * mcpgen-cli's version, read when asked for: from the package's own package.json in an install, from
 * packages/mcpgen-cli/package.json in this repository (whose root package.json is the workspace's).
 */
export function cliVersion(root: string = projectRoot): string {
  const candidates = [join(root, "package.json"), join(root, "packages", "mcpgen-cli", "package.json")];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    if (isObject(value) && value.name === "mcpgen-cli" && typeof value.version === "string") return value.version;
  }
  throw new Error(`mcpgen-cli's package.json is not where it belongs: looked at ${candidates.join(" and ")}`);
}

/** What the root help says after the commands: which stream carries what, and the exit codes. */
const OUTPUT_HELP = `
Output:
  stdout  the report you ran the command for, with its summary line: check's and diff's
          reports and diffs, tools check's report, the files generate, schema build and
          tools pull write, and each --watch regeneration
  stderr  diagnostics: errors (with the file and JSON pointer or line:column), notes,
          advice that follows a report, and --watch status (watching, changed, still watching)

Exit codes: 0 ok; 1 check, diff or tools check found a difference; 2 bad input; 3 internal error.
Run \`mcpgen help <command>\` (e.g. \`mcpgen help tools pull\`) for a command's options.`;

function diffLinesOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a whole number, 0 for no limit");
  return n;
}

/** The files `schema init` writes into a directory of the user's: their overlay on mcpgen's combined schema. */
const INIT_BASE = "base/mcpgen.schema.json";
function initFiles(): { path: string; content: string }[] {
  const ours = (name: string) => readFileSync(join(projectRoot, "schema", name), "utf8");
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return [
    { path: INIT_BASE, content: ours("schema.json") },
    {
      path: "patches.json",
      content: json({
        $comment:
          "Fixes to the base, each with `expect` (the value it replaces) and `why`; applied before the overlay.",
        patches: [],
      }),
    },
    {
      path: "overlay.json",
      content: json({
        $comment:
          "Your additions to the base: new definitions, and `extend` entries that add members to existing ones (e.g. a request to /$defs/ClientRequest/anyOf/-). `mcpgen schema build` combines them into schema.json.",
        base: INIT_BASE,
        definitions: {},
        extend: [],
      }),
    },
    { path: "methods.json", content: ours("methods.json") },
    { path: "methods.schema.json", content: ours("methods.schema.json") },
  ];
}

interface GenerateOpts {
  schema: string;
  out: string;
  methods?: string;
  templates?: string;
  runtimeImport?: string;
}

/** The schemas one generate or check run covers: the config's revisions, or the one --schema names. */
interface Run {
  /** Each schema with its sidecar, as the user named them (for messages). */
  schemas: { label: string; shown: string; schema: string; methods?: string }[];
  revisions?: RevisionConfig[];
}

/** The output directory as messages name it: as typed, or relative to the working directory when a config set it. */
function shownOut(opts: GenerateOpts, self: Command): string {
  if (self.getOptionValueSource("out") !== "config") return opts.out;
  return shownPath(opts.out);
}

function runOf(opts: GenerateOpts, self: Command): Run {
  const revisions = revisionsFor(self, configFor(self));
  if (revisions === undefined)
    return { schemas: [{ label: opts.schema, shown: opts.schema, schema: opts.schema, methods: opts.methods }] };
  return {
    schemas: revisions.map((r) => ({
      label: `${r.revision} (${shownPath(r.schema)})`,
      shown: shownPath(r.schema),
      schema: r.schema,
      ...(r.methods !== undefined ? { methods: r.methods } : {}),
    })),
    revisions,
  };
}

async function generateFrom(opts: GenerateOpts, command: string, run: Run) {
  // Loaded here, not at the top: `schema build`, `diff` and `--help` do not need the emitters.
  const { generate, generateRevisions } = await import("./generate.js");
  const shared = {
    outDir: opts.out,
    templatesDir: opts.templates,
    runtimeImport: opts.runtimeImport,
    command,
  };
  if (run.revisions)
    return generateRevisions({
      ...shared,
      revisions: run.revisions.map((r) => ({
        revision: r.revision,
        schemaFile: r.schema,
        methodsFile: r.methods,
        sdk: r.sdk === true,
      })),
    });
  return generate({ ...shared, schemaFile: opts.schema, methodsFile: opts.methods });
}

export function program(io: Io = defaultIo): Command {
  const cmd = new Command("mcpgen")
    .description("Generate a typed TypeScript SDK from the Model Context Protocol schema.")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError(false)
    .helpCommand(false)
    .addHelpText("after", OUTPUT_HELP);
  // Read only when asked for, so a missing package.json cannot break the other commands.
  cmd.option("-V, --version", "print the version of mcpgen-cli and exit").on("option:version", () => {
    const version = cliVersion();
    io.out(version);
    throw new CommanderError(0, "commander.version", version);
  });

  const common = (c: Command) =>
    c
      .option(
        "--schema <file>",
        "schema to read; given here, it is the one schema generated even when the config lists revisions",
        "schema/schema.json",
      )
      .option("--out <dir>", "output directory", "generated")
      .option(
        "--methods <file>",
        "methods sidecar: overrides of the method table derived from the schema (default: methods.json beside the schema, if there is one)",
      )
      .option("--templates <dir>", "Handlebars templates directory")
      .option("--runtime-import <specifier>", "module specifier generated code imports the runtime from")
      .exitOverride();

  common(
    cmd
      .command("generate")
      .description(
        "write the generated SDK into --out (with the config's revisions: the SDK revision there, each other's wire module in --out/<revision>/, and eras.ts)",
      ),
  ).action(async (opts, self: Command) => {
    const start = performance.now();
    const run = runOf(opts, self);
    for (const r of run.schemas) requireFile(r.schema, "schema");
    const { files, notes } = await generateFrom(opts, rerunCommand(self), run);
    for (const n of notes) io.err(`note: ${n}`);
    const written = writeFiles(opts.out, files);
    for (const f of written)
      io.out(`${f.changed ? "wrote    " : "unchanged"} ${join(shownOut(opts, self), f.path)} (${f.bytes} bytes)`);
    io.out(
      `${written.length} files, ${written.filter((f) => f.changed).length} changed, in ${Math.round(performance.now() - start)} ms`,
    );
  });

  common(
    cmd
      .command("check")
      .description(
        "fail (exit 1) when --out differs from what the schema (or every revision the config lists) generates; prints a diff per file",
      ),
  )
    .option("--diff-lines <n>", "most diff lines shown per file, 0 for all", diffLinesOption, DEFAULT_DIFF_LINES)
    .action(async (opts, self: Command) => {
      const run = runOf(opts, self);
      for (const r of run.schemas) requireFile(r.schema, "schema");
      const problems: string[] = [];
      const schemaDrifts = run.schemas.flatMap((r) => {
        const drift = combinedSchemaDrift(r.schema, opts.diffLines);
        if (drift) problems.push(`stale    ${r.shown}: ${drift.report}`);
        return drift ? [drift] : [];
      });
      // The files are generated with the command this check stands for, so the headers compare equal when
      // generate was run with the same options.
      const command = rerunCommand(self);
      const { files, notes } = await generateFrom(opts, command, run);
      for (const n of notes) io.err(`note: ${n}`);
      const drift = compareWithDisk(opts.out, files, { diffLines: opts.diffLines, headerLines: HEADER_LINES });
      problems.push(...driftReport(shownOut(opts, self), drift));
      if (problems.length) {
        // The report, diffs and its summary line are what check is run for: stdout, like the all-clear line.
        for (const p of problems) io.out(p);
        const count = drift.stale.length + drift.missing.length + drift.extra.length + schemaDrifts.length;
        const fix = [...schemaDrifts.map((d) => `\`${d.fix}\``), `\`${command}\``].join(", then ");
        io.out(`${count} file${count === 1 ? " differs" : "s differ"}: run ${fix}`);
        process.exitCode = 1;
        return;
      }
      io.out(`${files.length} files in ${shownOut(opts, self)} match ${run.schemas.map((r) => r.label).join(", ")}`);
    });

  const schema = cmd.command("schema").description("maintain the combined schema").exitOverride();
  schema
    .command("build")
    .description("rebuild schema/schema.json from the vendored base, patches.json and overlay.json")
    .option("--dir <dir>", "schema directory", "schema")
    .exitOverride()
    .action((opts) => {
      const sources = defaultSources(opts.dir);
      const { text, conflicts } = buildCombinedText(sources);
      if (conflicts.length) {
        for (const c of conflicts)
          io.err(
            `${relative(process.cwd(), c.source === "patches" ? sources.patchesFile : sources.overlayFile)}#${c.pointer}: ${c.reason}`,
          );
        throw new UsageError(
          `${conflicts.length} overlay entr${conflicts.length === 1 ? "y does" : "ies do"} not apply`,
        );
      }
      const target = join(opts.dir, "schema.json");
      writeFileSync(target, text);
      io.out(`wrote ${target}`);
    });
  schema
    .command("init")
    .description(
      "start a schema of your own in --dir: mcpgen's MCP schema as the base, an empty overlay and patch list, the methods sidecar, and schema.json built from them",
    )
    .option("--dir <dir>", "schema directory to create", "schema")
    .exitOverride()
    .action((opts) => {
      const files = initFiles();
      const taken = files
        .map((f) => join(opts.dir, f.path))
        .concat(join(opts.dir, "schema.json"))
        .filter((p) => existsSync(p));
      if (taken.length)
        throw new UsageError(`${taken.join(", ")} already exist${taken.length === 1 ? "s" : ""}; nothing was written`);
      for (const f of files) {
        const target = join(opts.dir, f.path);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, f.content);
        io.out(`wrote ${target}`);
      }
      const { text } = buildCombinedText(defaultSources(opts.dir));
      writeFileSync(join(opts.dir, "schema.json"), text);
      io.out(`wrote ${join(opts.dir, "schema.json")}`);
    });
  registerRebaseCommand(schema, io);
  registerDiffCommands(cmd, io);
  registerToolsCommands(cmd, io);
  registerConfig(cmd);
  registerWatch(cmd, io);
  registerHelpCommand(cmd, io);
  return cmd;
}

/**
 * `mcpgen help [command...]`: the help of any command, subcommands included (`mcpgen help tools pull`), on stdout.
 * Commander's own help command takes one name and falls back to the root help for a name it does not know.
 */
function registerHelpCommand(program: Command, io: Io): void {
  program
    .command("help")
    .description("show the help of a command, e.g. `mcpgen help schema build`")
    .argument("[command...]", "the command, and its subcommand")
    .exitOverride()
    .action((names: string[]) => {
      let target = program;
      const path: string[] = [];
      for (const name of names) {
        path.push(name);
        const next = target.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (next === undefined)
          throw new UsageError(`no command \`mcpgen ${path.join(" ")}\` (\`mcpgen --help\` lists the commands)`);
        target = next;
      }
      // outputHelp, not helpInformation: the same text as --help, with what addHelpText adds.
      target.outputHelp();
    });
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  process.exitCode = 0;
  try {
    await program(io).parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.help" ||
        error.code === "commander.version"
      )
        return 0;
      return 2;
    }
    if (error instanceof SchemaError) {
      for (const line of error.format().split("\n")) io.err(`error: ${line}`);
      return 2;
    }
    if (error instanceof UsageError) {
      io.err(`error: ${error.message}`);
      return 2;
    }
    io.err(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 3;
  }
}
