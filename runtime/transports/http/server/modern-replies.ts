// The 2026-07-28 lane's replies: the HTTP status a JSON-RPC error goes out under, and the HeaderMismatch refusal.
import { ErrorCode, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { HttpExchange } from "./exchange.js";
import { fail } from "./replies.js";
import { ModernErrorCode } from "../../../eras/2026-07-28/envelope.js";

/**
 * The HTTP status of an error answered as a single JSON body: the binding requires 400 for a malformed request, an
 * unsupported version, a missing client capability and a header mismatch, and 404 for an unknown method (its JSON-RPC
 * body tells it from a legacy server's 404). Other errors travel under 200, as any JSON-RPC response does.
 */
const ERROR_STATUS: ReadonlyMap<number, number> = new Map([
  [ErrorCode.InvalidRequest, 400],
  [ErrorCode.InvalidParams, 400],
  [ModernErrorCode.HeaderMismatch, 400],
  [ModernErrorCode.MissingRequiredClientCapability, 400],
  [ModernErrorCode.UnsupportedProtocolVersion, 400],
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
  fail(ex, 400, ModernErrorCode.HeaderMismatch, message, {}, { id });
}
