// The method table: derived from the schema's message unions and result definitions, with a sidecar's overrides on top.
import { SchemaError } from "./errors.js";
import { canonicalJson, compareCodeUnits, isObject } from "./json.js";
import type { Direction } from "./model.js";
import { escapeToken } from "./pointer.js";

export interface MethodEntry {
  method: string;
  kind: "request" | "notification";
  direction: Direction;
  message: string;
  params?: string;
  /** Requests: the definitions a result may be; one for most, several for a union (InputRequiredResult | CallToolResult). */
  result?: string[];
  /** Requests that can be task-augmented: the receiver's capability that says so ("tasks.requests.tools.call"). */
  task?: string;
  /** The receiver's capability the method needs, as a dotted path ("tools", "resources.subscribe"); absent: none. */
  capability?: string;
  /** Answers with the result of the task-augmented request whose task it names (tasks/result); sidecar only. */
  taskPayload?: true;
  /** Requests only: the member of params whose value the `Mcp-Name` HTTP header carries (2026-07-28); sidecar only. */
  mcpName?: string;
}

/** One entry of a sidecar: the method it changes and what it says; only `method` is required. */
export interface MethodOverride {
  method: string;
  kind?: "request" | "notification";
  direction?: Direction;
  message?: string;
  params?: string;
  result?: string[];
  /** A capability path (the request can be task-augmented), or false (it cannot be, whatever the schema says). */
  task?: string | false;
  /** The capability path the method needs, or false (it needs none, whatever its name says). */
  capability?: string | false;
  taskPayload?: true;
  /** The params member the `Mcp-Name` header carries. */
  mcpName?: string;
  /** Where the entry stands in its file, for messages: `/methods/<i>`. */
  pointer: string;
}

export interface Sidecar {
  file: string;
  entries: MethodOverride[];
  /** Entries that failed the sidecar's own schema: left out of `entries`, reported with the rest. */
  errors: SchemaError[];
}

export interface DerivedMethods {
  methods: MethodEntry[];
  /**
   * Requests a server may put in an `input_required` result for the client to answer (2026-07-28's InputRequest
   * union: elicitation, sampling, roots), each with its result and the client capability it needs. They travel
   * inside results, not as messages of their own, so they are not in `methods`.
   */
  inputRequests: MethodEntry[];
  /** Requests answered by the empty result because the schema names no result of their own. */
  emptyResults: string[];
  /** What could not be derived, one line each (a request with no result at all, a union member with no method). */
  notes: string[];
}

/** The capability object each side advertises; its `tasks.requests` names what the other side may task-augment. */
const CAPABILITIES = { "client-to-server": "ServerCapabilities", "server-to-client": "ClientCapabilities" } as const;

type Defs = Record<string, unknown>;

function refName(node: unknown, prefix: string): string | undefined {
  return isObject(node) && typeof node["$ref"] === "string" && node["$ref"].startsWith(prefix)
    ? node["$ref"].slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~")
    : undefined;
}

function unionMembers(defs: Defs, union: string, prefix: string): string[] {
  const node = defs[union];
  if (!isObject(node) || !Array.isArray(node["anyOf"])) return [];
  return node["anyOf"].map((m) => refName(m, prefix)).filter((r): r is string => r !== undefined);
}

/** Keywords that only document a schema node; two nodes that differ only in them accept the same values. */
const DOC_KEYWORDS = new Set(["description", "title", "$comment", "examples", "deprecated"]);

/** A node without its documentation, for comparing shapes (member maps keep every key: a member may be named "title"). */
function withoutDocs(node: unknown, inMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutDocs(n));
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (inMap) out[key] = withoutDocs(value);
    else if (DOC_KEYWORDS.has(key)) continue;
    else if (key === "const" || key === "enum" || key === "default") out[key] = value;
    else out[key] = withoutDocs(value, key === "properties" || key === "$defs" || key === "definitions");
  }
  return out;
}

/**
 * The messages of a message union. The official schemas write a union of one member as that member: a `$ref`, or
 * a copy of the member's definition (2026-07-28's ClientNotification is a copy of CancelledNotification). A copy
 * counts as the definition it copies when one has the same shape, so the message is one in both directions;
 * otherwise the union's own definition is the message.
 */
export function messageUnion(defs: Defs, union: string, prefix: string): string[] {
  const node = defs[union];
  if (!isObject(node)) return [];
  if (Array.isArray(node["anyOf"])) return unionMembers(defs, union, prefix);
  const single = refName(node, prefix);
  if (single !== undefined) return [single];
  if (methodOf(defs, union) === undefined) return [];
  const shape = canonicalJson(withoutDocs(node));
  const copied = Object.keys(defs)
    .sort(compareCodeUnits)
    .find((name) => name !== union && canonicalJson(withoutDocs(defs[name])) === shape);
  return [copied ?? union];
}

function propertyOf(defs: Defs, name: string, property: string): unknown {
  const def = defs[name];
  const props = isObject(def) && isObject(def["properties"]) ? def["properties"] : undefined;
  return props?.[property];
}

function methodOf(defs: Defs, message: string): string | undefined {
  const node = propertyOf(defs, message, "method");
  const method = isObject(node) ? node["const"] : undefined;
  return typeof method === "string" ? method : undefined;
}

function resolve(defs: Defs, node: unknown, prefix: string): unknown {
  let current = node;
  for (let hops = 0; hops < 64; hops++) {
    const name = refName(current, prefix);
    if (name === undefined) return current;
    current = defs[name];
  }
  return undefined;
}

/**
 * Whether params of this shape may carry `task`: the object declares it, or, for a union (2025-11-25's
 * ElicitRequestParams), every member does.
 */
export function paramsAllowTask(defs: Defs, params: unknown, prefix: string): boolean {
  const node = resolve(defs, params, prefix);
  if (!isObject(node)) return false;
  if (Array.isArray(node["anyOf"]) && node["anyOf"].length > 0)
    return node["anyOf"].every((m) => paramsAllowTask(defs, m, prefix));
  if (Array.isArray(node["allOf"]) && node["allOf"].some((m) => paramsAllowTask(defs, m, prefix))) return true;
  return isObject(node["properties"]) && node["properties"]["task"] !== undefined;
}

/** The node a dotted path names inside a capability object, or undefined when the schema has no such member. */
export function capabilityNode(defs: Defs, capabilities: string, path: string, prefix: string): unknown {
  let node = resolve(defs, defs[capabilities], prefix);
  for (const key of path.split(".")) {
    const props = isObject(node) && isObject(node["properties"]) ? node["properties"] : undefined;
    if (props === undefined || !Object.hasOwn(props, key)) return undefined;
    node = resolve(defs, props[key], prefix);
  }
  return node;
}

/** The members of an object node's `properties`, in the schema's order. */
function memberNames(node: unknown): string[] {
  return isObject(node) && isObject(node["properties"]) ? Object.keys(node["properties"]) : [];
}

/**
 * Requests the receiver may be asked to run as tasks, from `tasks.requests` of its capabilities: each category
 * member names its methods' category, each of its members a method (tools.call -> tools/call). A method that is
 * not a request the receiver gets, or whose params do not allow `task`, is left out with a note.
 */
function deriveTasks(defs: Defs, entries: Map<string, MethodEntry>, prefix: string, notes: string[]): void {
  for (const [direction, capabilities] of Object.entries(CAPABILITIES) as [Direction, string][]) {
    const requests = capabilityNode(defs, capabilities, "tasks.requests", prefix);
    for (const category of memberNames(requests)) {
      for (const member of memberNames(
        resolve(defs, (requests as { properties: Defs }).properties[category], prefix),
      )) {
        const method = `${category}/${member}`;
        const path = `tasks.requests.${category}.${member}`;
        const entry = entries.get(method);
        if (
          entry === undefined ||
          entry.kind !== "request" ||
          (entry.direction !== direction && entry.direction !== "both")
        ) {
          notes.push(`${capabilities}.${path} names ${method}, which is not a ${direction} request; left out`);
          continue;
        }
        if (!paramsAllowTask(defs, propertyOf(defs, entry.message, "params"), prefix)) {
          notes.push(`${capabilities}.${path}: the params of ${entry.message} have no "task"; ${method} left out`);
          continue;
        }
        entry.task = path;
      }
    }
  }
}

/** The capability objects of the sides that receive messages going `direction`. */
export function receiverCapabilities(direction: Direction): string[] {
  return direction === "both" ? Object.values(CAPABILITIES) : [CAPABILITIES[direction]];
}

/**
 * The methods whose capability the MCP specification names in prose, not by their category: completion/complete
 * needs `completions` (its category names none), resources/(un)subscribe `resources.subscribe`, tasks/cancel and
 * tasks/list their own members of `tasks`. Taken where the receiver's capabilities have the member, so a schema (an
 * official revision, or a user's) without a sidecar derives the same table as one whose sidecar states them, and a
 * diff between the two sees no change.
 */
const SPECIFIED_CAPABILITIES: { readonly [method: string]: string } = {
  "completion/complete": "completions",
  "resources/subscribe": "resources.subscribe",
  "resources/unsubscribe": "resources.subscribe",
  "tasks/cancel": "tasks.cancel",
  "tasks/list": "tasks.list",
};

/**
 * The capability each method needs: the specification's own exceptions (SPECIFIED_CAPABILITIES), else its category:
 * the part of the name before the first `/` naming a member of the receiver's capabilities (tools/call -> tools,
 * roots/list -> roots). A method going both ways needs it only when both sides have the member; a name without a
 * category (ping) or with one no capability names needs none.
 */
function deriveCapabilities(defs: Defs, entries: Map<string, MethodEntry>, prefix: string): void {
  for (const entry of entries.values()) {
    const receivers = receiverCapabilities(entry.direction);
    const has = (path: string) => receivers.every((c) => capabilityNode(defs, c, path, prefix) !== undefined);
    const specified = Object.hasOwn(SPECIFIED_CAPABILITIES, entry.method)
      ? SPECIFIED_CAPABILITIES[entry.method]
      : undefined;
    if (specified !== undefined && has(specified)) {
      entry.capability = specified;
      continue;
    }
    const slash = entry.method.indexOf("/");
    if (slash <= 0) continue;
    const category = entry.method.slice(0, slash);
    if (has(category)) entry.capability = category;
  }
}

/**
 * The result of a request, from the schema alone, most specific first: the `result` of `<Stem>ResultResponse`
 * (2026-07-28 and later name every successful response, some as a union with InputRequiredResult), then a
 * definition named `<Stem>Result`, then the empty result when every union of results the answering side may send
 * has the bare `Result` among its members (MCP's ping, logging/setLevel, resources/subscribe...).
 */
function resultOf(
  defs: Defs,
  message: string,
  answerers: string[],
  prefix: string,
): { result?: string[]; empty?: true } {
  const stem = message.replace(/Request$/, "");
  const declared = propertyOf(defs, `${stem}ResultResponse`, "result");
  const single = refName(declared, prefix);
  if (single !== undefined) return { result: [single] };
  if (isObject(declared) && Array.isArray(declared["anyOf"])) {
    const members = declared["anyOf"].map((m) => refName(m, prefix));
    if (members.length > 0 && members.every((m) => m !== undefined)) return { result: members as string[] };
  }
  if (`${stem}Result` in defs) return { result: [`${stem}Result`] };
  const generic =
    answerers.length > 0 && answerers.every((union) => unionMembers(defs, union, prefix).includes("Result"));
  if (generic) {
    const empty = ["EmptyResult", "Result"].find((name) => name in defs);
    if (empty !== undefined) return { result: [empty], empty: true };
  }
  return {};
}

/**
 * Derives the method table from ClientRequest/ServerRequest/ClientNotification/ServerNotification: a message in a
 * client and a server union goes both ways; its method is the const of its `method` property, its params the
 * definition `params` refers to. `defsKey` is "$defs" (2020-12) or "definitions" (draft-07).
 */
export function deriveMethods(defs: Defs, defsKey: "$defs" | "definitions"): DerivedMethods {
  const prefix = `#/${defsKey}/`;
  const notes: string[] = [];
  const emptyResults: string[] = [];
  const entries = new Map<string, MethodEntry>();
  for (const kind of ["request", "notification"] as const) {
    const suffix = kind === "request" ? "Request" : "Notification";
    const client = messageUnion(defs, `Client${suffix}`, prefix);
    const server = messageUnion(defs, `Server${suffix}`, prefix);
    for (const message of [...new Set([...client, ...server])]) {
      const method = methodOf(defs, message);
      if (method === undefined) {
        notes.push(`${message} is in a message union but has no constant "method"; left out`);
        continue;
      }
      const fromClient = client.includes(message);
      const fromServer = server.includes(message);
      const direction: Direction =
        fromClient && fromServer ? "both" : fromClient ? "client-to-server" : "server-to-client";
      const entry: MethodEntry = { method, kind, direction, message };
      const params = refName(propertyOf(defs, message, "params"), prefix);
      if (params !== undefined) entry.params = params;
      if (kind === "request") {
        // A client's request is answered by the server, and the other way round.
        const answerers = [...(fromClient ? ["ServerResult"] : []), ...(fromServer ? ["ClientResult"] : [])].filter(
          (u) => u in defs,
        );
        const { result, empty } = resultOf(defs, message, answerers, prefix);
        if (result !== undefined) entry.result = result;
        else
          notes.push(
            `${method}: no result found for ${message} (no ${message.replace(/Request$/, "")}ResultResponse, no ${message.replace(/Request$/, "")}Result, and no bare Result in ${answerers.join(" and ") || "a result union"})`,
          );
        if (empty) emptyResults.push(method);
      }
      entries.set(method, entry);
    }
  }
  deriveTasks(defs, entries, prefix, notes);
  deriveCapabilities(defs, entries, prefix);
  const methods = [...entries.values()].sort((a, b) => compareCodeUnits(a.method, b.method));
  const inputRequests = deriveInputRequests(defs, prefix, notes);
  return { methods, inputRequests, emptyResults: emptyResults.sort(compareCodeUnits), notes };
}

/** The union of the requests a server may ask inside an `input_required` result (2026-07-28 and later). */
export const INPUT_REQUEST_UNION = "InputRequest";

/**
 * The input requests: members of the InputRequest union. Each is a request the server asks and the client answers,
 * so its result is found as for any request (`<Stem>Result`) and its capability among the client's.
 */
function deriveInputRequests(defs: Defs, prefix: string, notes: string[]): MethodEntry[] {
  const entries = new Map<string, MethodEntry>();
  const answerers = ["ClientResult"].filter((u) => u in defs);
  for (const message of messageUnion(defs, INPUT_REQUEST_UNION, prefix)) {
    const method = methodOf(defs, message);
    if (method === undefined) {
      notes.push(`${message} is in ${INPUT_REQUEST_UNION} but has no constant "method"; left out`);
      continue;
    }
    const entry: MethodEntry = { method, kind: "request", direction: "server-to-client", message };
    const params = refName(propertyOf(defs, message, "params"), prefix);
    if (params !== undefined) entry.params = params;
    const { result } = resultOf(defs, message, answerers, prefix);
    if (result === undefined) {
      notes.push(`${method}: no result found for the input request ${message}; left out`);
      continue;
    }
    entry.result = result;
    entries.set(method, entry);
  }
  deriveCapabilities(defs, entries, prefix);
  return [...entries.values()].sort((a, b) => compareCodeUnits(a.method, b.method));
}

const list = (items: string[]): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

/** The one line `generate` and `check` print when there is no sidecar. */
export function derivationNote(derived: DerivedMethods, lookedFor: string | undefined): string {
  const requests = derived.methods.filter((m) => m.kind === "request").length;
  const notifications = derived.methods.length - requests;
  const empty = derived.emptyResults.length
    ? `; ${list(derived.emptyResults)} answer${derived.emptyResults.length === 1 ? "s" : ""} with the empty result`
    : "";
  return `no methods sidecar${lookedFor ? ` (${lookedFor})` : ""}: ${requests} requests and ${notifications} notifications derived from the schema's unions${empty}`;
}

/** Applies a sidecar's entries; each entry's fields replace the derived ones, and an unknown method must be complete. */
export function applyOverrides(
  derived: MethodEntry[],
  sidecar: Sidecar | undefined,
): { entries: MethodEntry[]; origin: Map<string, MethodOverride>; errors: SchemaError[] } {
  const byMethod = new Map(derived.map((m) => [m.method, { ...m }]));
  const origin = new Map<string, MethodOverride>();
  const errors: SchemaError[] = [...(sidecar?.errors ?? [])];
  for (const entry of sidecar?.entries ?? []) {
    if (origin.has(entry.method)) {
      errors.push(
        new SchemaError(
          sidecar!.file,
          `method ${entry.method} is listed twice (first at ${origin.get(entry.method)!.pointer})`,
          `${entry.pointer}/method`,
        ),
      );
      continue;
    }
    origin.set(entry.method, entry);
    const { pointer: _pointer, task, capability, ...fields } = entry;
    // false clears what the schema says; a path replaces it.
    const settled = {
      ...(typeof task === "string" ? { task } : {}),
      ...(typeof capability === "string" ? { capability } : {}),
    };
    const base = byMethod.get(entry.method);
    if (base === undefined) {
      if (fields.kind === undefined || fields.direction === undefined || fields.message === undefined) {
        errors.push(
          new SchemaError(
            sidecar!.file,
            `method ${entry.method} is not in the schema's message unions; add its message to ClientRequest, ServerRequest, ClientNotification or ServerNotification (or give kind, direction and message here)`,
            `${entry.pointer}/method`,
          ),
        );
        continue;
      }
      byMethod.set(entry.method, {
        ...fields,
        ...settled,
        method: entry.method,
        kind: fields.kind,
        direction: fields.direction,
        message: fields.message,
      });
      continue;
    }
    Object.assign(base, fields, settled);
    if (task === false) delete base.task;
    if (capability === false) delete base.capability;
    // Notifications have no result; a request entry that changes kind takes the result it names, if any.
    if (base.kind === "notification" && fields.result === undefined) delete base.result;
  }
  const entries = [...byMethod.values()].sort((a, b) => compareCodeUnits(a.method, b.method));
  return { entries, origin, errors };
}

/**
 * The sidecar as read, each entry's shape checked already (schema/methods.schema.json; undefined where an entry
 * failed, with its error in `errors`): `result` may be one name or a list.
 */
export function toSidecar(
  file: string,
  methods: readonly (Record<string, unknown> | undefined)[],
  errors: SchemaError[] = [],
): Sidecar {
  const entries: MethodOverride[] = [];
  methods.forEach((raw, i) => {
    if (raw === undefined) return;
    const {
      result,
      why: _why,
      ...rest
    } = raw as Omit<MethodOverride, "pointer" | "result"> & { result?: string | string[]; why?: string };
    entries.push({
      ...rest,
      ...(result !== undefined ? { result: typeof result === "string" ? [result] : [...result] } : {}),
      pointer: `/methods/${i}`,
    });
  });
  return { file, entries, errors };
}

/** Pointer to a definition, for errors about derived entries (which have no sidecar line to point at). */
export function definitionPointer(defsPointer: string, name: string): string {
  return `${defsPointer}/${escapeToken(name)}`;
}
