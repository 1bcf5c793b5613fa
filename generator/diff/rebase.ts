// `mcpgen schema rebase`: our patches and overlay on a new upstream base, with every entry that no longer applies named.
import { relative, resolve } from "node:path";
import { SchemaError, SchemaErrors } from "../errors.js";
import { readText } from "../json.js";
import { loadDefinitions, parseMethodsSidecar } from "../load.js";
import { buildCombinedText, type Conflict, type SchemaSources } from "../schema-build.js";
import { buildModelNoting } from "./source.js";

export interface RebaseResult {
  /** The new combined schema text, canonical like schema/schema.json. */
  text: string;
  /** Patches and overlay entries that no longer apply: left out of `text`, each with its reason. */
  conflicts: Conflict[];
  /** Sidecar problems against the new combined schema: entries that no longer fit it, one line each. */
  sidecar: string[];
}

/**
 * The sidecar checked against the new combined schema: overrides of methods it no longer has, of definitions it no
 * longer has, or that contradict its unions; every one of them, with its pointer.
 */
function sidecarProblems(file: string, text: string, methodsFile: string): string[] {
  const defs = loadDefinitions(file, file, text);
  let sidecar;
  try {
    sidecar = parseMethodsSidecar(methodsFile, readText(methodsFile));
    buildModelNoting({ ...defs, sidecar }, [], "NEW");
  } catch (error) {
    if (!(error instanceof SchemaError)) throw error;
    // Each line names the file as the working directory does, whatever path the sidecar was given by.
    const rel = (f: string): string => relative(process.cwd(), resolve(f)) || f;
    return (error instanceof SchemaErrors ? error.errors : [error]).map((e) =>
      new SchemaError(rel(e.file), e.message, e.where).format(),
    );
  }
  return [];
}

export function rebase(
  sources: Omit<SchemaSources, "baseFile">,
  newBaseFile: string,
  methodsFile: string,
  label = "rebased schema.json",
): RebaseResult {
  const { text, conflicts } = buildCombinedText({ ...sources, baseFile: newBaseFile });
  return { text, conflicts, sidecar: sidecarProblems(label, text, methodsFile) };
}
