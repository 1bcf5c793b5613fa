// The interface the generated client and server stubs are written against; the session implements it.
import type { JsonObject, RequestId } from "./jsonrpc.js";
import type { AuthGrant } from "./transport.js";

export interface ProgressInfo {
  progress: number;
  total?: number;
  message?: string;
}

export interface RequestOptions {
  /** Aborting sends notifications/cancelled and rejects the call. */
  signal?: AbortSignal;
  /** Milliseconds; default 60 000. */
  timeout?: number;
  /** Receive progress; a progress token is attached to the request's `_meta`. */
  onProgress?: (progress: ProgressInfo) => void;
  /** Restart the timeout whenever progress arrives (works with or without onProgress). */
  resetTimeoutOnProgress?: boolean;
  /** Upper bound, in milliseconds, on the whole call however often the timeout is reset. */
  maxTotalTimeout?: number;
  /**
   * For an ask of the client from inside a handler, where MCP 2026-07-28 carries it in an input-required round: its
   * key in `inputRequests` (default `q0`, `q1`... by call order). Name it when clients may answer before being asked.
   */
  inputKey?: string;
  /**
   * Transport metadata for this request alone (HTTP: extra request headers on its POST); transports without such
   * metadata ignore it.
   */
  headers?: Readonly<Record<string, string>>;
}

/**
 * What the peer said of itself for one request: its protocol revision, capabilities, name and version, and the least
 * severe log level it wants. Read per request, so handlers and capability checks never ask which protocol era carried
 * it (a handshake at the start of the connection, or an envelope on every request).
 */
export interface PeerIdentity {
  readonly protocolVersion: string;
  readonly capabilities: JsonObject;
  readonly info?: { readonly name: string; readonly version: string; readonly [key: string]: unknown };
  /** The least severe log level the peer wants for this request; undefined: send it no log messages. */
  readonly logLevel?: string;
}

/**
 * W3C Trace Context and Baggage as a request carries them in `_meta` (`traceparent`, `tracestate`, `baggage`): the
 * header values, each present only when it arrived well-formed.
 */
export interface TraceContext {
  readonly traceparent?: string;
  readonly tracestate?: string;
  readonly baggage?: string;
}

/** What a request handler is given besides its params. */
export interface RequestContext {
  readonly requestId: RequestId;
  readonly method: string;
  /** Fires when the peer cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /** Send progress for this request, when the caller asked for it; a no-op otherwise. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Send a request to the peer on behalf of this one (e.g. sampling from inside a tool). */
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject>;
  /** Send a notification to the peer on behalf of this one (e.g. logging from inside a tool). */
  notify(method: string, params?: JsonObject): Promise<void>;
  /** The authenticated principal of the connection, when known. */
  readonly principal?: string;
  /** What authentication granted the request's sender (scopes, claims), when the transport authenticates (HTTP). */
  readonly auth?: AuthGrant;
  readonly sessionId?: string;
  /** The address the request came from, when the transport knows it (HTTP; see InboundInfo.clientAddress). */
  readonly clientAddress?: string;
  /** What the peer said of itself for this request; undefined before it said anything (no handshake yet). */
  readonly peerIdentity?: PeerIdentity;
  /** The trace context the request carried in its `_meta`, when it carried a well-formed one. */
  readonly trace?: TraceContext;
}

export type RequestHandler = (
  params: JsonObject | undefined,
  context: RequestContext,
) => Promise<JsonObject> | JsonObject;
/** Who sent a notification, as far as the transport knows: authorization checks need it as much as requests do. */
export interface NotificationContext {
  readonly principal?: string;
  readonly auth?: AuthGrant;
  readonly sessionId?: string;
}

export type NotificationHandler = (
  params: JsonObject | undefined,
  context: NotificationContext,
) => void | Promise<void>;

/** One side of an MCP connection, as the generated stubs see it. */
export interface Peer {
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject>;
  notify(method: string, params?: JsonObject): Promise<void>;
  onRequest(method: string, handler: RequestHandler): void;
  onNotification(method: string, handler: NotificationHandler): void;
}
