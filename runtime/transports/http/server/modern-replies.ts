// The 2026-07-28 lane's replies: the HTTP status a JSON-RPC error goes out under, and the HeaderMismatch refusal.
import { ErrorCode, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { HttpExchange } from "./exchange.js";
import { JSON_HEADERS } from "./replies.js";
import { ModernErrorCode } from "../../../eras/2026-07-28/envelope.js";

/** The codes MCP 2026-07-28 defines (the range -32020..-32099 is the specification's). */
export const HEADER_MISMATCH = ModernErrorCode.HeaderMismatch;
const MISSING_REQUIRED_CLIENT_CAPABILITY = ModernErrorCode.MissingRequiredClientCapability;
const UNSUPPORTED_PROTOCOL_VERSION = ModernErrorCode.UnsupportedProtocolVersion;

/**
 * The HTTP status of an error answered as a single JSON body: the binding requires 400 for a malformed request, an
 * unsupported version, a missing client capability and a header mismatch, and 404 for an unknown method (its JSON-RPC
 * body tells it from a legacy server's 404). Other errors travel under 200, as any JSON-RPC response does.
 */
const ERROR_STATUS: ReadonlyMap<number, number> = new Map([
  [ErrorCode.InvalidRequest, 400],
  [ErrorCode.InvalidParams, 400],
  [HEADER_MISMATCH, 400],
  [MISSING_REQUIRED_CLIENT_CAPABILITY, 400],
  [UNSUPPORTED_PROTOCOL_VERSION, 400],
  [ErrorCode.MethodNotFound, 404],
]);

/** The status a response sent as the whole JSON reply of a modern request goes out under. */
export function modernReplyStatus(message: JsonRpcMessage): number {
  const error = (message as { error?: { code?: unknown } }).error;
  if (error === undefined || typeof error.code !== "number") return 200;
  return ERROR_STATUS.get(error.code) ?? 200;
}

/** Refuses a request whose mirrored headers disagree with its body: 400, and -32020 carrying the request's id. */
export function refuseHeaderMismatch(ex: HttpExchange, id: RequestId | undefined, message: string): void {
  const body = { jsonrpc: "2.0", ...(id === undefined ? {} : { id }), error: { code: HEADER_MISMATCH, message } };
  ex.respond(400, JSON_HEADERS, JSON.stringify(body));
}
