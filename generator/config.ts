// mcpgen.config.json: project settings for generate and check, validated against schema/mcpgen.config.schema.json.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { SchemaError } from "./errors.js";
import { parseJsonText, readText } from "./json.js";
import { projectSchemaValidator } from "./load.js";
import { escapeToken } from "./pointer.js";

export interface McpgenConfig {
  schema?: string;
  out?: string;
  methods?: string;
  overlay?: string;
  patches?: string;
  templates?: string;
  emit?: { runtimeImport?: string };
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
  const base = dirname(resolve(file));
  const rel = (p: string | undefined): string | undefined => (p === undefined ? undefined : resolve(base, p));
  const out: McpgenConfig = {};
  for (const key of ["schema", "out", "methods", "overlay", "patches", "templates"] as const) {
    const v = rel(config[key]);
    if (v !== undefined) out[key] = v;
  }
  if (config.emit) out.emit = { ...config.emit };
  return out;
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
