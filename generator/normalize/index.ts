// The normalize step: the ordered passes over the raw schema, then conversion into model nodes.
import { NUMBER_KEYWORDS, type JsonType, type JsonValue, type SchemaNode } from "../model.js";
import { compareCodeUnits, sortKeys, isObject } from "../json.js";
import { applicatorSiblings } from "./applicator-siblings.js";
import { integers } from "./integers.js";
import { OPAQUE, openObjects } from "./open-objects.js";
import { refSiblings } from "./ref-siblings.js";
import { DISCRIMINATOR, taggedUnions } from "./tagged-unions.js";
import type { RawSchema } from "./walk.js";

export { applicatorSiblings, integers, openObjects, refSiblings, taggedUnions };

/** The passes in the order they run; each is pure and takes the whole schema. */
export function normalizeSchema(schema: RawSchema, defsKey: "$defs" | "definitions"): RawSchema {
  let out = sortKeys(schema) as RawSchema;
  out = refSiblings(out);
  out = applicatorSiblings(out);
  out = integers(out);
  out = openObjects(out);
  out = taggedUnions(out, defsKey);
  return out;
}

/** Converts one normalized raw subschema into a model node. */
export function toNode(raw: unknown, refPrefix: string): SchemaNode {
  if (raw === true || (isObject(raw) && Object.keys(raw).every((k) => k === "description"))) {
    return isObject(raw) && typeof raw["description"] === "string" ? { description: raw["description"] } : {};
  }
  if (raw === false) return { types: [] };
  if (!isObject(raw)) throw new Error(`not a schema: ${JSON.stringify(raw)}`);
  const node: SchemaNode = {};
  if (typeof raw["description"] === "string") node.description = raw["description"];
  if (typeof raw["$ref"] === "string") {
    node.ref = raw["$ref"].slice(refPrefix.length).replace(/~1/g, "/").replace(/~0/g, "~");
    return node;
  }
  if (Array.isArray(raw["anyOf"]) || Array.isArray(raw["oneOf"])) {
    node.anyOf = ((raw["anyOf"] ?? raw["oneOf"]) as unknown[]).map((m) => toNode(m, refPrefix));
    const tag = raw[DISCRIMINATOR];
    if (isObject(tag)) node.discriminator = tag as unknown as SchemaNode["discriminator"];
    return node;
  }
  if (Array.isArray(raw["allOf"])) {
    node.allOf = raw["allOf"].map((m) => toNode(m, refPrefix));
    return node;
  }
  if (raw["type"] !== undefined) node.types = (Array.isArray(raw["type"]) ? raw["type"] : [raw["type"]]) as JsonType[];
  if (raw["const"] !== undefined) node.const = raw["const"] as JsonValue;
  if (Array.isArray(raw["enum"])) node.enum = raw["enum"] as JsonValue[];
  for (const key of NUMBER_KEYWORDS) if (typeof raw[key] === "number") node[key] = raw[key];
  if (typeof raw["format"] === "string") node.format = raw["format"];
  if (typeof raw["pattern"] === "string") node.pattern = raw["pattern"];
  if (raw["uniqueItems"] === true) node.uniqueItems = true;
  if (raw["propertyNames"] !== undefined) node.propertyNames = toNode(raw["propertyNames"], refPrefix);
  const dependent = raw["dependentRequired"];
  if (isObject(dependent)) {
    node.dependentRequired = Object.keys(dependent)
      .sort(compareCodeUnits)
      .map((key) => ({ key, requires: [...new Set(dependent[key] as string[])].sort(compareCodeUnits) }));
  }
  if (raw["not"] !== undefined) node.not = toNode(raw["not"], refPrefix);
  // then and else without if assert nothing, and so does an if with neither.
  if (raw["if"] !== undefined && (raw["then"] !== undefined || raw["else"] !== undefined)) {
    node.conditional = { if: toNode(raw["if"], refPrefix) };
    if (raw["then"] !== undefined) node.conditional.then = toNode(raw["then"], refPrefix);
    if (raw["else"] !== undefined) node.conditional.else = toNode(raw["else"], refPrefix);
  }
  if (isObject(raw["properties"])) {
    node.properties = Object.keys(raw["properties"])
      .sort(compareCodeUnits)
      .map((name) => ({ name, node: toNode((raw["properties"] as RawSchema)[name], refPrefix) }));
  }
  if (Array.isArray(raw["required"])) node.required = [...new Set(raw["required"] as string[])].sort(compareCodeUnits);
  const extra = raw["additionalProperties"];
  if (extra === true) node.additional = "open";
  else if (extra === false) node.additional = "closed";
  else if (isObject(extra)) node.additional = toNode(extra, refPrefix);
  if (raw["items"] !== undefined) node.items = toNode(raw["items"], refPrefix);
  if (raw[OPAQUE] === true) {
    node.opaque = true;
    node.additional = "open";
  }
  return node;
}
