// The transport contract: moves whole JSON-RPC messages and knows nothing of their meaning.
import type { JsonRpcMessage, RequestId } from "./jsonrpc.js";
import type { ConnectionClosedError } from "./errors.js";

/**
 * What the app's authentication granted the sender of a message (HTTP with an authenticator): who it is, the
 * scopes its credential carries and the other claims the app may read. Never the credential itself.
 */
export interface AuthGrant {
  /** Who the caller is; an HTTP session is bound to it. */
  readonly principal: string;
  /** The scopes granted (OAuth `scope`), when the credential carries any. */
  readonly scopes?: readonly string[];
  /** Other verified facts about the credential (issuer, client id, audience, expiry...), by claim name. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /**
   * When the credential stops being valid, ms since the epoch. The HTTP server ends every SSE stream opened with
   * the grant then (with `retry`, so the client comes back with a fresh credential). Undefined: no expiry.
   */
  readonly expiresAt?: number;
  /**
   * Subscribes to the credential's revocation: `listener` runs once if it is revoked while subscribed. Returns the
   * unsubscribe. The HTTP server ends every SSE stream opened with the grant when it runs.
   */
  readonly whenRevoked?: (listener: () => void) => () => void;
}

/** What a transport knows about where an inbound message came from. */
export interface InboundInfo {
  /** The authenticated principal, when the app's auth hook supplied one (HTTP). */
  principal?: string;
  /** What the app's auth hook granted this message's sender, with the principal above (HTTP). */
  auth?: AuthGrant;
  /** Transport-level session id, when the transport has sessions (HTTP). */
  sessionId?: string;
  /** Request headers, lower-cased names (HTTP). */
  headers?: Readonly<Record<string, string | undefined>>;
  /** The address the message came from, when the transport knows it (HTTP: the peer, or a trusted proxy's header). */
  clientAddress?: string;
  /**
   * The protocol revision the transport's own metadata names for this message (HTTP: the MCP-Protocol-Version
   * header), when the message came on a lane that serves one revision per request.
   */
  protocolVersion?: string;
  /** The inbound request's own reply path, on a transport that has one per request (HTTP). */
  reply?: ReplyChannel;
}

/**
 * Where the replies to one inbound request go, on a transport that has a path per request (HTTP: the response
 * of the POST that carried it). The request outlives its connection there: a client may come back for it.
 */
export interface ReplyChannel {
  /** Whether a connection carries the channel now (HTTP: the POST's response, or a GET that resumed it). */
  readonly connected: boolean;
  /**
   * For the layers above (the session's in-flight count, a resumable request's expiry): `listener` is called with
   * false when the channel loses its connection before the request's response went out, and with true when a new
   * connection takes it up again. Several layers may watch one channel.
   */
  watchConnection?(listener: (connected: boolean) => void): void;
  /**
   * True where the protocol spoken on this channel makes a lost connection the request's cancellation (a stream that
   * cannot be taken up again): the session then aborts the request at once instead of letting it finish unread.
   */
  readonly lossCancels?: boolean;
  /**
   * For a request that arrived while its id was still in flight (a protocol layer whose request takes over
   * another one reuses its id); for any other request they do nothing. Until one of them is called, the earlier request
   * keeps its reply path and everything sent for this one, its response included, goes on its own channel, so a
   * resume that is refused changes nothing about the request it names.
   * takeOver: from now on messages related to the id go here, and the earlier request's path is released.
   * release: this request will not be answered (a later one with its id carries the answer); its path may go.
   */
  takeOver?(): void;
  release?(): void;
  /**
   * The request will get no response: the peer cancelled it, and a cancelled request is not answered. Its reply
   * path may go now instead of waiting for the end of the session (HTTP: the request's SSE stream ends).
   */
  abandon?(): void;
}

/**
 * What `send` returns when the message went out at once and nothing can fail later (in-memory, and stdio without
 * backpressure). Callers on hot paths may skip attaching a rejection handler to it: each one costs a promise and
 * a microtask per message.
 * @internal
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
  /**
   * The reply channel of the inbound request this message answers or belongs to, when the transport gave it one
   * (InboundInfo.reply): a transport that has several requests in flight under one id routes by it.
   */
  reply?: ReplyChannel;
  /**
   * Metadata the protocol above mirrors from this message into the transport's own framing (HTTP: request headers
   * of the POST that carries it); transports without such framing ignore it.
   */
  headers?: Readonly<Record<string, string>>;
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
   * True when each request travels in an exchange of its own that the peer always answers, even for a method it
   * does not know (HTTP): a request that gets no answer in time is then from a slow peer, not a peer that ignores it.
   */
  readonly answersEachRequest?: boolean;
  /**
   * A new transport to the same peer (stdio: the same command line, a new process), not yet started: for a client
   * whose peer went away before the connection was settled (a server that exits on a request it does not know).
   */
  respawn?(): Transport;
  /**
   * Called by the layer above once it knows the protocol revision it speaks on this connection: a transport whose
   * framing depends on the revision (HTTP: sessions, the standalone stream and how a request is cancelled) adapts.
   */
  setProtocolVersion?(version: string): void;
  /**
   * True when the connection carries one request and no handshake comes on it (HTTP's stateless mode and the lane of
   * MCP 2026-07-28): the layer above serves that request without waiting for one.
   */
  readonly perRequest?: boolean;
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
  /**
   * Called by the layer above for a request it will resume by its own means if the stream carrying the reply
   * is lost (a protocol-level resume): the transport then reports the loss at once (the synthesized error response)
   * instead of trying to resume the stream itself. A transport without reply streams has nothing to do.
   */
  skipStreamResume?(requestId: RequestId): void;
}
