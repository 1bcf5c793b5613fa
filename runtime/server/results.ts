// Shaping what McpServer's registrations give and its handlers return into MCP definitions and results.
import { ErrorCode, RpcError, isPlainObject as isObject, type JsonObject } from "../rpc/jsonrpc.js";

/** Copy of `source` with only the members that are defined. */
export function defined(source: { [key: string]: unknown }): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(source)) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A handler's answer as the result it stands for: a string becomes the result `fromText` makes of it; anything else
 * must be an object carrying the list `listKey`, else the call fails with an internal error saying `refusal()`.
 */
export function handlerResult(
  answer: unknown,
  listKey: string,
  fromText: (text: string) => JsonObject,
  refusal: () => string,
): JsonObject {
  if (typeof answer === "string") return fromText(answer);
  if (!isObject(answer) || !Array.isArray(answer[listKey])) throw new RpcError(ErrorCode.InternalError, refusal());
  return answer;
}
