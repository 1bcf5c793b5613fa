// A POST's body checked and read: Accept and Content-Type, the size limit, UTF-8 JSON, one JSON-RPC message.
import { ErrorCode, type JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import type { HttpExchange } from "./exchange.js";
import { fail } from "./replies.js";
import { accepts, classifyMessage, isJsonContentType, type MessageKind } from "../wire.js";

export interface PostedMessage {
  readonly message: JsonRpcMessage;
  readonly kind: MessageKind;
}

/** The message a POST carries; undefined when the POST was refused (and has been answered). */
export async function readPostedMessage(ex: HttpExchange, maxBody: number): Promise<PostedMessage | undefined> {
  const accept = ex.headers["accept"];
  if (!accepts(accept, "application/json", "text/event-stream")) {
    fail(ex, 406, ErrorCode.InvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream");
    return undefined;
  }
  if (!isJsonContentType(ex.headers["content-type"])) {
    fail(ex, 415, ErrorCode.InvalidRequest, "Unsupported Media Type: Content-Type must be application/json");
    return undefined;
  }
  const body = await ex.readBody(maxBody);
  if (body === "too-large") {
    fail(ex, 413, ErrorCode.InvalidRequest, `Payload Too Large: body exceeds ${maxBody} bytes`, {
      connection: "close",
    });
    return undefined;
  }
  if (body === "consumed") {
    // A mounting mistake, not the client's: say what to change (the guide's framework recipes show the order).
    fail(
      ex,
      500,
      ErrorCode.InternalError,
      "Internal error: the request body was read before it reached the MCP endpoint (a body parser ran first); mount the endpoint before body parsers, or leave the parsed body on req.body",
    );
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    fail(ex, 400, ErrorCode.ParseError, "Parse error: body is not valid UTF-8 JSON");
    return undefined;
  }
  const kind = classifyMessage(value);
  if (kind === undefined) {
    fail(ex, 400, ErrorCode.InvalidRequest, "Invalid Request: body must be one JSON-RPC 2.0 message");
    return undefined;
  }
  return { message: value as JsonRpcMessage, kind };
}
