// mcpgen.config.json: project settings for generate and check, validated against schema/mcpgen.config.schema.json.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { SchemaError } from "./errors.js";
import { parseJsonText, readText } from "./json.js";
import { projectSchemaValidator } from "./load.js";
import { escapeToken } from "./pointer.js";

/** One protocol revision of a multi-revision config: its combined schema and methods sidecar. */
export interface RevisionConfig {
  revision: string;
  schema: string;
  methods?: string;
  /** The revision the stubs and handler types come from. */
  sdk?: true;
}

/** One server whose tool catalogue the project keeps (see `mcpgen tools`); paths relative to the working directory. */
export interface ToolsConfig {
  catalogue: string;
  server?: string;
  url?: string;
  header?: string[];
  env?: string[];
  out?: string;
  sdkImport?: string;
}

export interface McpgenConfig {
  schema?: string;
  out?: string;
  methods?: string;
  overlay?: string;
  patches?: string;
  templates?: string;
  emit?: { runtimeImport?: string };
  /** Several revisions, each with its schema, in place of `schema` and `methods`. */
  revisions?: RevisionConfig[];
  /** The servers whose tool catalogues `mcpgen tools` pulls, generates bindings for and checks. */
  tools?: ToolsConfig[];
}

export const CONFIG_FILE = "mcpgen.config.json";

/** Reads and validates a config file; paths in it become relative to the working directory. */
export function loadConfig(file: string): McpgenConfig {
  const value = parseJsonText(readText(file), file);
  const validator = projectSchemaValidator("schema/mcpgen.config.schema.json");
  if (!validator(value)) {
    const err = validator.errors![0]!;
    const extra =
      err.keyword === "additionalProperties"
        ? String((err.params as { additionalProperty: string }).additionalProperty)
        : undefined;
    const pointer = extra === undefined ? err.instancePath : `${err.instancePath}/${escapeToken(extra)}`;
    const message = extra === undefined ? (err.message ?? "invalid") : `unknown setting "${extra}"`;
    throw new SchemaError(file, `${message} (see schema/mcpgen.config.schema.json)`, pointer);
  }
  const config = value as McpgenConfig;
  if (config.revisions) checkRevisions(file, config);
  const base = dirname(resolve(file));
  const rel = (p: string | undefined): string | undefined => (p === undefined ? undefined : resolve(base, p));
  const out: McpgenConfig = {};
  for (const key of ["schema", "out", "methods", "overlay", "patches", "templates"] as const) {
    const v = rel(config[key]);
    if (v !== undefined) out[key] = v;
  }
  if (config.emit) out.emit = { ...config.emit };
  if (config.tools) {
    // The command line of a server is run from the working directory as typed; only files move with the config.
    out.tools = config.tools.map((t) => ({
      ...t,
      catalogue: resolve(base, t.catalogue),
      ...(t.out !== undefined ? { out: resolve(base, t.out) } : {}),
    }));
  }
  if (config.revisions) {
    // The SDK revision is always marked, so nothing downstream repeats the default.
    const marked = config.revisions.findIndex((r) => r.sdk);
    const sdk = marked < 0 ? 0 : marked;
    out.revisions = config.revisions.map((r, i) => ({
      revision: r.revision,
      schema: resolve(base, r.schema),
      ...(r.methods !== undefined ? { methods: resolve(base, r.methods) } : {}),
      ...(i === sdk ? { sdk: true as const } : {}),
    }));
  }
  return out;
}

/** What the meta-schema cannot say clearly: one name per revision, one SDK revision, no single-schema settings beside. */
function checkRevisions(file: string, config: McpgenConfig): void {
  const revisions = config.revisions!;
  const own = {
    schema: "each names its own schema",
    methods: "each names its own methods sidecar",
    overlay: "each revision's overlay lies beside its schema",
    patches: "each revision's patches lie beside its schema",
  } as const;
  for (const key of ["schema", "methods", "overlay", "patches"] as const)
    if (config[key] !== undefined)
      throw new SchemaError(
        file,
        `"${key}" and "revisions" exclude each other: with revisions, ${own[key]}`,
        `/${key}`,
      );
  const seen = new Map<string, number>();
  revisions.forEach((r, i) => {
    const first = seen.get(r.revision);
    if (first !== undefined)
      throw new SchemaError(
        file,
        `revision ${r.revision} is listed twice (first at /revisions/${first})`,
        `/revisions/${i}/revision`,
      );
    seen.set(r.revision, i);
  });
  const marked = revisions.map((r, i) => (r.sdk ? i : -1)).filter((i) => i >= 0);
  if (marked.length > 1)
    throw new SchemaError(
      file,
      `only one revision can be the SDK's (the stubs are one set); ${marked.map((i) => revisions[i]!.revision).join(" and ")} are marked`,
      `/revisions/${marked[1]}/sdk`,
    );
}

/** Command option name for each setting; settings without a flag (overlay, patches) are read by the watcher. */
const FLAGS: [keyof McpgenConfig | "runtimeImport", string][] = [
  ["schema", "schema"],
  ["out", "out"],
  ["methods", "methods"],
  ["templates", "templates"],
  ["runtimeImport", "runtimeImport"],
];

/** Fills the options the user did not pass from the config; a flag always wins. */
export function applyConfig(command: Command, config: McpgenConfig): void {
  for (const [setting, option] of FLAGS) {
    const value = setting === "runtimeImport" ? config.emit?.runtimeImport : config[setting];
    if (value === undefined) continue;
    const source = command.getOptionValueSource(option);
    if (source === "cli" || source === "env") continue;
    command.setOptionValueWithSource(option, value, "config");
  }
}

/** The config a command uses: --config when given, else mcpgen.config.json in the working directory if there is one. */
export function configFor(command: Command): McpgenConfig | undefined {
  const named = command.getOptionValue("config") as string | undefined;
  if (named !== undefined) return loadConfig(named);
  return existsSync(CONFIG_FILE) ? loadConfig(CONFIG_FILE) : undefined;
}

/**
 * The revisions a generate or check run covers: the config's, unless --schema or --methods on the command line
 * asks for one schema (a flag always wins). Undefined: a single-schema run, as without revisions.
 */
export function revisionsFor(command: Command, config: McpgenConfig | undefined): RevisionConfig[] | undefined {
  if (!config?.revisions) return undefined;
  const fromCli = (option: string): boolean => {
    const source = command.getOptionValueSource(option);
    return source === "cli" || source === "env";
  };
  if (fromCli("schema")) return undefined;
  if (fromCli("methods"))
    throw new SchemaError(
      (command.getOptionValue("config") as string | undefined) ?? CONFIG_FILE,
      "--methods names one sidecar, but the config lists revisions, each with its own: give --schema too to generate one schema",
    );
  return config.revisions;
}

/** Adds --config to generate and check and applies the config before either runs. */
export function registerConfig(program: Command): void {
  for (const command of program.commands.filter((c) => c.name() === "generate" || c.name() === "check")) {
    command.option("--config <file>", `settings file (default: ${CONFIG_FILE} in the working directory, if present)`);
    command.hook("preAction", (self) => {
      const config = configFor(self);
      if (config) applyConfig(self, config);
    });
  }
}
