// What MCP 2026-07-28 changes on the server's wire: the methods a client may send (from the generated tables), and the members every result carries.
import { ErrorCode, isPlainObject, type JsonObject, type JsonRpcResponse } from "../../rpc/jsonrpc.js";
import type { DispatchTable, MethodSpec } from "../../rpc/dispatch.js";
import { MODERN_PROTOCOL_VERSIONS, SERVER_INFO_META } from "./envelope.js";
import { TASKS_EXTENSION, TASKS_EXTENSION_METHODS, TASKS_UPDATE, TASKS_UPDATE_SPEC } from "./tasks-extension.js";

export const DISCOVER = "server/discover";

export const LISTEN = "subscriptions/listen";

/**
 * What a generated SDK gives the era module of one revision after its own: that revision's tables and the facts of
 * its era map. The runtime speaks a revision only when it has them, so what it accepts follows the schema.
 */
export interface RevisionTables {
  /** The revision's client-to-server table (its generated `clientToServer`). */
  readonly inbound: DispatchTable;
  /** The requests a server may ask inside an `input_required` result (its generated `inputRequests`). */
  readonly inputRequests?: DispatchTable;
  /** The requests whose complete result is a CacheableResult: method to result name (the era map's `cacheable`). */
  readonly cacheable?: { readonly [method: string]: string };
}

/** The tables of each revision after the SDK's, by revision (the generated `revisionTables`). */
export type RevisionTableMap = { readonly [revision: string]: RevisionTables };

const NO_TABLE: DispatchTable = {};

const isProbe = (params: unknown): boolean => params === undefined || isPlainObject(params);
const explainProbe = (params: unknown) =>
  isProbe(params) ? [] : [{ pointer: "/params", message: "must be an object" }];

/**
 * The 2026-07-28 wire as the generated tables describe it, derived once per table set (a server builds a session per
 * HTTP request on this revision, and each shares it).
 */
export class ModernWire {
  private static readonly made = new WeakMap<RevisionTables, ModernWire>();
  /**
   * The requests a client of the revision may send, and those of the extensions this runtime serves (the Tasks
   * extension's, answered only where a task receiver is installed); whatever 2025-11-25 had beyond them answers -32601.
   */
  readonly requests: ReadonlySet<string>;
  /** The requests whose result may be an InputRequiredResult. */
  readonly inputRequired: ReadonlySet<string>;
  readonly cacheable: ReadonlySet<string>;
  readonly inputRequests: DispatchTable;
  private readonly extended = new WeakMap<DispatchTable, DispatchTable>();

  private constructor(private readonly tables: RevisionTables) {
    const entries = Object.entries(tables.inbound);
    this.requests = new Set([
      ...entries.filter(([, spec]) => spec.kind === "request").map(([method]) => method),
      ...TASKS_EXTENSION_METHODS,
    ]);
    this.inputRequired = new Set(
      entries
        .filter(([, spec]) => spec.resultType?.split(" | ").includes("InputRequiredResult") === true)
        .map(([method]) => method),
    );
    this.cacheable = new Set(Object.keys(tables.cacheable ?? {}));
    this.inputRequests = tables.inputRequests ?? NO_TABLE;
  }

  /** The wire of this runtime's modern revision among `tables`, or undefined when the SDK was not generated for it. */
  static of(tables: RevisionTableMap | undefined): ModernWire | undefined {
    const own =
      tables !== undefined && Object.hasOwn(tables, MODERN_PROTOCOL_VERSIONS[0]!)
        ? tables[MODERN_PROTOCOL_VERSIONS[0]!]
        : undefined;
    if (own === undefined) return undefined;
    let wire = ModernWire.made.get(own);
    if (wire === undefined) {
      wire = new ModernWire(own);
      ModernWire.made.set(own, wire);
    }
    return wire;
  }

  /** `table` (the SDK revision's) with the requests only this revision has (server/discover, subscriptions/listen). */
  extend(table: DispatchTable): DispatchTable {
    let extended = this.extended.get(table);
    if (extended === undefined) {
      const added: { [method: string]: MethodSpec } = {};
      for (const method of [DISCOVER, LISTEN]) {
        const spec = this.tables.inbound[method];
        if (spec !== undefined && !Object.hasOwn(table, method)) added[method] = spec;
      }
      // A probe is answered with or without its envelope (an enveloped one has it checked by admit): it pins nothing
      // and tells a client of any era which revisions the server speaks.
      const discover = added[DISCOVER];
      if (discover !== undefined) added[DISCOVER] = { ...discover, isParams: isProbe, explainParams: explainProbe };
      // tasks/get and tasks/cancel keep the SDK table's params check (the same shape); tasks/update is the extension's.
      if (!Object.hasOwn(table, TASKS_UPDATE)) added[TASKS_UPDATE] = TASKS_UPDATE_SPEC;
      extended = { ...added, ...table };
      this.extended.set(table, extended);
    }
    return extended;
  }
}

/** Where the modern wire's members come from for one server. */
export interface ModernResultOptions {
  readonly serverInfo: JsonObject;
  /** The revision's wire (which results are cacheable). */
  readonly wire: ModernWire;
  /** Cache hints by method, for the cacheable results (see CacheHint); the rest get `ttlMs: 0`, private. */
  readonly cache?: CacheHints;
}

/** How long a cacheable result is fresh, ms, and who may keep it ("public": shared caches too). */
export interface CacheHint {
  readonly ttlMs: number;
  readonly scope?: "public" | "private";
}

/** Per method (`tools/list`, `resources/read`...): the hint its results carry on 2026-07-28. */
export type CacheHints = { readonly [method: string]: CacheHint };

/**
 * A response as 2026-07-28 sends it: `resultType: "complete"` on every result (a handler's own `resultType` stands),
 * the server's identity in `_meta`, `ttlMs: 0` and `cacheScope: "private"` on cacheable results unless the handler set
 * them; a resource that does not exist is -32602 (2025-11-25 used -32002) with `data.uri`.
 */
export function modernResponse(
  method: string,
  message: JsonRpcResponse,
  options: ModernResultOptions,
): JsonRpcResponse {
  if ("error" in message) {
    const error = message.error;
    if (error.code !== ErrorCode.ResourceNotFound) return message;
    return { ...message, error: { ...error, code: ErrorCode.InvalidParams } };
  }
  // Object.assign, not spread: on Node 20 it copies a small object several times faster, and this runs per response.
  const result: JsonObject = Object.assign({}, message.result);
  if (result.resultType === undefined) result.resultType = "complete";
  // What only 2025-11-25 has stays out of a 2026 answer: core tasks and async tool calls (the revision moved tasks to
  // an extension) in the capabilities, and the tools' execution.taskSupport that goes with them. A server serving
  // task-augmented tools/call serves the Tasks extension with the same receiver, and says so.
  if (method === DISCOVER && isPlainObject(result.capabilities)) {
    const { tasks, async: _async, ...capabilities } = result.capabilities;
    if (servesToolTasks(tasks)) {
      const extensions = isPlainObject(capabilities.extensions) ? capabilities.extensions : {};
      capabilities.extensions = { ...extensions, [TASKS_EXTENSION]: {} };
    }
    result.capabilities = capabilities;
  }
  if (method === "tools/list" && Array.isArray(result.tools)) {
    result.tools = result.tools.map((tool) => {
      if (!isPlainObject(tool) || tool.execution === undefined) return tool;
      const { execution: _execution, ...rest } = tool;
      return rest;
    });
  }
  const meta: JsonObject = isPlainObject(result._meta) ? Object.assign({}, result._meta) : {};
  if (meta[SERVER_INFO_META] === undefined) meta[SERVER_INFO_META] = options.serverInfo;
  result._meta = meta;
  // An input_required round is no answer to keep.
  if (options.wire.cacheable.has(method) && result.resultType === "complete") {
    const hint =
      options.cache !== undefined && Object.hasOwn(options.cache, method) ? options.cache[method] : undefined;
    if (result.ttlMs === undefined) result.ttlMs = hint?.ttlMs ?? 0;
    if (result.cacheScope === undefined) result.cacheScope = hint?.scope ?? "private";
  }
  return { jsonrpc: message.jsonrpc, id: message.id, result };
}

/** Whether a 2025-11-25 `tasks` capability declares task-augmented tools/call. */
function servesToolTasks(tasks: unknown): boolean {
  if (!isPlainObject(tasks) || !isPlainObject(tasks.requests)) return false;
  const tools = tasks.requests.tools;
  return isPlainObject(tools) && isPlainObject(tools.call);
}
