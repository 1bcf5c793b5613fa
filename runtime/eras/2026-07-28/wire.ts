// What MCP 2026-07-28 changes on the server's wire: the methods a client may send, and the members every result carries.
import { ErrorCode, isPlainObject, type JsonObject, type JsonRpcResponse } from "../../jsonrpc.js";
import type { MethodSpec } from "../../dispatch.js";
import { SERVER_INFO_META } from "./envelope.js";

export const DISCOVER = "server/discover";

/**
 * The requests a 2026-07-28 client may send a server (the schema's ClientRequest). The methods of 2025-11-25 that are
 * gone (initialize, ping, logging/setLevel, resources/subscribe and unsubscribe, the core tasks/*) answer -32601.
 */
export const MODERN_CLIENT_REQUESTS: ReadonlySet<string> = new Set([
  DISCOVER,
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "subscriptions/listen",
]);

/** Results that are CacheableResult in 2026-07-28: they carry `ttlMs` and `cacheScope`. */
const CACHEABLE: ReadonlySet<string> = new Set([
  DISCOVER,
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
]);

/** server/discover takes only `_meta` (the envelope, checked on its own). */
export const DISCOVER_SPEC: MethodSpec = {
  kind: "request",
  paramsType: "DiscoverRequestParams",
  resultType: "DiscoverResult",
  isParams: (params) => params === undefined || isPlainObject(params),
  explainParams: (params) =>
    params === undefined || isPlainObject(params) ? [] : [{ pointer: "/params", message: "must be an object" }],
};

export const LISTEN = "subscriptions/listen";

/** subscriptions/listen: its filter is read leniently (unknown kinds are left out of the acknowledgement). */
export const LISTEN_SPEC: MethodSpec = {
  kind: "request",
  paramsType: "SubscriptionsListenRequestParams",
  resultType: "SubscriptionsListenResult",
  isParams: (params) => isPlainObject(params),
  explainParams: (params) => (isPlainObject(params) ? [] : [{ pointer: "/params", message: "must be an object" }]),
};

/** Where the modern wire's members come from for one server. */
export interface ModernResultOptions {
  readonly serverInfo: JsonObject;
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
  const result: JsonObject = { ...message.result };
  if (result.resultType === undefined) result.resultType = "complete";
  // What only 2025-11-25 has stays out of a 2026 answer: core tasks and async tool calls (the revision moved tasks to
  // an extension) in the capabilities, and the tools' execution.taskSupport that goes with them.
  if (method === DISCOVER && isPlainObject(result.capabilities)) {
    const { tasks: _tasks, async: _async, ...capabilities } = result.capabilities;
    result.capabilities = capabilities;
  }
  if (method === "tools/list" && Array.isArray(result.tools)) {
    result.tools = result.tools.map((tool) => {
      if (!isPlainObject(tool) || tool.execution === undefined) return tool;
      const { execution: _execution, ...rest } = tool;
      return rest;
    });
  }
  const meta = isPlainObject(result._meta) ? { ...result._meta } : {};
  if (meta[SERVER_INFO_META] === undefined) meta[SERVER_INFO_META] = options.serverInfo;
  result._meta = meta;
  // An input_required round is no answer to keep.
  if (CACHEABLE.has(method) && result.resultType === "complete") {
    const hint =
      options.cache !== undefined && Object.hasOwn(options.cache, method) ? options.cache[method] : undefined;
    if (result.ttlMs === undefined) result.ttlMs = hint?.ttlMs ?? 0;
    if (result.cacheScope === undefined) result.cacheScope = hint?.scope ?? "private";
  }
  return { ...message, result };
}
