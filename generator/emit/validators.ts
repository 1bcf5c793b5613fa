// Emits validators.ts: the schema's definitions as one compact table (annotations stripped, each definition once,
// references kept as references) and explainX(value) per definition, which the runtime's explainSchema interprets.
import { paramsCarriers, paramsGuardName, type Model } from "../model.js";
import { header } from "./header.js";
import { schemaOf } from "./schema-of.js";

/**
 * The runtime entry the interpreter comes from. Bundles for a browser or a worker load this file too, so an
 * in-repository runtime path is pointed at web.js, the runtime without Node built-ins; a package specifier
 * ("mcpgen/runtime") picks that build itself, by its browser condition.
 */
function webRuntime(runtimeImport: string): string {
  return runtimeImport.endsWith("/index.js") ? `${runtimeImport.slice(0, -"index.js".length)}web.js` : runtimeImport;
}

export function emitValidators(model: Model, runtimeImport: string): string {
  const definitions: [string, unknown][] = [];
  const ref = (name: string) => ({ $ref: `#/definitions/${name.replace(/~/g, "~0").replace(/\//g, "~1")}` });
  for (const d of model.definitions) definitions.push([d.name, schemaOf(d.node, { descriptions: false, ref })]);
  // Params declared inline in a message get a definition of their own, named as their guard is.
  const inline = paramsCarriers(model).filter((m) => m.params.ref === undefined);
  for (const m of inline) definitions.push([paramsGuardName(m), schemaOf(m.params, { descriptions: false, ref })]);
  const out = [
    header(
      model,
      "Detailed validators: the schema's definitions as a table the runtime interprets (explainSchema), loaded on demand by the dispatch tables.",
    ),
    "/* eslint-disable */",
    `import { explainSchema, type ExplainOptions, type ValidationIssue } from "${webRuntime(runtimeImport)}";`,
    "",
    "// One definition per line, so a stale file's diff points at the definition that changed.",
    "const definitions: { readonly [name: string]: unknown } = {",
    ...definitions.map(([name, schema]) => `  ${JSON.stringify(name)}: ${JSON.stringify(schema)},`),
    "};",
    "const document = { definitions };",
    "",
    "/** The explainer of one definition: its issues with JSON pointers into the value, empty when the value is one. */",
    "const explainer =",
    "  (name: string) =>",
    "  (value: unknown, options?: ExplainOptions): ValidationIssue[] =>",
    "    explainSchema(definitions[name], value, { ...options, document });",
    "",
  ];
  for (const d of model.definitions) {
    out.push(`/** Why a value is not a ${d.name}: JSON-pointer issues, empty when it is one. */`);
    out.push(`export const explain${d.name} = explainer(${JSON.stringify(d.name)});`);
  }
  for (const m of inline) {
    out.push(`/** Why a value is not the params of ${m.method}. */`);
    out.push(`export const explain${paramsGuardName(m)} = explainer(${JSON.stringify(paramsGuardName(m))});`);
  }
  out.push("");
  return out.join("\n");
}
