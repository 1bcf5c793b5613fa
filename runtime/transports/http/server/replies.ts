// The server's plain replies: the header sets it answers with, and a JSON-RPC error under an HTTP status.
import type { RequestId } from "../../../rpc/jsonrpc.js";
import type { HttpExchange } from "./exchange.js";
import { errorBody } from "../wire.js";

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  // Reverse proxies (nginx) would otherwise hold events back in their buffers; MCP 2026-07-28 asks for it.
  "x-accel-buffering": "no",
};
export const JSON_HEADERS = { "content-type": "application/json" };

/** A JSON-RPC error under `status`; `reply`: the refused request's id (so the client's call gets it) and data. */
export function fail(
  ex: HttpExchange,
  status: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
  reply: { readonly id?: RequestId; readonly data?: unknown } = {},
): void {
  ex.respond(status, { ...JSON_HEADERS, ...extra }, errorBody(code, message, reply.id, reply.data));
}
