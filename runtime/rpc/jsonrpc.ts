// JSON-RPC 2.0 envelope types and error codes shared by every layer of the runtime.

export type RequestId = string | number;
export type JsonObject = { [key: string]: unknown };

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: JsonObject;
}

export interface JsonRpcResultResponse {
  jsonrpc: "2.0";
  id: RequestId;
  result: JsonObject;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  // Absent only when the id could not be read (parse error, invalid request).
  id?: RequestId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** JSON-RPC's first implementation-defined server error code, the one this runtime uses for its generic errors. */
const SERVER_ERROR = -32000;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  // MCP: a server-to-client request the client cannot serve without user interaction (URL elicitation).
  UrlElicitationRequired: -32042,
  // MCP: the resource named in resources/read does not exist.
  ResourceNotFound: -32002,
  // Refused for load, nothing started: a session already serves as many requests as it may, or a server holds as
  // many sessions as it may (the generic server-error code).
  ServerBusy: SERVER_ERROR,
  // The connection under a pending request closed, or a transport lost its reply (same generic server-error code).
  ConnectionLost: SERVER_ERROR,
} as const;

/** An error that crosses the wire as a JSON-RPC error object. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** @internal */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

/** @internal A JSON object: not null, not an array (the one check every layer here uses). */
export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Hand-written envelope check, used by the session when no generated guard is supplied.
 * Checks only the JSON-RPC frame (jsonrpc, id, method, params, result, error), never method payloads.
 */
export function isJsonRpcMessage(value: unknown): value is JsonRpcMessage {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0") return false;
  const id = value.id;
  const method = value.method;
  if (method !== undefined) {
    if (typeof method !== "string") return false;
    if (id !== undefined && !isRequestId(id)) return false;
    const params = value.params;
    return (params === undefined || isPlainObject(params)) && value.result === undefined && value.error === undefined;
  }
  const result = value.result;
  const error = value.error;
  if (result !== undefined) {
    return error === undefined && isRequestId(id) && isPlainObject(result);
  }
  if (!isPlainObject(error)) return false;
  if (id !== undefined && !isRequestId(id)) return false;
  return typeof error.code === "number" && Number.isInteger(error.code) && typeof error.message === "string";
}
