// A small JSON Schema checker for tool arguments (type, required, properties, items, enum, const, anyOf, oneOf); pluggable for a full validator.
import type { JsonSchema } from "./types.js";
import { pointerPart } from "../validation/explain.js";

/** Checks one value; returns human-readable problems, empty when the value is acceptable. */
export type SchemaCheck = (value: unknown) => readonly string[];

/** Turns a schema into a check, once per registration. Plug in a full validator (e.g. Ajv) here. */
export type SchemaCompiler = (schema: JsonSchema) => SchemaCheck;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(name: string, actual: string): boolean {
  return name === actual || (name === "number" && actual === "integer");
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function check(schema: JsonSchema, value: unknown, at: string, out: string[]): void {
  const type = schema.type;
  if (type !== undefined) {
    const actual = typeOf(value);
    const ok = typeof type === "string" ? matchesType(type, actual) : type.some((t) => matchesType(t, actual));
    if (!ok) {
      out.push(`${at || "/"}: expected ${typeof type === "string" ? type : type.join(" or ")}, got ${actual}`);
      return;
    }
  }
  if (schema.const !== undefined && !sameJson(schema.const, value))
    out.push(`${at || "/"}: must be ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.some((e) => sameJson(e, value))) {
    out.push(`${at || "/"}: must be one of ${JSON.stringify(schema.enum)}`);
  }
  // The argument types infer anyOf and oneOf as unions, so the handler must never see a value outside them.
  const anyOf = branches(schema.anyOf);
  if (anyOf !== undefined && !anyOf.some((branch) => fits(branch, value)))
    out.push(`${at || "/"}: must match a schema of anyOf`);
  const oneOf = branches(schema.oneOf);
  if (oneOf !== undefined) {
    const matched = oneOf.filter((branch) => fits(branch, value)).length;
    if (matched !== 1) out.push(`${at || "/"}: must match exactly one schema of oneOf, matches ${matched}`);
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const object = value as { [key: string]: unknown };
    if (schema.required !== undefined) {
      for (const name of schema.required) {
        if (!Object.hasOwn(object, name)) out.push(`${at || "/"}: missing required property "${name}"`);
      }
    }
    const properties = schema.properties;
    for (const key of Object.keys(object)) {
      const sub = properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (sub !== undefined) check(sub, object[key], at + pointerPart(key), out);
      else if (schema.additionalProperties === false) out.push(`${at || "/"}: unexpected property "${key}"`);
      else if (typeof schema.additionalProperties === "object")
        check(schema.additionalProperties, object[key], at + pointerPart(key), out);
    }
  } else if (Array.isArray(value) && schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) check(schema.items, value[i], at + pointerPart(i), out);
  }
}

function branches(keyword: unknown): readonly unknown[] | undefined {
  return Array.isArray(keyword) ? keyword : undefined;
}

/** Whether a value fits one branch; `true`/`false` are schemas too, and what is not a schema does not restrict. */
function fits(branch: unknown, value: unknown): boolean {
  if (typeof branch === "boolean") return branch;
  if (typeof branch !== "object" || branch === null) return true;
  const out: string[] = [];
  check(branch as JsonSchema, value, "", out);
  return out.length === 0;
}

const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/** The built-in compiler: enough for the flat object schemas tools usually declare. */
export const compileSchema: SchemaCompiler = (schema) => (value) => {
  const out: string[] = [];
  check(schema, value, "", out);
  return out.length === 0 ? NO_PROBLEMS : out;
};
