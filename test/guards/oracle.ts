// Shared by the guard suites: the Ajv oracle compiled from a schema (schema/schema.json for most), and the
// generated guards and explainers looked up by definition name.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv as Ajv7, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import * as guards from "../../generated/guards.js";
import * as validators from "../../generated/validators.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const schemaFile = path.resolve(repoRoot, "schema/schema.json");

/** Verdicts of Ajv on a schema's own definitions (and on the params a message declares inline). */
export interface Oracle {
  /** Every definition of the schema, in file order. */
  definitionNames: string[];
  oracleFor(name: string): (value: unknown) => boolean;
  oracleForInlineParams(message: string): (value: unknown) => boolean;
}

/**
 * The oracle for any schema: Ajv 2020-12 for a 2020-12 schema, Ajv's draft-07 class for a draft-07 one (the older
 * MCP revisions), so each is read by the rules it was written for. `key` registers it, since schemas have no $id.
 */
export function createOracle(schema: Record<string, unknown>, key: string): Oracle {
  const draft07 = String(schema["$schema"] ?? "").includes("draft-07");
  const defsKey = draft07 ? "definitions" : "$defs";
  const ajv = draft07 ? new Ajv7({ strict: false, validateFormats: false, allErrors: false }) : new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema(schema, key);
  const compiled = new Map<string, ValidateFunction>();
  const at = (cacheKey: string, pointer: string, what: string): ((value: unknown) => boolean) => {
    let fn = compiled.get(cacheKey);
    if (!fn) {
      const got = ajv.getSchema(`${key}#${pointer}`);
      if (!got) throw new Error(`Ajv has no schema for ${what}`);
      fn = got;
      compiled.set(cacheKey, fn);
    }
    const validate = fn;
    return (value) => validate(value) === true;
  };
  return {
    definitionNames: Object.keys(schema[defsKey] as Record<string, unknown>),
    // The oracle for one definition: Ajv's verdict on the original schema, not on anything mcpgen derived from it.
    oracleFor: (name) => at(name, `/${defsKey}/${name}`, name),
    // A message's inline params (no definition of their own): Ajv on the params subschema in place.
    oracleForInlineParams: (message) => at(`${message}$Params`, `/${defsKey}/${message}/properties/params`, `the params of ${message}`),
  };
}

type Guard = (value: unknown) => boolean;
type Explain = (value: unknown) => { pointer: string; message: string }[];

/** The guards and explainers of one generated SDK, looked up by definition name. */
export interface GeneratedChecks {
  guardFor(name: string): Guard;
  explainFor(name: string): Explain;
}

export function generatedChecks(guardsModule: Record<string, unknown>, validatorsModule: Record<string, unknown>, where: string): GeneratedChecks {
  return {
    guardFor(name) {
      const fn = guardsModule[`is${name}`];
      if (typeof fn !== "function") throw new Error(`${where}/guards.ts has no is${name}`);
      return fn as Guard;
    },
    explainFor(name) {
      const fn = validatorsModule[`explain${name}`];
      if (typeof fn !== "function") throw new Error(`${where}/validators.ts has no explain${name}`);
      return fn as Explain;
    },
  };
}

// The combined schema and the SDK generated from it, which most guard suites test.
const combined = createOracle(JSON.parse(readFileSync(schemaFile, "utf8")) as Record<string, unknown>, "mcp-combined");
const checks = generatedChecks(guards as Record<string, unknown>, validators as Record<string, unknown>, "generated");
/** Every definition of the combined schema, in file order. */
export const definitionNames: string[] = combined.definitionNames;
export const oracleFor = combined.oracleFor;
export const oracleForInlineParams = combined.oracleForInlineParams;
export const guardFor = checks.guardFor;
export const explainFor = checks.explainFor;

/** A JSON pointer per RFC 6901: empty, or "/"-separated tokens with "~" and "/" escaped. */
export function isJsonPointer(p: unknown): boolean {
  return typeof p === "string" && (p === "" || /^(\/([^~/]|~[01])*)+$/.test(p));
}

/** Guard, oracle and explainer verdicts for one value, so a failing assertion shows all three. */
export function verdicts(name: string, value: unknown): { guard: boolean; oracle: boolean; explainEmpty: boolean; pointersOk: boolean } {
  const issues = explainFor(name)(value);
  return {
    guard: guardFor(name)(value),
    oracle: oracleFor(name)(value),
    explainEmpty: issues.length === 0,
    pointersOk: issues.every((i) => isJsonPointer(i.pointer)),
  };
}
