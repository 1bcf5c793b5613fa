// The command that regenerates a project's SDK, as the user ran it: named in every generated header and by `check`.
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Command } from "commander";

/** What a header says when the generator was called as a library, or with no options. */
export const DEFAULT_RERUN = "mcpgen generate";

/**
 * The options of generate (and check) that decide what is generated, in the order the command names them.
 * `--watch` is left out (it does not change the output), and so is anything a config file supplied:
 * rerunning the command reads the same file.
 */
const OPTIONS: RerunOption[] = [
  { key: "config", flag: "--config", path: true },
  { key: "schema", flag: "--schema", path: true },
  { key: "methods", flag: "--methods", path: true },
  { key: "out", flag: "--out", path: true },
  { key: "templates", flag: "--templates", path: true },
  { key: "runtimeImport", flag: "--runtime-import", path: false },
];

/**
 * A path as the project names it: relative to the working directory, with forward slashes, so the header
 * (committed with the code) is the same bytes from every checkout and on every OS.
 */
/** A path as messages name it: relative to the working directory, with forward slashes ("." for the directory itself). */
export function shownPath(path: string): string {
  return relative(process.cwd(), path).split(sep).join("/") || ".";
}

function projectPath(value: string, cwd: string): string {
  const rel = relative(cwd, resolve(cwd, value));
  if (rel === "") return ".";
  return isAbsolute(rel) ? value : rel.split(sep).join("/");
}

/** Quotes a word for a POSIX shell when it needs it. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An option that decides what a command writes: its key in commander, its flag, and whether it names a path. */
export interface RerunOption {
  key: string;
  flag: string;
  path: boolean;
}

/** `words` followed by those of `options` that were given on the command line of `command`, in their order. */
export function commandWith(
  words: readonly string[],
  options: readonly RerunOption[],
  command: Command,
  cwd = process.cwd(),
): string {
  const out = [...words];
  for (const option of options) {
    if (command.getOptionValueSource(option.key) !== "cli") continue;
    const value = String(command.getOptionValue(option.key));
    out.push(option.flag, shellWord(option.path ? projectPath(value, cwd) : value));
  }
  return out.join(" ");
}

/** `mcpgen generate` with the options given on the command line of `command` (generate or check). */
export function rerunCommand(command: Command, cwd = process.cwd()): string {
  return commandWith(["mcpgen", "generate"], OPTIONS, command, cwd);
}
