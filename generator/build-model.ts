// Builds the model from a loaded schema: normalizes every definition and joins the methods sidecar to it.
import { SchemaError } from "./errors.js";
import { compareCodeUnits } from "./json.js";
import type { LoadedSchema } from "./load.js";
import type { Definition, MessageModel, Model, SchemaNode } from "./model.js";
import { normalizeSchema, toNode } from "./normalize/index.js";
import { toPointer } from "./pointer.js";

/** Keywords the model represents; anything else that asserts would be silently ignored, so it is refused. */
const SUPPORTED = new Set([
  "$ref", "$schema", "$comment", "$id", "description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly",
  "type", "const", "enum", "format", "properties", "required", "additionalProperties", "items",
  "anyOf", "oneOf", "allOf", "$defs", "definitions",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
  "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "propertyNames", "dependentRequired",
  "pattern", "not", "if", "then", "else",
]);
const DATA = new Set(["const", "enum", "default", "examples", "required", "dependentRequired"]);

function checkKeywords(file: string, node: unknown, path: (string | number)[]): void {
  if (Array.isArray(node)) return node.forEach((c, i) => checkKeywords(file, c, [...path, i]));
  if (node === null || typeof node !== "object") return;
  const inMap = path.length > 0 && ["properties", "$defs", "definitions"].includes(String(path[path.length - 1]));
  for (const [key, child] of Object.entries(node)) {
    if (inMap) {
      checkKeywords(file, child, [...path, key]);
      continue;
    }
    if (!SUPPORTED.has(key)) throw new SchemaError(file, `keyword "${key}" is not supported by mcpgen's guards`, toPointer([...path, key]));
    if (key === "oneOf") throw new SchemaError(file, `"oneOf" is not supported (MCP schemas use anyOf)`, toPointer([...path, key]));
    if (key === "items" && Array.isArray(child)) throw new SchemaError(file, `"items" as an array (draft-07 tuples) is not supported by mcpgen's guards`, toPointer([...path, key]));
    if (key === "pattern" && typeof child === "string") {
      // Guards and validators both compile patterns with the `u` flag, as JSON Schema's ECMA-262 reading asks.
      try {
        new RegExp(child, "u");
      } catch (error) {
        throw new SchemaError(file, `pattern ${JSON.stringify(child)} is not a valid ECMA-262 regular expression with the u flag (${(error as Error).message})`, toPointer([...path, key]));
      }
    }
    if (!DATA.has(key)) checkKeywords(file, child, [...path, key]);
  }
}

function stemOf(message: string): string {
  return message.replace(/(Request|Notification)$/, "");
}

export function buildModel(loaded: LoadedSchema): Model {
  const defsKey = loaded.defsPointer === "/$defs" ? "$defs" : "definitions";
  checkKeywords(loaded.file, loaded.definitions, [defsKey]);
  const normalized = normalizeSchema({ [defsKey]: loaded.definitions }, defsKey)[defsKey] as Record<string, unknown>;
  const prefix = `#/${defsKey}/`;
  const definitions: Definition[] = Object.keys(normalized)
    .sort(compareCodeUnits)
    .map((name) => ({ name, node: toNode(normalized[name], prefix) }));
  // MCP's base Result is an open object, and every result extends it; the JSON Schema drops that on the
  // subtypes, so results say it again (an index signature in the types; no change to what validates).
  for (const d of definitions) {
    if (/Result$/.test(d.name) && d.node.properties !== undefined && d.node.additional === undefined) d.node.additional = "open";
  }
  const defs = new Map(definitions.map((d) => [d.name, d.node]));

  const unionMembers = (name: string): Set<string> => {
    const node = defs.get(name);
    return new Set((node?.anyOf ?? []).map((m) => m.ref).filter((r): r is string => r !== undefined));
  };
  const unions = {
    "client-to-server:request": unionMembers("ClientRequest"),
    "server-to-client:request": unionMembers("ServerRequest"),
    "client-to-server:notification": unionMembers("ClientNotification"),
    "server-to-client:notification": unionMembers("ServerNotification"),
  };

  const seen = new Set<string>();
  const messages: MessageModel[] = loaded.methods.map((entry, i) => {
    const where = `/methods/${i}`;
    const fail = (msg: string, field?: string): never => {
      throw new SchemaError(loaded.methodsFile, msg, field ? `${where}/${field}` : where);
    };
    if (seen.has(entry.method)) fail(`method ${entry.method} is listed twice`, "method");
    seen.add(entry.method);
    const message = defs.get(entry.message) ?? fail(`no definition named ${entry.message} in ${loaded.file}`, "message");
    const props = new Map((message.properties ?? []).map((p) => [p.name, p.node]));
    const methodNode = props.get("method");
    if (methodNode?.const !== entry.method) fail(`${entry.message} does not have method "${entry.method}" (it has ${JSON.stringify(methodNode?.const)})`, "message");
    // Since 2025-11-25 messages are whole envelopes and only requests carry an id; older revisions omit both.
    if (props.has("id") && entry.kind === "notification") fail(`${entry.message} has an id, so it is a request, but is listed as a notification`, "kind");
    if (props.has("jsonrpc") && !props.has("id") && entry.kind === "request") fail(`${entry.message} has no id, so it is a notification, but is listed as a request`, "kind");
    const sides = entry.direction === "both" ? ["client-to-server", "server-to-client"] : [entry.direction];
    for (const side of sides) {
      const union = unions[`${side}:${entry.kind}` as keyof typeof unions];
      if (union.size > 0 && !union.has(entry.message)) fail(`${entry.message} is listed as ${entry.direction} but is not a member of the ${side} ${entry.kind} union`, "direction");
    }
    if (entry.result !== undefined && !defs.has(entry.result)) fail(`result type ${entry.result} does not exist in ${loaded.file}`, "result");
    const paramsNode: SchemaNode = props.get("params") ?? { types: ["object"], additional: "open" };
    const declaredParams = paramsNode.ref;
    if (entry.params !== undefined && entry.params !== declaredParams) {
      fail(declaredParams === undefined ? `${entry.message} declares its params inline; leave "params" out` : `${entry.message} takes ${declaredParams}, not ${entry.params}`, "params");
    }
    if (entry.params !== undefined && !defs.has(entry.params)) fail(`params type ${entry.params} does not exist`, "params");
    return {
      method: entry.method,
      kind: entry.kind,
      direction: entry.direction,
      message: entry.message,
      paramsType: declaredParams ?? (props.has("params") ? `NonNullable<${entry.message}["params"]>` : "Record<string, unknown>"),
      params: paramsNode,
      paramsRequired: (message.required ?? []).includes("params"),
      ...(entry.result !== undefined ? { result: entry.result } : {}),
      stem: stemOf(entry.message),
    };
  });

  // Every request and notification in the schema's unions needs an entry, or it could not be dispatched.
  for (const [key, members] of Object.entries(unions)) {
    for (const member of members) {
      const listed = messages.find((m) => m.message === member);
      if (!listed) {
        const method = defs.get(member)?.properties?.find((p) => p.name === "method")?.node.const;
        throw new SchemaError(loaded.methodsFile, `the ${key.replace(":", " ")} ${member} (method ${JSON.stringify(method)}) has no entry in the methods sidecar`, "/methods");
      }
    }
  }
  messages.sort((a, b) => compareCodeUnits(a.method, b.method));
  return { source: { name: loaded.displayName, sha256: loaded.sha256 }, definitions, messages };
}
