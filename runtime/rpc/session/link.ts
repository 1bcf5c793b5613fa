// What the parts of a session share: the open transport, error and debug reporting, and JSON-RPC error replies.
import type { JsonRpcErrorObject, JsonRpcMessage, RequestId } from "../jsonrpc.js";
import type { ReplyChannel, Transport } from "../transport.js";

/** Something worth knowing when debugging that is not an error (ignored notifications, late messages). */
export interface SessionDebugEvent {
  kind:
    | "unknown-notification"
    | "invalid-notification-params"
    | "late-progress"
    | "late-response"
    | "cancel-unknown-request";
  method?: string;
  id?: RequestId;
  detail?: unknown;
}

/** The session as its inbound and outbound halves see it. */
export interface SessionLink {
  /** The transport while the session is open; undefined before connect and after close. */
  readonly openTransport: Transport | undefined;
  reportError(error: unknown): void;
  debug(event: SessionDebugEvent): void;
}

/** Send a JSON-RPC error (on the request's own reply channel when it has one); nothing when the session is closed. */
export function sendError(
  link: SessionLink,
  id: RequestId | undefined,
  code: number,
  message: string,
  data?: unknown,
  channel?: ReplyChannel,
): void {
  const transport = link.openTransport;
  if (transport === undefined) return;
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  const reply: JsonRpcMessage = id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error };
  transport
    .send(reply, id === undefined ? undefined : { relatedRequestId: id, reply: channel })
    .catch((e: unknown) => link.reportError(e));
}
