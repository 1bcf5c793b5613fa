// Shared by the guard suites: the Ajv 2020-12 oracle compiled from a schema file (schema/schema.json by default),
// and the generated guards and explainers looked up by definition name.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Ajv as AjvDraft7, type ValidateFunction } from "ajv";
import * as guards from "../../generated/guards.js";
import * as validators from "../../generated/validators.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const schemaFile = path.resolve(repoRoot, "schema/schema.json");

export type Guard = (value: unknown) => boolean;
export type Explain = (value: unknown) => { pointer: string; message: string }[];

export interface Oracle {
  /** Every definition of the schema, in file order. */
  definitionNames: string[];
  /** Ajv's verdict for one definition on the original schema, not on anything mcpgen derived from it. */
  oracleFor(name: string): Guard;
  /** Ajv on a message's inline params (no definition of their own), checked in place in the message. */
  oracleForInlineParams(message: string): Guard;
}

/** The oracle for a schema file, by Ajv for its dialect: 2020-12 (`$defs`) or draft-07 (`definitions`, older MCP revisions). */
export function createOracle(file: string): Oracle {
  const schema = JSON.parse(readFileSync(file, "utf8")) as {
    $schema?: string;
    $defs?: Record<string, unknown>;
    definitions?: Record<string, unknown>;
  };
  const defsKey = schema.$defs ? "$defs" : "definitions";
  // The schemas have no $id, so each is registered under a key of our own and a definition is reached by pointer.
  const key = "mcp-oracle";
  const options = { strict: false, validateFormats: false, allErrors: false };
  const ajv = String(schema.$schema ?? "").includes("draft-07") ? new AjvDraft7(options) : new Ajv2020(options);
  ajv.addSchema(schema, key);
  const compiled = new Map<string, ValidateFunction>();
  const lookup = (id: string, pointer: string): Guard => {
    let fn = compiled.get(id);
    if (!fn) {
      fn = ajv.getSchema(`${key}#/${defsKey}/${pointer}`);
      if (!fn) throw new Error(`Ajv has no schema at ${pointer}`);
      compiled.set(id, fn);
    }
    const validate = fn;
    return (value) => validate(value) === true;
  };
  return {
    definitionNames: Object.keys(schema[defsKey] ?? {}),
    oracleFor: (name) => lookup(name, name),
    oracleForInlineParams: (message) => lookup(`${message}$Params`, `${message}/properties/params`),
  };
}

const bundled = createOracle(schemaFile);
/** Every definition of the combined schema, in file order. */
export const definitionNames: string[] = bundled.definitionNames;
export const oracleFor = bundled.oracleFor;
export const oracleForInlineParams = bundled.oracleForInlineParams;

/** Looks up `<prefix><name>` in a generated module (guards: "is", validators: "explain"). */
export function exported<T>(module: Record<string, unknown>, prefix: string, name: string, file: string): T {
  const fn = module[`${prefix}${name}`];
  if (typeof fn !== "function") throw new Error(`${file} has no ${prefix}${name}`);
  return fn as T;
}

export function guardFor(name: string): Guard {
  return exported<Guard>(guards, "is", name, "generated/guards.ts");
}

export function explainFor(name: string): Explain {
  return exported<Explain>(validators, "explain", name, "generated/validators.ts");
}

/** A JSON pointer per RFC 6901: empty, or "/"-separated tokens with "~" and "/" escaped. */
export function isJsonPointer(p: unknown): boolean {
  return typeof p === "string" && (p === "" || /^(\/([^~/]|~[01])*)+$/.test(p));
}

/** Guard, oracle and explainer verdicts for one value, so a failing assertion shows all three. */
export function verdicts(
  name: string,
  value: unknown,
): { guard: boolean; oracle: boolean; explainEmpty: boolean; pointersOk: boolean } {
  const issues = explainFor(name)(value);
  return {
    guard: guardFor(name)(value),
    oracle: oracleFor(name)(value),
    explainEmpty: issues.length === 0,
    pointersOk: issues.every((i) => isJsonPointer(i.pointer)),
  };
}
