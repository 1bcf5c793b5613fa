// The transport contract: moves whole JSON-RPC messages and knows nothing of their meaning.
import type { JsonRpcMessage, RequestId } from "./jsonrpc.js";
import type { ConnectionClosedError } from "./errors.js";

/** What a transport knows about where an inbound message came from. */
export interface InboundInfo {
  /** The authenticated principal, when the app's auth hook supplied one (HTTP). */
  principal?: string;
  /** Transport-level session id, when the transport has sessions (HTTP). */
  sessionId?: string;
  /** Request headers, lower-cased names (HTTP). */
  headers?: Readonly<Record<string, string | undefined>>;
}

/**
 * What `send` returns when the message went out at once and nothing can fail later (in-memory, and stdio without
 * backpressure). Callers on hot paths may skip attaching a rejection handler to it: each one costs a promise and
 * a microtask per message.
 */
export const SENT: Promise<void> = Promise.resolve();

export interface SendOptions {
  /**
   * The inbound request this outbound message belongs to (a response, or progress and
   * server-to-client requests made while serving it). HTTP uses it to pick the SSE stream.
   */
  relatedRequestId?: RequestId;
  /**
   * Called once the message can no longer be lost short of losing the peer itself (in-memory: the peer's
   * onmessage ran; stdio: the line went into the pipe), by a transport whose `confirmsDelivery` is true; others
   * never call it, so nothing may wait on it unless the transport says it will come.
   */
  ondelivered?: () => void;
}

export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  close(): Promise<void>;
  /** A parsed JSON value; not yet checked to be a JSON-RPC message. */
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  /** A frame that was not valid JSON (or not valid UTF-8); the session answers -32700. */
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Transport session id, once known (HTTP). */
  readonly sessionId?: string;
  /**
   * The server forgot the transport's session (HTTP 404) while the connection itself is fine: an initialize on
   * the same transport opens a new one. The session chains onto a callback the app set before connecting.
   */
  onsessionexpired?(error: Error): void;
  /**
   * True when the transport calls `ondelivered` (in-memory, stdio). A resumable request's final response is then
   * dropped once confirmed instead of kept in case it was lost. Stdio qualifies because its connection cannot be
   * reopened: a line written to the pipe is lost only with the peer process, and then no resume can follow.
   * HTTP does not: a response stream can drop after the write while the client lives on and comes back.
   */
  readonly confirmsDelivery?: boolean;
  /**
   * Why the connection closed, when the transport knows more than that it did (a stdio child that exited on its
   * own: exit code, signal, last stderr lines). Read once onclose fired; pending calls reject with it.
   */
  readonly closeError?: ConnectionClosedError;
}
