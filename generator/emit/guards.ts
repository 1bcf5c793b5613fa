// Emits guards.ts: a plain-code predicate isX(value): value is X for every definition, with no schema
// interpretation at run time. Tagged unions switch on their tag; unknown keys are allowed unless closed.
import { paramsCarriers, paramsGuardName, type JsonValue, type Model, type SchemaNode } from "../model.js";
import { header } from "./header.js";

const lit = (value: JsonValue): string => JSON.stringify(value);
const prop = (name: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;

/**
 * Writes guard expressions; nested objects, arrays and tagged unions become helper functions. Helpers are
 * shared by body: the same inline shape (every `_meta`, say) is checked by one function, not one per owner.
 */
class GuardWriter {
  /** Helper body to helper name, in order of first use. */
  readonly helpers = new Map<string, string>();

  private helper(body: (v: string) => string[]): string {
    const text = body("v")
      .map((l) => "  " + l)
      .join("\n");
    let name = this.helpers.get(text);
    if (name === undefined) {
      name = `_g${this.helpers.size}`;
      this.helpers.set(text, name);
    }
    return name;
  }

  /** The helper functions, in order of first use. */
  helperSource(): string[] {
    return [...this.helpers].map(([text, name]) => `function ${name}(v: any): boolean {\n${text}\n}`);
  }

  /** A boolean expression checking `x` against `node`; `x` must be free of side effects. */
  expr(node: SchemaNode, x: string): string {
    if (node.ref !== undefined) return `is${node.ref}(${x})`;
    if (node.anyOf) return this.union(node, x);
    if (node.allOf) return node.allOf.length ? `(${node.allOf.map((m) => this.expr(m, x)).join(" && ")})` : "true";
    const extraChecked = node.additional !== undefined && node.additional !== "open";
    const needsHelper =
      node.properties !== undefined ||
      node.required !== undefined ||
      extraChecked ||
      node.items !== undefined ||
      node.propertyNames !== undefined ||
      node.dependentRequired !== undefined;
    if (needsHelper) return `${this.helper((v) => this.valueStatements(node, v))}(${x})`;
    const parts = this.valueChecks(node, x);
    return parts.length ? parts.join(" && ") : "true";
  }

  private union(node: SchemaNode, x: string): string {
    const members = node.anyOf!;
    if (members.length === 0) return "false";
    const tag = node.discriminator;
    if (!tag) return `(${members.map((m) => this.expr(m, x)).join(" || ")})`;
    const name = this.helper((v) => [
      `if (typeof ${v} !== "object" || ${v} === null) return false;`,
      `switch (${v}${prop(tag.key)}) {`,
      ...tag.cases.map((c) => `  case ${lit(c.value)}: return ${this.expr(members[c.member]!, v)};`),
      `  default: return false;`,
      `}`,
    ]);
    return `${name}(${x})`;
  }

  /**
   * Type, const, enum, range, length, pattern, size, not and if/then/else checks, as expressions that must all
   * hold. A keyword for one JSON type lets other types pass, so its check is prefixed by a type test unless the
   * node's types already rule the others out.
   */
  private valueChecks(node: SchemaNode, x: string): string[] {
    const out: string[] = [];
    if (node.types !== undefined) out.push(this.typeCheck(node.types, x));
    if (node.const !== undefined) out.push(this.equals(node.const, x));
    if (node.enum !== undefined)
      out.push(node.enum.length ? `(${node.enum.map((e) => this.equals(e, x)).join(" || ")})` : "false");
    const only = (...accepted: string[]): boolean =>
      node.types !== undefined && node.types.every((t) => accepted.includes(t));
    const numberGuard = only("number", "integer") ? "" : `typeof ${x} !== "number" || `;
    if (node.minimum !== undefined) out.push(`(${numberGuard}${x} >= ${node.minimum})`);
    if (node.maximum !== undefined) out.push(`(${numberGuard}${x} <= ${node.maximum})`);
    if (node.exclusiveMinimum !== undefined) out.push(`(${numberGuard}${x} > ${node.exclusiveMinimum})`);
    if (node.exclusiveMaximum !== undefined) out.push(`(${numberGuard}${x} < ${node.exclusiveMaximum})`);
    // Ajv's rule (no multipleOfPrecision): the quotient must equal parseInt of itself, which holds exactly for
    // integers below 1e21 in magnitude (larger ones print in exponent form); no tolerance for rounding.
    if (node.multipleOf !== undefined)
      out.push(
        `(${numberGuard}(Number.isInteger(${x} / ${node.multipleOf}) && Math.abs(${x} / ${node.multipleOf}) < 1e21))`,
      );
    const stringGuard = only("string") ? "" : `typeof ${x} !== "string" || `;
    // UTF-16 length bounds the code point count from both sides (cp <= length <= 2 cp), so most strings are
    // decided without counting.
    if (node.minLength !== undefined && node.minLength > 0) {
      out.push(
        `(${stringGuard}${x}.length >= ${2 * node.minLength} || (${x}.length >= ${node.minLength} && ${this.use("_codePoints")}(${x}) >= ${node.minLength}))`,
      );
    }
    if (node.maxLength !== undefined)
      out.push(
        `(${stringGuard}${x}.length <= ${node.maxLength} || ${this.use("_codePoints")}(${x}) <= ${node.maxLength})`,
      );
    if (node.pattern !== undefined) out.push(`(${stringGuard}${this.pattern(node.pattern)}.test(${x}))`);
    const arrayGuard = only("array") ? "" : `!Array.isArray(${x}) || `;
    if (node.minItems !== undefined && node.minItems > 0) out.push(`(${arrayGuard}${x}.length >= ${node.minItems})`);
    if (node.maxItems !== undefined) out.push(`(${arrayGuard}${x}.length <= ${node.maxItems})`);
    if (node.uniqueItems) out.push(`(${arrayGuard}${this.use("_uniqueItems")}(${x}))`);
    const objectGuard = only("object") ? "" : `typeof ${x} !== "object" || ${x} === null || Array.isArray(${x}) || `;
    if (node.minProperties !== undefined && node.minProperties > 0)
      out.push(`(${objectGuard}Object.keys(${x}).length >= ${node.minProperties})`);
    if (node.maxProperties !== undefined) out.push(`(${objectGuard}Object.keys(${x}).length <= ${node.maxProperties})`);
    if (node.not !== undefined) out.push(`!${this.wrap(this.expr(node.not, x))}`);
    if (node.conditional !== undefined) {
      const c = node.conditional;
      const then = c.then ? this.expr(c.then, x) : "true";
      const otherwise = c.else ? this.expr(c.else, x) : "true";
      out.push(`(${this.expr(c.if, x)} ? ${then} : ${otherwise})`);
    }
    return out;
  }

  /** Parenthesises an expression unless it is one call or already wrapped. */
  private wrap(e: string): string {
    return /^[\w$]+\([^()]*\)$/.test(e) || /^\([^()]*\)$/.test(e) ? e : `(${e})`;
  }

  /** Support functions the guards call, by name: each is emitted once, after the helpers. */
  readonly support = new Set<keyof typeof SUPPORT>();
  private use(name: keyof typeof SUPPORT): string {
    this.support.add(name);
    return name;
  }

  /** Pattern source to the name of a module-level RegExp, compiled once when the module loads. */
  readonly patterns = new Map<string, string>();
  private pattern(source: string): string {
    let name = this.patterns.get(source);
    if (name === undefined) {
      name = `_re${this.patterns.size}`;
      this.patterns.set(source, name);
    }
    return name;
  }

  private equals(value: JsonValue, x: string): string {
    if (value === null || typeof value !== "object") return `${x} === ${lit(value)}`;
    return `_deepEqual(${x}, ${lit(value)})`;
  }

  private typeCheck(types: string[], x: string): string {
    if (types.length === 0) return "false";
    const one = (t: string): string => {
      switch (t) {
        case "string":
          return `typeof ${x} === "string"`;
        // Like Ajv: 1e400 parses to Infinity and is a JSON number; NaN never comes out of JSON.parse.
        case "number":
          return `(typeof ${x} === "number" && !Number.isNaN(${x}))`;
        case "integer":
          return `(typeof ${x} === "number" && !(${x} % 1) && !Number.isNaN(${x}))`;
        case "boolean":
          return `typeof ${x} === "boolean"`;
        case "null":
          return `${x} === null`;
        case "array":
          return `Array.isArray(${x})`;
        case "object":
          return `(typeof ${x} === "object" && ${x} !== null && !Array.isArray(${x}))`;
        default:
          throw new Error(`unknown JSON type ${t}`);
      }
    };
    return types.length === 1 ? one(types[0]!) : `(${types.map(one).join(" || ")})`;
  }

  /** Statements for a node with object or array keywords; returns false early, true at the end. */
  private valueStatements(node: SchemaNode, v: string): string[] {
    const lines: string[] = [];
    const checks = this.valueChecks(node, v);
    if (checks.length) lines.push(`if (!(${checks.join(" && ")})) return false;`);
    const objectOnly = node.types?.length === 1 && node.types[0] === "object";
    const arrayOnly = node.types?.length === 1 && node.types[0] === "array";
    const objectBody: string[] = [];
    const known = new Set((node.properties ?? []).map((p) => p.name));
    const required = new Set(node.required ?? []);
    for (const name of required)
      if (!known.has(name)) objectBody.push(`if (${v}${prop(name)} === undefined) return false;`);
    (node.properties ?? []).forEach((p, i) => {
      const local = `p${i}`;
      const check = this.expr(p.node, local);
      const isRequired = required.has(p.name);
      if (check === "true" && !isRequired) return;
      objectBody.push(`const ${local} = ${v}${prop(p.name)};`);
      if (isRequired)
        objectBody.push(`if (${local} === undefined${check === "true" ? "" : ` || !(${check})`}) return false;`);
      else objectBody.push(`if (${local} !== undefined && !(${check})) return false;`);
    });
    const extra = node.additional;
    if (extra === "closed" || (extra !== undefined && extra !== "open")) {
      const skip = known.size ? `if (${[...known].map((k) => `k === ${lit(k)}`).join(" || ")}) continue; ` : "";
      const check = extra === "closed" ? "false" : this.expr(extra, `${v}[k]`);
      if (check !== "true") objectBody.push(`for (const k in ${v}) { ${skip}if (!(${check})) return false; }`);
    }
    if (node.propertyNames !== undefined) {
      const check = this.expr(node.propertyNames, "k");
      if (check !== "true") objectBody.push(`for (const k in ${v}) if (!(${check})) return false;`);
    }
    // Present means "not undefined", as for required: the same reading Ajv has without ownProperties.
    for (const d of node.dependentRequired ?? []) {
      if (d.requires.length === 0) continue;
      objectBody.push(
        `if (${v}${prop(d.key)} !== undefined && (${d.requires.map((r) => `${v}${prop(r)} === undefined`).join(" || ")})) return false;`,
      );
    }
    if (objectBody.length) {
      if (objectOnly) lines.push(...objectBody);
      else
        lines.push(
          `if (typeof ${v} === "object" && ${v} !== null && !Array.isArray(${v})) {`,
          ...objectBody.map((l) => "  " + l),
          "}",
        );
    }
    if (node.items !== undefined) {
      const check = this.expr(node.items, `${v}[i]`);
      if (check !== "true") {
        const loop = `for (let i = 0; i < ${v}.length; i++) if (!(${check})) return false;`;
        lines.push(arrayOnly ? loop : `if (Array.isArray(${v})) ${loop}`);
      }
    }
    lines.push("return true;");
    return lines;
  }
}

const DEEP_EQUAL = `function _deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  // Own keys only: JSON.parse makes "__proto__" an own key, and reading it from the other object would find Object.prototype.
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !_deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}`;

/**
 * Functions the guards call for keywords that need more than an expression. Lengths count code points the way
 * JSON Schema does (a surrogate pair is one, a lone surrogate is one); uniqueness is JSON equality.
 */
const SUPPORT = {
  _codePoints: `function _codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}`,
  // Linear, not pairwise: a peer controls the array's length (a 4 MiB message holds some 400,000 small objects).
  // Objects and arrays compare by a canonical text (keys sorted), kept apart from the scalars' set.
  _uniqueItems: `function _uniqueItems(a: unknown[]): boolean {
  if (a.length < 2) return true;
  const scalars = new Set<unknown>();
  const composites = new Set<string>();
  for (const item of a) {
    if (typeof item === "object" && item !== null) {
      const key = _canonical(item);
      if (composites.has(key)) return false;
      composites.add(key);
    } else {
      // SameValueZero: 0 and -0 are one number, as in JSON.
      if (scalars.has(item)) return false;
      scalars.add(item);
    }
  }
  return true;
}

/** One text per JSON value up to JSON equality: keys sorted, numbers as String() writes them (1e400 is "Infinity", not null). */
function _canonical(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v !== "object" || v === null) return String(v);
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) s += (i ? "," : "") + _canonical(v[i]);
    return s + "]";
  }
  const keys = Object.keys(v).sort();
  let s = "{";
  for (let i = 0; i < keys.length; i++) s += (i ? "," : "") + JSON.stringify(keys[i]) + ":" + _canonical((v as Record<string, unknown>)[keys[i]!]);
  return s + "}";
}`,
} as const;

export function emitGuards(model: Model): string {
  const out: string[] = [
    header(model, "Fast structural guards, one per definition: plain code, no schema at run time."),
    "/* eslint-disable */",
  ];
  const names = model.definitions.map((d) => d.name);
  out.push(`import type { ${names.join(", ")} } from "./types.js";`, "");
  const writer = new GuardWriter();
  for (const def of model.definitions) {
    const body = writer.expr(def.node, "value");
    const doc = `/** Guard for ${def.name}: required fields, consts, enums and types, recursively; unknown keys allowed. */`;
    out.push(
      doc,
      `export function is${def.name}(value: unknown): value is ${def.name} {`,
      `  return ${body};`,
      `}`,
      "",
    );
  }
  // Messages that declare params inline (older revisions, tasks/*) get a params guard of their own.
  for (const m of paramsCarriers(model)) {
    if (m.params.ref !== undefined) continue;
    const body = writer.expr(m.params, "value");
    out.push(
      `/** Whether a value is the params of ${m.method}. */`,
      `export function is${paramsGuardName(m)}(value: unknown): value is ${m.paramsType} {`,
      `  return ${body};`,
      `}`,
      "",
    );
  }
  const helpers = writer.helperSource();
  out.push("// Shared checks of inline shapes.", ...helpers, "");
  if (writer.patterns.size) {
    out.push("// Patterns, compiled once with the `u` flag as JSON Schema (and Ajv) read them.");
    for (const [source, name] of writer.patterns) out.push(`const ${name} = new RegExp(${lit(source)}, "u");`);
    out.push("");
  }
  for (const name of [...writer.support].sort()) out.push(SUPPORT[name], "");
  if (out.some((line) => line.includes("_deepEqual("))) out.push(DEEP_EQUAL, "");
  return out.join("\n");
}
