// Emits validators.ts: Ajv standalone code compiled at generate time (no schema compilation at run time),
// wrapped so each definition has explainX(value) returning JSON-pointer issues; the explainers are its only exports.
import { _, Ajv, str, type KeywordCxt } from "ajv";
import * as standaloneModule from "ajv/dist/standalone/index.js";
import { paramsCarriers, paramsGuardName, type Model } from "../model.js";
import { header } from "./header.js";
import { schemaOf } from "./schema-of.js";

/** Where in an array a repeated item first shows: [earlier index, later index], or null. Linear in the array's size. */
const FIRST_DUPLICATE = `function _firstDuplicate(a) {
  const seen = new Map();
  for (let i = 0; i < a.length; i++) {
    const item = a[i];
    // Scalars under their own value (SameValueZero: 0 and -0 are one number); objects and arrays under a canonical
    // text, prefixed so that no string item can collide with one.
    const key = typeof item === "object" && item !== null ? "\\u0000" + _canonical(item) : typeof item === "string" ? "\\u0001" + item : item;
    const j = seen.get(key);
    if (j !== undefined) return [j, i];
    seen.set(key, i);
  }
  return null;
}
function _canonical(v) {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v !== "object" || v === null) return String(v);
  if (Array.isArray(v)) return "[" + v.map(_canonical).join(",") + "]";
  return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + _canonical(v[k])).join(",") + "}";
}`;

/**
 * Ajv checks uniqueItems over objects and arrays by comparing every pair, quadratic in a length the peer
 * chooses; this keyword finds the first repeat in one pass (the emitted file defines _firstDuplicate), with
 * Ajv's message.
 */
function useLinearUniqueItems(ajv: Ajv): void {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    error: {
      message: ({ params }) =>
        str`must NOT have duplicate items (items ## ${params["j"]} and ${params["i"]} are identical)`,
      params: ({ params }) => _`{i: ${params["i"]}, j: ${params["j"]}}`,
    },
    code(cxt: KeywordCxt) {
      if (cxt.schema !== true) return;
      const find = cxt.gen.scopeValue("func", { ref: () => null, code: _`_firstDuplicate` });
      const dup = cxt.gen.const("dup", _`${find}(${cxt.data})`);
      cxt.setParams({ i: _`${dup}[1]`, j: _`${dup}[0]` });
      cxt.fail(_`${dup} !== null`);
    },
  });
}

/** Stand-ins for the Ajv runtime helpers standalone code requires: JSON equality and code point length. */
const AJV_RUNTIME = {
  equal: {
    name: "_jsonEqual",
    source: `function _jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !_jsonEqual(a[k], b[k])) return false;
  return true;
}`,
  },
  ucs2length: {
    name: "_codePoints",
    source: `function _codePoints(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}`,
  },
} as const;

export function emitValidators(model: Model, runtimeImport: string): string {
  // The model only uses keywords that mean the same in draft-07, and Ajv's draft-07 code is far smaller than
  // its 2020-12 code (no evaluated-properties bookkeeping). Refs stay functions, not inlined copies.
  const definitions: Record<string, unknown> = {};
  const ref = (name: string) => ({ $ref: `#/definitions/${name}` });
  for (const d of model.definitions) definitions[d.name] = schemaOf(d.node, { descriptions: false, ref });
  // Params declared inline in a message get a definition of their own, named as their guard is.
  const inline = paramsCarriers(model).filter((m) => m.params.ref === undefined);
  for (const m of inline) definitions[paramsGuardName(m)] = schemaOf(m.params, { descriptions: false, ref });
  const ajv = new Ajv({
    code: { source: true, esm: true, lines: false, optimize: false },
    strict: false,
    // Unknown keywords are an error, not skipped: a keyword the model carries but Ajv did not read would leave the
    // validators laxer than the guards without a word.
    strictSchema: true,
    allErrors: false,
    validateFormats: false,
    inlineRefs: false,
    // The source schema was checked against its meta-schema when loaded; this one is derived from the model.
    validateSchema: false,
  });
  useLinearUniqueItems(ajv);
  ajv.addSchema({ definitions }, "mcp");
  const exports: Record<string, string> = {};
  for (const d of model.definitions) exports[`v_${d.name}`] = `mcp#/definitions/${d.name}`;
  for (const m of inline) exports[`v_${paramsGuardName(m)}`] = `mcp#/definitions/${paramsGuardName(m)}`;
  const standalone = standaloneModule.default as unknown as (ajv: Ajv, refs: Record<string, string>) => string;
  let code = standalone(ajv, exports);
  // Ajv's code for uniqueItems, const and enum of objects and arrays, and string lengths calls two helpers of its
  // own package; the file carries its own equivalents instead, since generated code may import only the runtime.
  const used = new Set<keyof typeof AJV_RUNTIME>();
  code = code.replace(
    /require\("ajv\/dist\/runtime\/(equal|ucs2length)"\)\.default/g,
    (_m, which: keyof typeof AJV_RUNTIME) => {
      used.add(which);
      return AJV_RUNTIME[which].name;
    },
  );
  if (/require\(/.test(code))
    throw new Error("Ajv standalone code needs a runtime import; generated code may import only the runtime");
  // The Ajv functions stay private: the file is not type-checked (`@ts-nocheck`), so anything exported without a
  // written type would reach the emitted declarations as untyped code that fails a consumer's strict check.
  code = code.replace(/(^|[;}])export const (v_[\w$]+ = )/g, "$1\nconst $2");
  if (/(^|[;}\n])export (const|function|default|\{)/.test(code))
    throw new Error("Ajv standalone code exports something other than the named validators");
  // One validator function per line, so a stale file's diff points at the definition that changed.
  code = code.replace(/^"use strict";/, "").replace(/;(const schema\d+ = |function validate\d+\()/g, ";\n$1");
  const out = [
    header(
      model,
      "Detailed validators: Ajv standalone code, compiled when the SDK was generated; the dispatch tables load it on demand.",
    ),
    "// @ts-nocheck",
    "/* eslint-disable */",
    `import type { ValidationIssue } from "${runtimeImport}";`,
    code.trim(),
    "",
    ...[...used].sort().map((which) => AJV_RUNTIME[which].source + "\n"),
    ...(/\b_firstDuplicate\b/.test(code) ? [FIRST_DUPLICATE, ""] : []),
    "type AjvFn = ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }[] | null };",
    "function _issues(fn: AjvFn, value: unknown): ValidationIssue[] {",
    "  if (fn(value)) return [];",
    '  return (fn.errors ?? []).map((e) => ({ pointer: e.instancePath, message: e.keyword === "additionalProperties" ? `${e.message} (${String(e.params.additionalProperty)})` : e.keyword === "required" ? `missing required property ${JSON.stringify(e.params.missingProperty)}` : e.message ?? e.keyword }));',
    "}",
    "",
  ];
  for (const d of model.definitions) {
    out.push(`/** Why a value is not a ${d.name}: JSON-pointer issues, empty when it is one. */`);
    out.push(
      `export function explain${d.name}(value: unknown): ValidationIssue[] { return _issues(v_${d.name} as AjvFn, value); }`,
    );
  }
  for (const m of inline) {
    out.push(`/** Why a value is not the params of ${m.method}. */`);
    out.push(
      `export function explain${paramsGuardName(m)}(value: unknown): ValidationIssue[] { return _issues(v_${paramsGuardName(m)} as AjvFn, value); }`,
    );
  }
  out.push("");
  return out.join("\n");
}
