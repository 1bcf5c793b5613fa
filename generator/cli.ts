// The mcpgen command line: generate, check, and schema build; errors become exit codes (1 drift, 2 bad input).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Command, CommanderError } from "commander";
import { SchemaError } from "./errors.js";
import { compareWithDisk, shortDiff, writeFiles } from "./files.js";
import { buildCombinedText, defaultSources } from "./schema-build.js";
import { registerDiffCommands, registerRebaseCommand } from "./diff/cli.js";
import { registerConfig } from "./config.js";
import { registerWatch } from "./watch.js";

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(l + "\n"), err: (l) => process.stderr.write(l + "\n") };

/** Exit code 2 with a message: the input was bad (missing file, invalid JSON, dangling $ref, unmapped method). */
class UsageError extends Error {}

function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw new SchemaError(path, `${what}: no such file`);
}

/** When the schema was built from base + overlay, it must equal what the build makes now. */
function combinedSchemaDrift(schemaFile: string): string | undefined {
  const dir = dirname(resolve(schemaFile));
  const sources = defaultSources(dir);
  if (!existsSync(sources.overlayFile) || !existsSync(sources.baseFile) || !existsSync(sources.patchesFile)) return undefined;
  const { text, conflicts } = buildCombinedText(sources);
  if (conflicts.length) return `the overlay no longer applies: ${conflicts.map((c) => `${c.source}#${c.pointer}: ${c.reason}`).join("; ")}`;
  const onDisk = readFileSync(schemaFile, "utf8");
  return onDisk === text ? undefined : `is stale: it differs from base + patches + overlay (run \`mcpgen schema build\`)\n${shortDiff(text, onDisk)}`;
}

interface GenerateOpts {
  schema: string;
  out: string;
  methods?: string;
  templates?: string;
  runtimeImport?: string;
}

async function generateFrom(opts: GenerateOpts) {
  // Loaded here, not at the top: the emitters pull in json-schema-to-typescript, Handlebars and Ajv (~0.13 s),
  // which `schema build`, `diff` and `--help` do not need.
  const { generate } = await import("./generate.js");
  const { files } = await generate({ schemaFile: opts.schema, outDir: opts.out, methodsFile: opts.methods, templatesDir: opts.templates, runtimeImport: opts.runtimeImport });
  return files;
}

export function program(io: Io = defaultIo): Command {
  const cmd = new Command("mcpgen")
    .description("Generate a typed TypeScript SDK from the Model Context Protocol schema.")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError(false);

  const common = (c: Command) =>
    c
      .option("--schema <file>", "schema to read", "schema/schema.json")
      .option("--out <dir>", "output directory", "generated")
      .option("--methods <file>", "methods sidecar (default: methods.json beside the schema)")
      .option("--templates <dir>", "Handlebars templates directory")
      .option("--runtime-import <specifier>", "module specifier generated code imports the runtime from")
      .exitOverride();

  common(cmd.command("generate").description("write the generated SDK into --out")).action(async (opts) => {
    const start = performance.now();
    requireFile(opts.schema, "schema");
    const files = await generateFrom(opts);
    const written = writeFiles(opts.out, files);
    for (const f of written) io.out(`${f.changed ? "wrote    " : "unchanged"} ${join(opts.out, f.path)} (${f.bytes} bytes)`);
    io.out(`${written.length} files, ${written.filter((f) => f.changed).length} changed, in ${Math.round(performance.now() - start)} ms`);
  });

  common(cmd.command("check").description("fail (exit 1) when --out differs from what the schema generates")).action(async (opts) => {
    requireFile(opts.schema, "schema");
    const problems: string[] = [];
    const schemaDrift = combinedSchemaDrift(opts.schema);
    if (schemaDrift) problems.push(`stale    ${opts.schema} ${schemaDrift}`);
    const files = await generateFrom(opts);
    const drift = compareWithDisk(opts.out, files);
    for (const s of drift.stale) problems.push(`stale    ${join(opts.out, s.path)}\n${s.diff}`);
    for (const m of drift.missing) problems.push(`missing  ${join(opts.out, m)}`);
    for (const e of drift.extra) problems.push(`extra    ${join(opts.out, e)}`);
    if (problems.length) {
      for (const p of problems) io.err(p);
      io.err(`${problems.length} difference(s): run \`npm run generate\``);
      process.exitCode = 1;
      return;
    }
    io.out(`${files.length} files in ${opts.out} match ${opts.schema}`);
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
        for (const c of conflicts) io.err(`${relative(process.cwd(), c.source === "patches" ? sources.patchesFile : sources.overlayFile)}#${c.pointer}: ${c.reason}`);
        throw new UsageError(`${conflicts.length} overlay entr${conflicts.length === 1 ? "y does" : "ies do"} not apply`);
      }
      const target = join(opts.dir, "schema.json");
      writeFileSync(target, text);
      io.out(`wrote ${target}`);
    });
  registerRebaseCommand(schema, io);
  registerDiffCommands(cmd, io);
  registerConfig(cmd);
  registerWatch(cmd, io);
  return cmd;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  process.exitCode = 0;
  try {
    await program(io).parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.help" || error.code === "commander.version") return 0;
      return 2;
    }
    if (error instanceof SchemaError) {
      io.err(`error: ${error.format()}`);
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
