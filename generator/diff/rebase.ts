// `mcpgen schema rebase`: our patches and overlay on a new upstream base, with every entry that no longer applies named.
import { buildModel } from "../build-model.js";
import { SchemaError } from "../errors.js";
import { readText } from "../json.js";
import { loadDefinitions, parseMethodsSidecar, type MethodEntry } from "../load.js";
import { buildCombinedText, type Conflict, type SchemaSources } from "../schema-build.js";
import { deriveMethods } from "./convention.js";

export interface RebaseResult {
  /** The new combined schema text, canonical like schema/schema.json. */
  text: string;
  /** Patches and overlay entries that no longer apply: left out of `text`, each with its reason. */
  conflicts: Conflict[];
  /** Sidecar problems against the new combined schema: messages it lacks, entries that no longer fit. */
  sidecar: string[];
}

/** The sidecar checked against what the new combined schema's unions declare. */
function sidecarProblems(file: string, text: string, methodsFile: string): string[] {
  const defs = loadDefinitions(file, file, text);
  const key = defs.defsPointer === "/$defs" ? "$defs" : "definitions";
  const derived = deriveMethods(defs.definitions, key).methods;
  const listed = parseMethodsSidecar(methodsFile, readText(methodsFile));
  const problems: string[] = [];
  const byMessage = new Map(listed.map((m) => [m.message, m]));
  for (const m of derived) {
    const entry = byMessage.get(m.message);
    if (!entry) problems.push(`the sidecar lacks ${m.method} (${m.kind}, ${m.direction}, message ${m.message})`);
    else if (entry.direction !== m.direction) problems.push(`${m.method}: the sidecar says ${entry.direction}, the new schema's unions say ${m.direction}`);
  }
  for (const entry of listed) {
    if (!(entry.message in defs.definitions)) problems.push(`the sidecar lists ${entry.method}, but the new schema has no ${entry.message}`);
    else if (entry.result !== undefined && !(entry.result in defs.definitions)) problems.push(`${entry.method}: the sidecar's result ${entry.result} does not exist in the new schema`);
    else if (entry.params !== undefined && !(entry.params in defs.definitions)) problems.push(`${entry.method}: the sidecar's params ${entry.params} does not exist in the new schema`);
  }
  if (problems.length === 0) {
    // What the unions do not show (kinds, params declared inline): the model builder's own checks.
    try {
      buildModel({ ...defs, methods: listed as MethodEntry[], methodsFile });
    } catch (error) {
      if (!(error instanceof SchemaError)) throw error;
      if (!/^keyword "/.test(error.message)) problems.push(error.format());
    }
  }
  return problems;
}

export function rebase(sources: Omit<SchemaSources, "baseFile">, newBaseFile: string, methodsFile: string, label = "rebased schema.json"): RebaseResult {
  const { text, conflicts } = buildCombinedText({ ...sources, baseFile: newBaseFile });
  return { text, conflicts, sidecar: sidecarProblems(label, text, methodsFile) };
}
