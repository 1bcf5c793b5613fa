// Shared by the guard suites: the Ajv 2020-12 oracle compiled from schema/schema.json, and the generated guards
// and explainers looked up by definition name.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import * as guards from "../../generated/guards.js";
import * as validators from "../../generated/validators.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const schemaFile = path.resolve(repoRoot, "schema/schema.json");

const schema = JSON.parse(readFileSync(schemaFile, "utf8")) as { $defs: Record<string, unknown> };
/** Every definition of the combined schema, in file order. */
export const definitionNames: string[] = Object.keys(schema.$defs);

// The schema has no $id, so it is registered under a key of our own and each definition is reached by pointer.
const SCHEMA_KEY = "mcp-combined";
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
ajv.addSchema(schema, SCHEMA_KEY);

const compiled = new Map<string, ValidateFunction>();
/** The oracle for one definition: Ajv's verdict on the original schema, not on anything mcpgen derived from it. */
export function oracleFor(name: string): (value: unknown) => boolean {
  let fn = compiled.get(name);
  if (!fn) {
    const got = ajv.getSchema(`${SCHEMA_KEY}#/$defs/${name}`);
    if (!got) throw new Error(`Ajv has no schema for ${name}`);
    fn = got;
    compiled.set(name, fn);
  }
  const validate = fn;
  return (value) => validate(value) === true;
}

/** The oracle for a message's inline params (no definition of their own): Ajv on the params subschema in place. */
export function oracleForInlineParams(message: string): (value: unknown) => boolean {
  const key = `${message}$Params`;
  let fn = compiled.get(key);
  if (!fn) {
    const got = ajv.getSchema(`${SCHEMA_KEY}#/$defs/${message}/properties/params`);
    if (!got) throw new Error(`Ajv has no params schema for ${message}`);
    fn = got;
    compiled.set(key, fn);
  }
  const validate = fn;
  return (value) => validate(value) === true;
}

type Guard = (value: unknown) => boolean;
type Explain = (value: unknown) => { pointer: string; message: string }[];

export function guardFor(name: string): Guard {
  const fn = (guards as Record<string, unknown>)[`is${name}`];
  if (typeof fn !== "function") throw new Error(`generated/guards.ts has no is${name}`);
  return fn as Guard;
}

export function explainFor(name: string): Explain {
  const fn = (validators as Record<string, unknown>)[`explain${name}`];
  if (typeof fn !== "function") throw new Error(`generated/validators.ts has no explain${name}`);
  return fn as Explain;
}

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
