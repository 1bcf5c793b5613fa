// Builds the model from a loaded schema: normalizes every definition and joins the method table to it.
import { SchemaError, SchemaErrors } from "./errors.js";
import { compareCodeUnits, isObject } from "./json.js";
import type { LoadedSchema } from "./load.js";
import {
  applyOverrides,
  capabilityNode,
  definitionPointer,
  deriveMethods,
  paramsAllowTask,
  receiverCapabilities,
  type MethodEntry,
} from "./methods.js";
import {
  resolveRef,
  MODEL_KEYWORDS,
  type Definition,
  type Direction,
  type MessageModel,
  type Model,
  type SchemaNode,
} from "./model.js";
import { normalizeSchema, toNode } from "./normalize/index.js";
import { toPointer } from "./pointer.js";

/** Keywords the model represents; anything else that asserts would be silently ignored, so it is refused. */
const SUPPORTED = new Set<string>([
  "$schema",
  "$comment",
  "$id",
  "description",
  "title",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "format",
  ...MODEL_KEYWORDS,
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
    if (!SUPPORTED.has(key))
      throw new SchemaError(file, `keyword "${key}" is not supported by mcpgen's guards`, toPointer([...path, key]));
    if (key === "oneOf")
      throw new SchemaError(file, `"oneOf" is not supported (MCP schemas use anyOf)`, toPointer([...path, key]));
    if (key === "items" && Array.isArray(child))
      throw new SchemaError(
        file,
        `"items" as an array (draft-07 tuples) is not supported by mcpgen's guards`,
        toPointer([...path, key]),
      );
    if (key === "pattern" && typeof child === "string") {
      // Guards and validators both compile patterns with the `u` flag, as JSON Schema's ECMA-262 reading asks.
      try {
        new RegExp(child, "u");
      } catch (error) {
        throw new SchemaError(
          file,
          `pattern ${JSON.stringify(child)} is not a valid ECMA-262 regular expression with the u flag (${(error as Error).message})`,
          toPointer([...path, key]),
        );
      }
    }
    if (!DATA.has(key)) checkKeywords(file, child, [...path, key]);
  }
}

/** What a task-augmented request is answered with (the schema's name since 2025-11-25). */
const TASK_RESULT = "CreateTaskResult";

function stemOf(message: string): string {
  return message.replace(/(Request|Notification)$/, "");
}

export interface BuildOptions {
  /** A request with no result is an error (the default: it could not be dispatched); a diff only notes it. */
  requireResults?: boolean;
  /** Receives what the derivation of the method table could not settle, one line each. */
  notes?: string[];
}

export function buildModel(loaded: LoadedSchema, options: BuildOptions = {}): Model {
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
    if (/Result$/.test(d.name) && d.node.properties !== undefined && d.node.additional === undefined)
      d.node.additional = "open";
  }
  const defs = new Map(definitions.map((d) => [d.name, d.node]));

  const { messages, inputRequests } = methodTable(loaded, defs, options);
  messages.sort((a, b) => compareCodeUnits(a.method, b.method));
  return {
    source: { name: loaded.displayName, sha256: loaded.sha256 },
    definitions,
    messages,
    ...(inputRequests.length ? { inputRequests } : {}),
  };
}

/**
 * The method table: derived from the schema, the sidecar's overrides applied, and every entry checked against
 * the definitions. All problems are collected and thrown together, each pointing at the sidecar entry (or, for a
 * derived entry, the message definition) it concerns.
 */
function methodTable(
  loaded: LoadedSchema,
  defs: Map<string, SchemaNode>,
  options: BuildOptions,
): { messages: MessageModel[]; inputRequests: MessageModel[] } {
  const defsKey = loaded.defsPointer === "/$defs" ? "$defs" : "definitions";
  const derived = deriveMethods(loaded.definitions, defsKey);
  options.notes?.push(...derived.notes);
  const { entries, origin, errors } = applyOverrides(derived.methods, loaded.sidecar);
  const problems: SchemaError[] = [...errors];
  const strict = options.requireResults ?? true;
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

  const raw = loaded.definitions;
  const prefix = `#/${defsKey}/`;
  /** The receiving sides' capability objects that have no member at `path`. */
  const lackingCapability = (direction: Direction, path: string): string[] =>
    receiverCapabilities(direction).filter((c) => capabilityNode(raw, c, path, prefix) === undefined);
  /** A request that can be task-augmented: the answer definition exists; a sidecar's path and params are checked too. */
  const checkTask = (
    task: string,
    kind: string,
    direction: Direction,
    message: string,
    given: string | false | undefined,
    fail: (msg: string, field?: string) => void,
  ): void => {
    if (kind !== "request") return fail(`only requests can be task-augmented; leave "task" out`, "task");
    if (!defs.has(TASK_RESULT))
      return fail(
        `${message} is listed as task-augmentable, but ${loaded.file} has no ${TASK_RESULT} to answer it with`,
        "task",
      );
    if (typeof given !== "string") return;
    const lacking = lackingCapability(direction, task);
    if (lacking.length)
      fail(`${lacking.join(" and ")} ${lacking.length === 1 ? "has" : "have"} no member ${task}`, "task");
    const node = raw[message];
    const params = isObject(node) && isObject(node["properties"]) ? node["properties"]["params"] : undefined;
    if (!paramsAllowTask(raw, params, prefix))
      fail(`the params of ${message} have no "task", so it cannot be task-augmented`, "task");
  };

  const messages: MessageModel[] = [];
  for (const entry of entries) {
    const override = origin.get(entry.method);
    const problemsBefore = problems.length;
    // A sidecar entry is pointed at field by field; a derived one at the message definition it came from.
    const fail = (msg: string, field?: string): void => {
      if (override)
        problems.push(
          new SchemaError(loaded.sidecar!.file, msg, field ? `${override.pointer}/${field}` : override.pointer),
        );
      else problems.push(new SchemaError(loaded.file, msg, definitionPointer(loaded.defsPointer, entry.message)));
    };
    const message = defs.get(entry.message);
    if (message === undefined) {
      fail(`no definition named ${entry.message} in ${loaded.file}`, "message");
      continue;
    }
    const props = new Map((message.properties ?? []).map((p) => [p.name, p.node]));
    const methodNode = props.get("method");
    if (methodNode?.const !== entry.method)
      fail(
        `${entry.message} does not have method "${entry.method}" (it has ${JSON.stringify(methodNode?.const)})`,
        "message",
      );
    // Since 2025-11-25 messages are whole envelopes and only requests carry an id; older revisions omit both.
    if (props.has("id") && entry.kind === "notification")
      fail(`${entry.message} has an id, so it is a request, but is listed as a notification`, "kind");
    if (props.has("jsonrpc") && !props.has("id") && entry.kind === "request")
      fail(`${entry.message} has no id, so it is a notification, but is listed as a request`, "kind");
    const sides = entry.direction === "both" ? ["client-to-server", "server-to-client"] : [entry.direction];
    for (const side of sides) {
      const union = unions[`${side}:${entry.kind}` as keyof typeof unions];
      if (union.size > 0 && !union.has(entry.message))
        fail(
          `${entry.message} is listed as ${entry.direction} but is not a member of the ${side} ${entry.kind} union`,
          "direction",
        );
    }
    if (entry.kind === "notification" && override?.result !== undefined)
      fail(`${entry.method} is a notification, and notifications have no result; leave "result" out`, "result");
    const missing = (entry.result ?? []).filter((r) => !defs.has(r));
    if (missing.length)
      fail(
        `result type${missing.length === 1 ? "" : "s"} ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in ${loaded.file}`,
        "result",
      );
    const stem = entry.message.replace(/Request$/, "");
    if (entry.kind === "request" && entry.result === undefined && strict) {
      fail(
        `request ${entry.method} has no result: the schema has no ${stem}ResultResponse or ${stem}Result; name it in the methods sidecar ({ "method": ${JSON.stringify(entry.method)}, "result": "..." })`,
        "result",
      );
    }
    // Without a sidecar the empty result is the convention for a request with no result of its own; with one,
    // nothing is assumed: the sidecar says so, so a request added later with a misnamed result is not missed.
    if (loaded.sidecar && derived.emptyResults.includes(entry.method) && override?.result === undefined) {
      const say = `request ${entry.method} has no result of its own (no ${stem}ResultResponse or ${stem}Result), and with a sidecar the empty result is not assumed: name its result there, e.g. { "method": ${JSON.stringify(entry.method)}, "result": ${JSON.stringify(entry.result?.[0] ?? "EmptyResult")} } if it answers with the empty result`;
      if (strict) problems.push(new SchemaError(loaded.sidecar.file, say, "/methods"));
      else options.notes?.push(say);
    }
    if (entry.task !== undefined)
      checkTask(entry.task, entry.kind, entry.direction, entry.message, override?.task, fail);
    if (entry.taskPayload && entry.kind !== "request")
      fail(`only a request answers with a task's payload; leave "taskPayload" out`, "taskPayload");
    if (typeof override?.capability === "string") {
      const lacking = lackingCapability(entry.direction, override.capability);
      if (lacking.length)
        fail(
          `${lacking.join(" and ")} ${lacking.length === 1 ? "has" : "have"} no member ${override.capability}`,
          "capability",
        );
    }
    const paramsNode: SchemaNode = props.get("params") ?? { types: ["object"], additional: "open" };
    const declaredParams = paramsNode.ref;
    if (entry.params !== undefined && entry.params !== declaredParams) {
      fail(
        declaredParams === undefined
          ? `${entry.message} declares its params inline; leave "params" out`
          : `${entry.message} takes ${declaredParams}, not ${entry.params}`,
        "params",
      );
    }
    if (entry.mcpName !== undefined) checkMcpName(entry, paramsNode, defs, fail);
    if (problems.length > problemsBefore) continue;
    messages.push(messageModel(entry, message));
  }

  // Every request and notification in the schema's unions needs an entry, or it could not be dispatched.
  for (const [key, members] of Object.entries(unions)) {
    for (const member of members) {
      if (entries.some((m) => m.message === member)) continue;
      const method = defs.get(member)?.properties?.find((p) => p.name === "method")?.node.const;
      problems.push(
        new SchemaError(
          loaded.file,
          `the ${key.replace(":", " ")} ${member} has no constant "method" (it has ${JSON.stringify(method)}), so no method can be derived for it; give it one, or list it in the methods sidecar`,
          definitionPointer(loaded.defsPointer, member),
        ),
      );
    }
  }
  // Input requests come from the schema alone; their definitions were found by the derivation itself.
  const inputRequests: MessageModel[] = [];
  for (const entry of derived.inputRequests) {
    const message = defs.get(entry.message);
    const missing = (entry.result ?? []).filter((r) => !defs.has(r));
    if (message === undefined || missing.length) {
      problems.push(
        new SchemaError(
          loaded.file,
          `the input request ${entry.message} cannot be typed: no definition named ${message === undefined ? entry.message : missing.join(", ")}`,
          definitionPointer(loaded.defsPointer, entry.message),
        ),
      );
      continue;
    }
    inputRequests.push(messageModel(entry, message));
  }
  if (problems.length) {
    // Grouped by file, and in order within each (sidecar entries by index, numbers compared as numbers).
    const key = (e: SchemaError): string => `${e.file}\0${(e.where ?? "").replace(/\d+/g, (n) => n.padStart(8, "0"))}`;
    throw new SchemaErrors(problems.sort((a, b) => compareCodeUnits(key(a), key(b))));
  }
  return { messages, inputRequests };
}

/** A method table entry, checked already, as the model holds it. */
function messageModel(entry: MethodEntry, message: SchemaNode): MessageModel {
  const props = new Map((message.properties ?? []).map((p) => [p.name, p.node]));
  const paramsNode: SchemaNode = props.get("params") ?? { types: ["object"], additional: "open" };
  return {
    method: entry.method,
    kind: entry.kind,
    direction: entry.direction,
    message: entry.message,
    paramsType:
      paramsNode.ref ?? (props.has("params") ? `NonNullable<${entry.message}["params"]>` : "Record<string, unknown>"),
    params: paramsNode,
    paramsRequired: (message.required ?? []).includes("params"),
    ...(entry.result !== undefined ? { results: entry.result } : {}),
    ...(entry.task !== undefined ? { task: { capability: entry.task, result: TASK_RESULT } } : {}),
    ...(entry.capability !== undefined ? { capability: entry.capability } : {}),
    ...(entry.taskPayload ? { taskPayload: true as const } : {}),
    ...(entry.mcpName !== undefined ? { mcpName: entry.mcpName } : {}),
    stem: stemOf(entry.message),
  };
}

/**
 * The member a sidecar says the `Mcp-Name` header carries must be one the client always sends and can put in a
 * header: a required string of the params of a request the client sends.
 */
function checkMcpName(
  entry: MethodEntry,
  params: SchemaNode,
  defs: Map<string, SchemaNode>,
  fail: (msg: string, field?: string) => void,
): void {
  const name = entry.mcpName!;
  if (entry.kind !== "request" || entry.direction === "server-to-client")
    return fail(`only a request the client sends carries the Mcp-Name header; leave "mcpName" out`, "mcpName");
  let node: SchemaNode | undefined;
  try {
    node = resolveRef(defs, params);
  } catch {
    node = undefined;
  }
  const member = node?.properties?.find((p) => p.name === name);
  if (member === undefined) return fail(`the params of ${entry.message} have no member ${name}`, "mcpName");
  if (!(node!.required ?? []).includes(name))
    fail(
      `${name} is optional in the params of ${entry.message}, so the Mcp-Name header could not always be sent`,
      "mcpName",
    );
  let value: SchemaNode | undefined;
  try {
    value = resolveRef(defs, member.node);
  } catch {
    value = undefined;
  }
  if (value?.types === undefined || value.types.length !== 1 || value.types[0] !== "string")
    fail(`${name} in the params of ${entry.message} is not a string, so it cannot be a header value`, "mcpName");
}
