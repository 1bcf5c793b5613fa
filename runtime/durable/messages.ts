// Guards and conversions for the messages a durable operation queues: which is the final response, and its outcome.
import {
  RpcError,
  type JsonObject,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
} from "../rpc/jsonrpc.js";

/** The final response of an operation (a result or an error), as opposed to a notification or a request it sent. */
export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return (message as { method?: unknown }).method === undefined;
}

export function isResultResponse(message: JsonRpcMessage): message is JsonRpcResultResponse {
  return (message as Partial<JsonRpcResultResponse>).result !== undefined;
}

export function isErrorResponse(message: JsonRpcMessage): message is JsonRpcErrorResponse {
  return (message as Partial<JsonRpcErrorResponse>).error !== undefined;
}

/** The status a final response records: failed for an error response. */
export function finalStatus(response: JsonRpcResponse): "completed" | "failed" {
  return isErrorResponse(response) ? "failed" : "completed";
}

/** The result a response carries, or its error thrown as an RpcError (what a promise awaiting it settles with). */
export function outcome(response: JsonRpcResponse): JsonObject {
  if (isErrorResponse(response)) throw new RpcError(response.error.code, response.error.message, response.error.data);
  return response.result;
}

/** The response a stored message is, when it is one: what another node reads back from an operation's queue. */
export function asResponse(message: unknown): JsonRpcResponse | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as { method?: unknown; result?: unknown; error?: unknown };
  if (m.method !== undefined) return undefined;
  if (typeof m.error === "object" && m.error !== null) {
    const e = m.error as { code?: unknown; message?: unknown };
    return typeof e.code === "number" && typeof e.message === "string" ? (message as JsonRpcResponse) : undefined;
  }
  return typeof m.result === "object" && m.result !== null ? (message as JsonRpcResponse) : undefined;
}
