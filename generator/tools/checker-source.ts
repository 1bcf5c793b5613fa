// The structured-result checker written into every bindings file: plain TypeScript, no dependency, one issue per JSON pointer.

/**
 * Checks a value against a JSON Schema document the catalogue holds (draft-07 or 2020-12): types, const, enum,
 * bounds, lengths, patterns, properties, required, additional and pattern properties, property names, item and
 * tuple schemas, contains, unique items, dependencies, allOf, anyOf, oneOf, not, if/then/else, unevaluatedProperties
 * and unevaluatedItems (what the applicators that apply evaluated), and `$ref`, `$dynamicRef` and `$recursiveRef`
 * (pointers and `$anchor`/`$dynamicAnchor` names, resolved statically: one document is the whole dynamic scope) inside
 * the document (never fetched). Formats are annotations and are not asserted. The source is emitted as text, so it
 * is written for the strictest settings an app may compile it with (noUncheckedIndexedAccess,
 * exactOptionalPropertyTypes, noPropertyAccessFromIndexSignature, noUnusedLocals) and an ES2020 library.
 */
export const CHECKER_SOURCE = `/** A place where a tool's structured result breaks its outputSchema: a JSON pointer into the result, and why. */
export interface ToolResultIssue {
  pointer: string;
  message: string;
}

type _Schema = { readonly [keyword: string]: unknown };
type _Fail = (message: string) => void;

const _patterns = new Map<string, RegExp>();

function _isObject(value: unknown): value is { readonly [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function _has(object: { readonly [key: string]: unknown }, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function _hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "object":
      return _isObject(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

/** JSON equality: 1 and 1.0 are equal, key order does not matter. */
function _equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    const right: readonly unknown[] = b;
    return a.length === right.length && a.every((item: unknown, i: number) => _equal(item, right[i]));
  }
  if (_isObject(a) && _isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => _has(b, k) && _equal(a[k], b[k]));
  }
  return false;
}

function _pointer(at: string, key: string | number): string {
  return at + "/" + String(key).replace(/~/g, "~0").replace(/\\//g, "~1");
}

/**
 * The subschema a local reference names ("#", "#/..." or "#name" of a $anchor or $dynamicAnchor in the document), or
 * undefined: other documents are never fetched.
 */
function _resolve(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (/^#[A-Za-z_][-A-Za-z0-9._]*$/.test(ref)) return _anchor(root, ref.slice(1));
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const token of decodeURIComponent(ref.slice(2)).split("/")) {
    const key = token.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      const list: readonly unknown[] = node;
      node = list[Number(key)];
    } else if (_isObject(node) && _has(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

/** The subschema whose $anchor (or $dynamicAnchor) is \`name\`, searched through the whole document. */
function _anchor(node: unknown, name: string): unknown {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = _anchor(item, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!_isObject(node)) return undefined;
  if (node["$anchor"] === name || node["$dynamicAnchor"] === name) return node;
  for (const key of Object.keys(node)) {
    // Values of these keywords are data, not schemas: an anchor-shaped string there names nothing.
    if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
    const found = _anchor(node[key], name);
    if (found !== undefined) return found;
  }
  return undefined;
}

function _regex(pattern: string): RegExp {
  let compiled = _patterns.get(pattern);
  if (compiled === undefined) {
    compiled = new RegExp(pattern, "u");
    _patterns.set(pattern, compiled);
  }
  return compiled;
}

function _number(schema: _Schema, keyword: string): number | undefined {
  const value = schema[keyword];
  return typeof value === "number" ? value : undefined;
}

function _matches(schema: unknown, value: unknown, root: unknown, followed: readonly unknown[]): boolean {
  const issues: ToolResultIssue[] = [];
  _check(schema, value, root, "", issues, followed);
  return issues.length === 0;
}

function _checkNumber(s: _Schema, value: number, fail: _Fail): void {
  const minimum = _number(s, "minimum");
  const maximum = _number(s, "maximum");
  const exclusiveMinimum = _number(s, "exclusiveMinimum");
  const exclusiveMaximum = _number(s, "exclusiveMaximum");
  const multipleOf = _number(s, "multipleOf");
  if (minimum !== undefined && (s["exclusiveMinimum"] === true ? value <= minimum : value < minimum))
    fail((s["exclusiveMinimum"] === true ? "must be > " : "must be >= ") + minimum);
  if (maximum !== undefined && (s["exclusiveMaximum"] === true ? value >= maximum : value > maximum))
    fail((s["exclusiveMaximum"] === true ? "must be < " : "must be <= ") + maximum);
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) fail("must be > " + exclusiveMinimum);
  if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) fail("must be < " + exclusiveMaximum);
  if (multipleOf !== undefined && multipleOf > 0 && !Number.isInteger(value / multipleOf))
    fail("must be a multiple of " + multipleOf);
}

function _checkString(s: _Schema, value: string, fail: _Fail): void {
  const minLength = _number(s, "minLength");
  const maxLength = _number(s, "maxLength");
  // Lengths count code points, as JSON Schema says, not UTF-16 units.
  const length = minLength !== undefined || maxLength !== undefined ? Array.from(value).length : 0;
  if (minLength !== undefined && length < minLength) fail("must NOT have fewer than " + minLength + " characters");
  if (maxLength !== undefined && length > maxLength) fail("must NOT have more than " + maxLength + " characters");
  const pattern = s["pattern"];
  if (typeof pattern === "string" && !_regex(pattern).test(value)) fail("must match pattern " + JSON.stringify(pattern));
}

function _checkArray(
  s: _Schema,
  value: readonly unknown[],
  root: unknown,
  at: string,
  out: ToolResultIssue[],
  fail: _Fail,
): void {
  const minItems = _number(s, "minItems");
  const maxItems = _number(s, "maxItems");
  if (minItems !== undefined && value.length < minItems) fail("must NOT have fewer than " + minItems + " items");
  if (maxItems !== undefined && value.length > maxItems) fail("must NOT have more than " + maxItems + " items");
  if (s["uniqueItems"] === true)
    for (let i = 1; i < value.length; i++)
      for (let j = 0; j < i; j++)
        if (_equal(value[i], value[j])) {
          fail("must NOT have duplicate items (items " + j + " and " + i + " are equal)");
          i = value.length;
          break;
        }
  const items = s["items"];
  const prefixItems = s["prefixItems"];
  // draft-07 writes a tuple as an items list (then additionalItems); 2020-12 as prefixItems (then items).
  const prefix: readonly unknown[] = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : [];
  const rest = Array.isArray(items) ? s["additionalItems"] : items;
  value.forEach((item, i) => {
    const schema = i < prefix.length ? prefix[i] : rest;
    if (schema !== undefined) _check(schema, item, root, _pointer(at, i), out, []);
  });
  const contains = s["contains"];
  if (contains !== undefined) {
    const found = value.filter((item) => _matches(contains, item, root, [])).length;
    const least = _number(s, "minContains") ?? 1;
    const most = _number(s, "maxContains");
    if (found < least) fail("must contain at least " + least + " item(s) matching contains");
    if (most !== undefined && found > most) fail("must contain at most " + most + " item(s) matching contains");
  }
  const unevaluated = s["unevaluatedItems"];
  if (unevaluated !== undefined) {
    const seen = _evaluatedItems(s, value, root, [], true);
    value.forEach((item, i) => {
      if (seen.has(i)) return;
      if (unevaluated === false)
        out.push({ pointer: _pointer(at, i), message: "must NOT be here (unevaluatedItems is false)" });
      else _check(unevaluated, item, root, _pointer(at, i), out, []);
    });
  }
}

/**
 * The indexes of an array that \`s\` evaluates (prefixItems, items, contains), with those of the subschemas that apply
 * to it: $ref, allOf, the anyOf/oneOf branches and the if/then/else parts that match, as unevaluatedItems counts them.
 */
function _evaluatedItems(
  s: unknown,
  value: readonly unknown[],
  root: unknown,
  followed: readonly unknown[],
  own = false,
): Set<number> {
  const seen = new Set<number>();
  if (!_isObject(s)) return seen;
  const items = s["items"];
  const prefixItems = s["prefixItems"];
  const prefix: readonly unknown[] = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : [];
  const rest = Array.isArray(items) ? s["additionalItems"] : items;
  value.forEach((item, i) => {
    // A nested unevaluatedItems evaluates what it is given; the schema asking (own) must not count its own.
    if (i < prefix.length || rest !== undefined || (!own && s["unevaluatedItems"] !== undefined)) seen.add(i);
    else if (s["contains"] !== undefined && _matches(s["contains"], item, root, [])) seen.add(i);
  });
  for (const sub of _applied(s, value, root, followed)) for (const i of _evaluatedItems(sub, value, root, followed)) seen.add(i);
  return seen;
}

/** The subschemas of \`s\` that apply to \`value\` in place: $ref, allOf, matching anyOf/oneOf branches, if and its branch. */
function _applied(s: _Schema, value: unknown, root: unknown, followed: readonly unknown[]): unknown[] {
  const applied: unknown[] = [];
  for (const keyword of ["$ref", "$dynamicRef", "$recursiveRef"]) {
    const ref = s[keyword];
    if (typeof ref !== "string") continue;
    const target = _resolve(root, ref);
    if (target !== undefined && !followed.includes(target)) applied.push(target);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const list = s[key];
    if (!Array.isArray(list)) continue;
    for (const sub of list) if (key === "allOf" || _matches(sub, value, root, followed)) applied.push(sub);
  }
  const condition = s["if"];
  if (condition !== undefined) {
    if (_matches(condition, value, root, followed)) {
      applied.push(condition);
      if (s["then"] !== undefined) applied.push(s["then"]);
    } else if (s["else"] !== undefined) applied.push(s["else"]);
  }
  return applied;
}

function _checkObject(
  s: _Schema,
  value: { readonly [key: string]: unknown },
  root: unknown,
  at: string,
  out: ToolResultIssue[],
  fail: _Fail,
): void {
  const required = s["required"];
  if (Array.isArray(required))
    for (const name of required)
      if (typeof name === "string" && !_has(value, name))
        out.push({ pointer: _pointer(at, name), message: "must be present (required)" });
  const keys = Object.keys(value);
  const minProperties = _number(s, "minProperties");
  const maxProperties = _number(s, "maxProperties");
  if (minProperties !== undefined && keys.length < minProperties)
    fail("must NOT have fewer than " + minProperties + " properties");
  if (maxProperties !== undefined && keys.length > maxProperties)
    fail("must NOT have more than " + maxProperties + " properties");
  const properties = _isObject(s["properties"]) ? s["properties"] : {};
  const patterns = _isObject(s["patternProperties"]) ? s["patternProperties"] : {};
  const additional = s["additionalProperties"];
  const names = s["propertyNames"];
  for (const key of keys) {
    const here = _pointer(at, key);
    let known = false;
    if (_has(properties, key)) {
      known = true;
      _check(properties[key], value[key], root, here, out, []);
    }
    for (const pattern of Object.keys(patterns))
      if (_regex(pattern).test(key)) {
        known = true;
        _check(patterns[pattern], value[key], root, here, out, []);
      }
    if (!known && additional === false) out.push({ pointer: here, message: "must NOT be here (additionalProperties is false)" });
    else if (!known && additional !== undefined) _check(additional, value[key], root, here, out, []);
    if (names !== undefined && !_matches(names, key, root, []))
      out.push({ pointer: here, message: "property name must match propertyNames" });
  }
  const dependentRequired = _isObject(s["dependentRequired"]) ? s["dependentRequired"] : {};
  const dependentSchemas = _isObject(s["dependentSchemas"]) ? s["dependentSchemas"] : {};
  const dependencies = _isObject(s["dependencies"]) ? s["dependencies"] : {};
  for (const key of keys) {
    for (const source of [dependentRequired, dependentSchemas, dependencies]) {
      if (!_has(source, key)) continue;
      const dependency = source[key];
      if (Array.isArray(dependency)) {
        for (const other of dependency)
          if (typeof other === "string" && !_has(value, other))
            fail("must have property " + JSON.stringify(other) + " when " + JSON.stringify(key) + " is present");
      } else _check(dependency, value, root, at, out, []);
    }
  }
  const unevaluated = s["unevaluatedProperties"];
  if (unevaluated !== undefined) {
    const seen = _evaluatedProperties(s, value, root, [], true);
    for (const key of keys) {
      if (seen.has(key)) continue;
      if (unevaluated === false)
        out.push({ pointer: _pointer(at, key), message: "must NOT be here (unevaluatedProperties is false)" });
      else _check(unevaluated, value[key], root, _pointer(at, key), out, []);
    }
  }
}

/**
 * The property names of an object that \`s\` evaluates (properties, patternProperties, additionalProperties, the
 * dependent schemas that apply), with those of the subschemas that apply to it in place, as unevaluatedProperties
 * counts them.
 */
function _evaluatedProperties(
  s: unknown,
  value: { readonly [key: string]: unknown },
  root: unknown,
  followed: readonly unknown[],
  own = false,
): Set<string> {
  const seen = new Set<string>();
  if (!_isObject(s)) return seen;
  const properties = _isObject(s["properties"]) ? s["properties"] : {};
  const patterns = _isObject(s["patternProperties"]) ? Object.keys(s["patternProperties"]) : [];
  // A nested unevaluatedProperties evaluates what it is given; the schema asking (own) must not count its own.
  const everything = s["additionalProperties"] !== undefined || (!own && s["unevaluatedProperties"] !== undefined);
  for (const key of Object.keys(value))
    if (everything || _has(properties, key) || patterns.some((p) => _regex(p).test(key))) seen.add(key);
  const applied = _applied(s, value, root, followed);
  const dependentSchemas = _isObject(s["dependentSchemas"]) ? s["dependentSchemas"] : {};
  for (const key of Object.keys(value)) if (_has(dependentSchemas, key)) applied.push(dependentSchemas[key]);
  for (const sub of applied) for (const key of _evaluatedProperties(sub, value, root, followed)) seen.add(key);
  return seen;
}

function _check(
  schema: unknown,
  value: unknown,
  root: unknown,
  at: string,
  out: ToolResultIssue[],
  followed: readonly unknown[],
): void {
  if (schema === false) {
    out.push({ pointer: at, message: "must NOT be here (the schema allows nothing)" });
    return;
  }
  if (!_isObject(schema)) return;
  const s: _Schema = schema;
  const fail: _Fail = (message) => {
    out.push({ pointer: at, message });
  };
  // A $dynamicRef is resolved as a $ref: within one document, whose anchors are all that its dynamic scope can hold.
  for (const keyword of ["$ref", "$dynamicRef", "$recursiveRef"]) {
    const ref = s[keyword];
    if (typeof ref !== "string") continue;
    const target = _resolve(root, ref);
    // A reference back to a schema already applied to this same value adds nothing, and would not end.
    if (target !== undefined && !followed.includes(target)) _check(target, value, root, at, out, [...followed, target]);
  }
  const type = s["type"];
  if (type !== undefined) {
    const types: readonly unknown[] = Array.isArray(type) ? type : [type];
    if (!types.some((t) => _hasType(value, t))) {
      fail("must be " + types.join(" or "));
      return;
    }
  }
  if (s["const"] !== undefined && !_equal(s["const"], value)) fail("must be " + JSON.stringify(s["const"]));
  const values = s["enum"];
  if (Array.isArray(values) && !values.some((v: unknown) => _equal(v, value)))
    fail("must be one of " + JSON.stringify(values));
  if (typeof value === "number") _checkNumber(s, value, fail);
  else if (typeof value === "string") _checkString(s, value, fail);
  else if (Array.isArray(value)) _checkArray(s, value, root, at, out, fail);
  else if (_isObject(value)) _checkObject(s, value, root, at, out, fail);
  const allOf = s["allOf"];
  if (Array.isArray(allOf)) for (const sub of allOf) _check(sub, value, root, at, out, followed);
  const anyOf = s["anyOf"];
  if (Array.isArray(anyOf) && !anyOf.some((sub: unknown) => _matches(sub, value, root, followed)))
    fail("must match a schema of anyOf");
  const oneOf = s["oneOf"];
  if (Array.isArray(oneOf)) {
    const matching = oneOf.filter((sub: unknown) => _matches(sub, value, root, followed)).length;
    if (matching !== 1) fail("must match exactly one schema of oneOf (matches " + matching + ")");
  }
  if (s["not"] !== undefined && _matches(s["not"], value, root, followed)) fail("must NOT match the schema of not");
  const condition = s["if"];
  if (condition !== undefined) {
    const branch = _matches(condition, value, root, followed) ? s["then"] : s["else"];
    if (branch !== undefined) _check(branch, value, root, at, out, followed);
  }
}
`;
