// Streamable HTTP server transport (MCP 2025-11-25 + SEP-1699 polling): sessions, SSE routing, resumption.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, isPlainObject, type JsonRpcMessage, type RequestId } from "../jsonrpc.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../protocol-versions.js";
import { MAX_TIMER_MS, limitOption } from "../limits.js";
import type { AuthGrant, InboundInfo, ReplyChannel, SendOptions, Transport } from "../transport.js";
import { EventReplayError, InMemoryEventStore, type EventStore } from "./event-store.js";
import { CorsPolicy, withResponseHeaders, type CorsOptions } from "./http-cors.js";
import { nodeExchange, webExchange, type HeaderRecord, type HttpExchange, type StreamSink } from "./http-exchange.js";
import { checkHostAndOrigin, type HostOriginPolicy } from "./http-security.js";
import {
  DEFAULT_ASSUMED_PROTOCOL_VERSION,
  LAST_EVENT_ID_HEADER,
  PROTOCOL_VERSION_HEADER,
  SESSION_HEADER,
  accepts,
  classifyMessage,
  errorBody,
  isJsonContentType,
  isVisibleAscii,
  randomId,
  requestKey,
  responseId,
} from "./http-wire.js";
import { encodeSseEvent } from "./sse.js";

export type ResponseMode = "sse" | "json";

/** What the auth hook sees of a request. */
export interface HttpRequestInfo {
  readonly method: string;
  readonly url: string;
  readonly headers: HeaderRecord;
}

/**
 * A refusal by the auth hooks: the HTTP status (401 no or bad credentials, 403 not enough rights, 400 a malformed
 * request; any 4xx or 5xx), the WWW-Authenticate header value that tells the client what to do, and the message
 * (and data) of the JSON-RPC error in the body. Nothing in it may quote the credential.
 */
export interface HttpChallenge {
  readonly status: number;
  readonly wwwAuthenticate?: string;
  /** Default: the status's reason ("Unauthorized", "Forbidden"...). */
  readonly message?: string;
  /** The JSON-RPC error's `data`. */
  readonly data?: unknown;
  /** More response headers (e.g. Retry-After). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * What `authenticate` returns: the principal alone (a string), a grant (principal, scopes, claims), a challenge to
 * answer the request with (told apart by its numeric `status`), or null/undefined for no credentials (401 unless
 * `authRequired` is false).
 */
export type HttpAuthResult = string | AuthGrant | HttpChallenge | null | undefined;

/** A document served by GET beside the MCP endpoint (e.g. OAuth protected resource metadata). */
export interface HttpRoute {
  /** The exact URL path it answers (`/.well-known/...`); it must differ from the endpoint's `path`. */
  readonly path: string;
  serve(request: HttpRequestInfo): HttpRouteResponse | Promise<HttpRouteResponse>;
}

export interface HttpRouteResponse {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface StreamableHttpServerOptions extends HostOriginPolicy {
  /**
   * Called when an initialize request opens a session (stateful), or for every POST (stateless). Connect the
   * MCP server session to the transport here; the initialize request is delivered once this settles.
   */
  onSession: (transport: HttpServerTransport) => void | Promise<void>;
  /** No sessions: every POST gets a fresh transport, no Mcp-Session-Id, GET and DELETE answer 405. */
  stateless?: boolean;
  /** Session id maker; default 24 random bytes, base64url. Must yield visible ASCII. */
  sessionIdGenerator?: () => string;
  /**
   * How requests are answered. "sse" (default): an SSE stream, primed at once. "json": one JSON body,
   * unless the handler sends a related message (progress, a server-to-client request) before its response;
   * the reply then becomes an SSE stream at that moment, because JSON cannot carry more than one message.
   */
  responseMode?: ResponseMode | ((method: string) => ResponseMode);
  /** Largest accepted POST body in bytes; default 4 MiB. */
  maxBodyBytes?: number;
  /** Default: an InMemoryEventStore owned by this server. */
  eventStore?: EventStore;
  /** The `retry` (ms) sent before the server closes an SSE connection; default 1000. */
  retryMs?: number;
  /** When set, every SSE connection is closed (with `retry`) this many ms after it opens: SEP-1699 polling. */
  closeSseAfterMs?: number;
  /** When set, requests to any other path get 404. Default: any path (the app mounts the handler). */
  path?: string;
  /**
   * Methods whose requests may carry the id of a request still in flight on the session (a protocol layer whose
   * requests take another request over supplies them, e.g. resumable requests' `transportOptions`). Such a request
   * answers on a stream of its own, and the request it names keeps its stream until the layer above accepted it
   * (ReplyChannel.takeOver). Any other request reusing a live id gets 400. Default: none.
   */
  reusableIdMethods?: readonly string[];
  /**
   * Called for every request to the endpoint (not for `routes`). Returns the caller's principal, or a grant with
   * the principal, its scopes and claims (they reach handlers as InboundInfo.auth / ctx.auth), or a challenge
   * the request is answered with. Throwing or returning null/undefined means unauthenticated. The session an
   * initialize opens is bound to the principal: another principal naming it gets 404.
   */
  authenticate?: (request: HttpRequestInfo) => HttpAuthResult | Promise<HttpAuthResult>;
  /** With `authenticate`: reject unauthenticated requests with 401 (default true). */
  authRequired?: boolean;
  /**
   * Called for every POSTed JSON-RPC message once its body is parsed, before it opens or reaches a session, with
   * the grant `authenticate` returned (undefined when anonymous). A challenge refuses the message (e.g. 403 when
   * a method or tool needs a scope the grant lacks); the JSON-RPC error then carries the request's id.
   */
  authorize?: (
    message: JsonRpcMessage,
    grant: AuthGrant | undefined,
    request: HttpRequestInfo,
  ) => HttpChallenge | undefined | Promise<HttpChallenge | undefined>;
  /**
   * Documents served by GET at other paths than the endpoint's, unauthenticated (e.g. protected resource
   * metadata). The Host/Origin checks and CORS apply to them as to the endpoint.
   */
  routes?: readonly HttpRoute[];
  /** Accepted MCP-Protocol-Version values; default the published revisions 2024-11-05 .. 2025-11-25. */
  supportedProtocolVersions?: readonly string[];
  /**
   * Close sessions that saw no HTTP request for this long while nothing is in flight and no stream is
   * connected (ms). Default 30 minutes; 0 keeps sessions until DELETE or close().
   */
  sessionIdleTimeoutMs?: number;
  /**
   * Most live sessions; an initialize beyond it is answered 503 with a JSON-RPC error and opens nothing, while
   * the existing sessions go on. Default 10,000; 0 for no limit.
   */
  maxSessions?: number;
  /** Errors that have no HTTP request to report to (a failing onSession, a send to a closed stream...). */
  onerror?: (error: Error) => void;
  /**
   * Bytes an SSE connection may hold unsent (its reader is slow or stopped) before the server stops writing to
   * it; default 1 MiB. Past it the connection is closed with `retry` and later events wait in the event store
   * for the client to resume with Last-Event-ID. A stateless stream, which cannot be resumed, is just closed.
   */
  sseHighWaterMarkBytes?: number;
  /**
   * Lets pages from other origins call the server (CORS): preflights from the listed origins are answered and
   * every response to them carries the CORS headers; other origins get none, and 403 for a preflight. Off by default.
   */
  cors?: CorsOptions;
}

/** What a fetch adapter knows of a request beyond the Request itself. */
export interface FetchRequestInfo {
  /** The local address the request arrived on (e.g. `127.0.0.1`, `::1`, `10.0.0.5`), or the address listened on. */
  localAddress?: string;
}

export interface StreamableHttpServer {
  /**
   * A Node request listener: `listenHttp(server.nodeListener)` or `createHttpServer(...)` (which set request
   * timeouts), `http.createServer(...)`, or call it from any router.
   */
  readonly nodeListener: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * A web-standard handler for fetch-style runtimes. Pass `info.localAddress` when the adapter knows the
   * address the request arrived on; without it the Host/Origin allow-list applies (see dnsRebindingProtection).
   */
  readonly fetch: (request: Request, info?: FetchRequestInfo) => Promise<Response>;
  /** Live sessions by id. */
  readonly sessions: ReadonlyMap<string, HttpServerTransport>;
  /** Ends every session (onclose fires on each). */
  close(): Promise<void>;
}

/** Thrown by HttpServerTransport.send when a message has nowhere to go. */
export class UndeliverableMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndeliverableMessageError";
  }
}

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
};
const JSON_HEADERS = { "content-type": "application/json" };

function newStreamId(): string {
  return randomId(9);
}

/** One logical SSE stream: a request's reply stream or the session's standalone GET stream. */
interface OutStream {
  readonly id: string;
  readonly kind: "request" | "standalone";
  /** Request keys on this stream still waiting for their response. */
  readonly pending: Set<string>;
  /** The current connection, if any. */
  sink?: StreamSink;
  closeTimer?: NodeJS.Timeout;
  /** JSON mode, before anything forced SSE: the POST still waiting for its single JSON reply. */
  jsonReply?: HttpExchange;
  /** Headers for the reply that opens this stream (Mcp-Session-Id). */
  replyHeaders: Record<string, string>;
  /** Standalone only: messages sent while no GET was connected, for the next fresh GET. */
  backlog: { eventId?: string; message: JsonRpcMessage }[];
  done: boolean;
  /** Something was appended to the event store for this stream, so finishing it must tell the store. */
  logged?: boolean;
  /** Request streams: the channel the layer above sees (InboundInfo.reply). */
  reply?: HttpReplyChannel;
}

const BACKLOG_LIMIT = 1000;
const DEFAULT_SSE_HIGH_WATER_MARK = 1024 * 1024;

/** Defaults of the session limits (see StreamableHttpServerOptions). */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 10_000;

/**
 * The per-session Transport handed to `onSession`. POSTed messages arrive on onmessage with InboundInfo
 * {sessionId, principal, headers}. send() routes: a response goes to the reply of the POST that carried its
 * request (JSON body or SSE stream); a message with relatedRequestId goes on that request's stream while it is
 * open; anything else goes on the standalone GET stream, or waits for it (and in the event store) when none is
 * connected. Stateless transports refuse unrelated messages (UndeliverableMessageError).
 */
export class HttpServerTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /** Undefined in stateless mode. */
  readonly sessionId: string | undefined;
  /** The principal this session is bound to, when authentication is on. */
  readonly principal: string | undefined;

  private readonly core: ServerCore;
  private readonly streams = new Map<string, OutStream>();
  private readonly byRequest = new Map<string, OutStream>();
  private readonly standalone: OutStream;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  /** @internal */
  constructor(core: ServerCore, sessionId: string | undefined, principal: string | undefined) {
    this.core = core;
    this.sessionId = sessionId;
    this.principal = principal;
    this.standalone = {
      id: newStreamId(),
      kind: "standalone",
      pending: new Set(),
      backlog: [],
      done: false,
      replyHeaders: {},
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether a client is connected to the standalone GET stream right now. */
  get standaloneConnected(): boolean {
    return this.standalone.sink !== undefined && !this.standalone.sink.closed;
  }

  /** Requests received on this session and not yet answered. */
  get pendingRequestCount(): number {
    return this.byRequest.size;
  }

  async start(): Promise<void> {}

  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const reply = options?.reply;
    if (reply instanceof HttpReplyChannel && reply.ownRoute)
      return this.enqueue(() => this.sendOnOwnStream(reply.stream, message));
    return this.enqueue(() => this.route(message, options));
  }

  /**
   * Closes the connection carrying a request's SSE stream (after a `retry` hint) without ending the stream:
   * later messages are stored and the client gets them by resuming with GET + Last-Event-ID.
   */
  closeSseStream(requestId: RequestId): Promise<void> {
    return this.enqueue(async () => {
      const stream = this.byRequest.get(requestKey(requestId));
      if (stream) this.dropConnection(stream);
    });
  }

  /** The same for the standalone GET stream. */
  closeStandaloneStream(): Promise<void> {
    return this.enqueue(async () => this.dropConnection(this.standalone));
  }

  /** Terminates the session: connections end, stored events are freed, later requests with its id get 404. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.core.forget(this);
    for (const stream of [...this.streams.values(), this.standalone]) this.finishStream(stream, true);
    this.streams.clear();
    this.byRequest.clear();
    if (this.sessionId !== undefined) {
      try {
        await this.core.store.deleteSession(this.sessionId);
      } catch (error) {
        this.reportError(error);
      }
    }
    this.onclose?.();
  }

  // ---- internal, used by ServerCore ----

  /** @internal Restarts the idle clock; called for every HTTP request naming this session. */
  touch(): void {
    const idle = this.core.idleTimeoutMs;
    if (idle === 0 || this.sessionId === undefined || this.closed) return;
    // One timer per session, restarted in place: a new one per HTTP request was wasted work. Browsers and
    // workers give a number, with no refresh(): there the timer is replaced.
    if (this.idleTimer !== undefined) {
      if (typeof this.idleTimer.refresh === "function") {
        this.idleTimer.refresh();
        return;
      }
      clearTimeout(this.idleTimer);
    }
    this.idleTimer = setTimeout(() => {
      const busy =
        this.byRequest.size > 0 ||
        this.standaloneConnected ||
        [...this.streams.values()].some((s) => s.sink && !s.sink.closed);
      if (busy) this.touch();
      else void this.close();
    }, idle);
    this.idleTimer.unref?.();
  }

  private idleTimer?: NodeJS.Timeout;

  /** @internal Serializes everything that touches streams so events keep their order across async stores. */
  enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** @internal */
  hasPendingRequest(id: RequestId): boolean {
    return this.byRequest.has(requestKey(id));
  }

  /** @internal A contender's messages, before it took its id over: on its own stream; its response ends that stream. */
  private async sendOnOwnStream(stream: OutStream, message: JsonRpcMessage): Promise<void> {
    if (this.closed || stream.done) throw new UndeliverableMessageError("the request's reply stream is closed");
    const isResponse = classifyMessage(message) === "response";
    const exchange = stream.jsonReply;
    if (exchange !== undefined) {
      stream.jsonReply = undefined;
      if (isResponse) exchange.respond(200, { ...JSON_HEADERS, ...stream.replyHeaders }, JSON.stringify(message));
      else await this.beginSse(stream, exchange, stream.replyHeaders);
    }
    if (exchange === undefined || !isResponse) await this.emit(stream, message);
    if (isResponse) this.endOwnStream(stream);
  }

  /** @internal The contender takes its id over: the id's earlier stream lets go of it, later messages come here. */
  handOver(stream: OutStream, key: string): void {
    if (this.closed || stream.done) return;
    const previous = this.byRequest.get(key);
    if (previous !== undefined && previous !== stream) {
      previous.pending.delete(key);
      if (previous.pending.size === 0) this.finishStream(previous, false);
    }
    this.byRequest.set(key, stream);
  }

  /** @internal A request that will not be answered (cancelled) stops holding its stream; the stream ends once nothing else waits on it. */
  abandonRequest(stream: OutStream, key: string): void {
    if (this.closed || stream.done || !stream.pending.has(key)) return;
    stream.pending.delete(key);
    if (this.byRequest.get(key) === stream) this.byRequest.delete(key);
    if (stream.pending.size === 0) this.finishStream(stream, false);
  }

  /** @internal Ends a contender's stream; its id is not touched (it still belongs to the earlier request). */
  endOwnStream(stream: OutStream): void {
    if (stream.done) return;
    // Emptied first: finishing a stream forgets the ids it waits for, and this one's id is not its own.
    stream.pending.clear();
    this.finishStream(stream, false);
  }

  /**
   * @internal Registers a POSTed request's reply stream (SSE mode opens and primes it at once) and returns the
   * channel the layer above sees. `contending`: the request reuses the id of one still in flight (see reusableIdMethods);
   * its stream stays outside the id's routing and it answers there until its channel takes the id over.
   */
  openRequestStream(
    id: RequestId,
    exchange: HttpExchange,
    mode: ResponseMode,
    headers: Record<string, string>,
    contending = false,
  ): Promise<ReplyChannel> {
    const key = requestKey(id);
    const stream: OutStream = {
      id: newStreamId(),
      kind: "request",
      pending: new Set([key]),
      backlog: [],
      done: false,
      replyHeaders: headers,
    };
    const channel = new HttpReplyChannel(this, stream, key, contending ? "contending" : "owner");
    stream.reply = channel;
    this.streams.set(stream.id, stream);
    if (!contending) this.byRequest.set(key, stream);
    if (mode === "json") {
      stream.jsonReply = exchange;
      return Promise.resolve(channel);
    }
    return this.enqueue(async () => {
      await this.beginSse(stream, exchange, headers);
      return channel;
    });
  }

  /** @internal Delivers one inbound message to the session. */
  deliver(message: unknown, info: InboundInfo): void {
    try {
      this.onmessage?.(message, info);
    } catch (error) {
      this.reportError(error);
    }
  }

  /** @internal GET without Last-Event-ID: the standalone stream. */
  openStandalone(exchange: HttpExchange, headers: Record<string, string>): Promise<boolean> {
    return this.enqueue(async () => {
      const stream = this.standalone;
      if (stream.sink && !stream.sink.closed) return false;
      await this.beginSse(stream, exchange, headers);
      const backlog = stream.backlog.splice(0);
      for (const item of backlog) this.writeEvent(stream, item.eventId, item.message);
      return true;
    });
  }

  /** @internal GET with Last-Event-ID: replay that stream's later events, then continue live on it. */
  resume(lastEventId: string, exchange: HttpExchange, headers: Record<string, string>): Promise<void> {
    return this.enqueue(async () => {
      if (this.sessionId === undefined) throw new Error("resumption needs a session");
      // Throws EventReplayError before anything is written, so the GET can still answer with a 4xx.
      const replay = await this.core.store.replayAfter(this.sessionId, lastEventId);
      const live = replay.streamId === this.standalone.id ? this.standalone : this.streams.get(replay.streamId);
      if (live) this.dropConnection(live, false);
      const sink = exchange.openStream(200, { ...SSE_HEADERS, ...headers });
      let wrote = false;
      for (const event of replay.events) {
        if (event.message === undefined) continue;
        if (this.overHighWaterMark(sink)) {
          // The reader is not keeping up even with the replay: it resumes again from what it got.
          sink.write(encodeSseEvent({ retry: this.core.retryMs }));
          sink.end();
          return;
        }
        sink.write(encodeSseEvent({ id: event.eventId, data: JSON.stringify(event.message) }));
        wrote = true;
      }
      if (!live || live.done) {
        // A finished stream, now replayed to its end: once the client has all of it, nobody needs its events.
        const sessionId = this.sessionId;
        sink.onDelivered(() => this.tellStore(() => this.core.store.deleteStream?.(sessionId, replay.streamId)));
        sink.end();
        return;
      }
      if (live === this.standalone) live.backlog.length = 0;
      if (!wrote) {
        // A fresh id for this connection, so a close right after it still leaves a resume point.
        const primingId = await this.core.store.append(this.sessionId, live.id);
        sink.write(encodeSseEvent({ id: primingId, data: "" }));
      }
      this.attach(live, sink);
    });
  }

  // ---- routing ----

  private async route(message: JsonRpcMessage, options: SendOptions | undefined): Promise<void> {
    if (this.closed) throw new UndeliverableMessageError("session is closed");
    const kind = classifyMessage(message);
    if (kind === "response") {
      const id = responseId(message);
      const stream = id === undefined ? undefined : this.byRequest.get(requestKey(id));
      if (!stream || id === undefined)
        throw new UndeliverableMessageError(`no request in flight with id ${JSON.stringify(id)}`);
      this.byRequest.delete(requestKey(id));
      stream.pending.delete(requestKey(id));
      if (stream.jsonReply) {
        const exchange = stream.jsonReply;
        stream.jsonReply = undefined;
        exchange.respond(200, { ...JSON_HEADERS, ...stream.replyHeaders }, JSON.stringify(message));
      } else {
        await this.emit(stream, message);
      }
      if (stream.pending.size === 0) this.finishStream(stream, false, true);
      return;
    }
    const related =
      options?.relatedRequestId === undefined ? undefined : this.byRequest.get(requestKey(options.relatedRequestId));
    if (related) {
      if (related.jsonReply) {
        const exchange = related.jsonReply;
        related.jsonReply = undefined;
        await this.beginSse(related, exchange, related.replyHeaders);
      }
      await this.emit(related, message);
      return;
    }
    if (this.sessionId === undefined) {
      throw new UndeliverableMessageError(
        "stateless transport: only messages related to the POSTed request can be sent",
      );
    }
    await this.emit(this.standalone, message);
  }

  private async beginSse(stream: OutStream, exchange: HttpExchange, headers: Record<string, string>): Promise<void> {
    const sink = exchange.openStream(200, { ...SSE_HEADERS, ...headers });
    if (this.sessionId !== undefined) {
      stream.logged = true;
      const primingId = await this.core.store.append(this.sessionId, stream.id);
      sink.write(encodeSseEvent({ id: primingId, data: "" }));
    }
    this.attach(stream, sink);
  }

  private attach(stream: OutStream, sink: StreamSink): void {
    stream.sink = sink;
    stream.reply?.changed();
    sink.onClose(() => {
      if (stream.sink === sink) stream.sink = undefined;
      if (stream.closeTimer) clearTimeout(stream.closeTimer);
      stream.reply?.changed();
    });
    const after = this.core.options.closeSseAfterMs;
    // Without event ids (stateless) a closed connection could not be resumed, so never close early there.
    if (after !== undefined && this.sessionId !== undefined) {
      if (stream.closeTimer) clearTimeout(stream.closeTimer);
      stream.closeTimer = setTimeout(() => {
        if (stream.sink === sink) void this.enqueue(async () => this.dropConnection(stream)).catch(() => undefined);
      }, after);
      stream.closeTimer.unref?.();
    }
  }

  /** Ends the connection but not the stream; with `retry`, so the client waits before polling again. */
  private dropConnection(stream: OutStream, sendRetry = true): void {
    if (this.sessionId === undefined) return;
    const sink = stream.sink;
    if (!sink) return;
    stream.sink = undefined;
    if (stream.closeTimer) clearTimeout(stream.closeTimer);
    if (sendRetry && !sink.closed) sink.write(encodeSseEvent({ retry: this.core.retryMs }));
    sink.end();
  }

  private async emit(stream: OutStream, message: JsonRpcMessage): Promise<void> {
    if (this.sessionId === undefined) {
      // Stateless: no ids, nothing stored; there is no GET to resume with.
      this.writeEvent(stream, undefined, message);
      return;
    }
    stream.logged = true;
    const eventId = await this.core.store.append(this.sessionId, stream.id, message);
    if (stream.sink && !stream.sink.closed) {
      this.writeEvent(stream, eventId, message);
    } else if (stream.kind === "standalone") {
      stream.backlog.push({ eventId, message });
      if (stream.backlog.length > BACKLOG_LIMIT) stream.backlog.shift();
    }
    // A request stream without a connection: the event waits in the store for a resuming GET.
  }

  /** Writes to the stream's connection unless it holds too much unsent: then the connection is let go instead. */
  private writeEvent(stream: OutStream, eventId: string | undefined, message: JsonRpcMessage): void {
    const sink = stream.sink;
    if (!sink) return;
    if (this.overHighWaterMark(sink)) {
      if (this.sessionId !== undefined) {
        // The event is in the store already; the client gets it by resuming once it reads again.
        this.dropConnection(stream);
      } else {
        stream.sink = undefined;
        sink.end();
        this.reportError(new UndeliverableMessageError("stateless SSE stream closed: its client is not reading"));
      }
      return;
    }
    sink.write(encodeSseEvent({ id: eventId, data: JSON.stringify(message) }));
  }

  /** Checked before a write, so a connection holds at most the mark plus one event (and a `retry`). */
  private overHighWaterMark(sink: StreamSink): boolean {
    return sink.buffered >= this.core.highWaterMark;
  }

  /** Runs an optional store call whose failure has no request to report to. */
  private tellStore(call: () => void | Promise<void> | undefined): void {
    try {
      const done = call();
      if (done) done.catch((error: unknown) => this.reportError(error));
    } catch (error) {
      this.reportError(error);
    }
  }

  /**
   * `completed`: the stream's last response was just emitted. If that went out on a live connection and the
   * client is then seen to have received the whole body, it has every event and will not come back for them:
   * the store frees the stream at once. Otherwise (cut before the end, taken over by a resume, or no proof of
   * delivery) the stream stays resumable for the store's retention window.
   */
  private finishStream(stream: OutStream, sessionEnding: boolean, completed = false): void {
    if (stream.closeTimer) clearTimeout(stream.closeTimer);
    if (stream.kind === "request") {
      stream.done = true;
      this.streams.delete(stream.id);
      for (const key of stream.pending) this.byRequest.delete(key);
    }
    if (stream.jsonReply) {
      stream.jsonReply.respond(404, JSON_HEADERS, errorBody(ErrorCode.InvalidRequest, "Session terminated"));
      stream.jsonReply = undefined;
    }
    const sink = stream.sink;
    stream.sink = undefined;
    const sessionId = this.sessionId;
    if (stream.kind === "request" && !sessionEnding && sessionId !== undefined && stream.logged) {
      const store = this.core.store;
      this.tellStore(() => store.finishStream?.(sessionId, stream.id));
      if (completed && sink && !sink.closed)
        sink.onDelivered(() => this.tellStore(() => store.deleteStream?.(sessionId, stream.id)));
    }
    if (sink && (stream.kind === "request" || sessionEnding)) sink.end();
    // A stateless transport lives exactly as long as its one request.
    if (this.sessionId === undefined && stream.kind === "request" && !sessionEnding) void this.close();
  }

  private reportError(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    if (this.onerror) this.onerror(err);
    else this.core.options.onerror?.(err);
  }
}

/** The ReplyChannel of one request stream: reports its connection coming and going, and a contender's take-over. */
class HttpReplyChannel implements ReplyChannel {
  onconnection?: (connected: boolean) => void;
  /** What the layer above was last told of the connection. */
  private reported: boolean;

  constructor(
    private readonly transport: HttpServerTransport,
    readonly stream: OutStream,
    readonly key: string,
    /**
     * owner: the id routes here. contending: the request shares its id with an earlier one still in flight and has
     * not taken it over (see openRequestStream). released: it never will; nothing more is sent for it.
     */
    private state: "owner" | "contending" | "released",
  ) {
    this.reported = this.connected;
  }

  /** Whether what is sent for this request goes on its own stream rather than by its id. */
  get ownRoute(): boolean {
    return this.state !== "owner";
  }

  get connected(): boolean {
    const sink = this.stream.sink;
    return sink !== undefined && !sink.closed;
  }

  /** @internal The stream's connection may have changed; told only while the request still waits for its response. */
  changed(): void {
    const now = this.connected;
    if (now === this.reported) return;
    this.reported = now;
    if (this.stream.done || !this.stream.pending.has(this.key)) return;
    this.onconnection?.(now);
  }

  takeOver(): void {
    if (this.state !== "contending" || this.stream.done) return;
    // At once, so what is sent from here on takes the id's route; the switch itself queues behind earlier sends.
    this.state = "owner";
    void this.transport.enqueue(async () => this.transport.handOver(this.stream, this.key)).catch(() => undefined);
  }

  release(): void {
    if (this.state !== "contending") return;
    this.state = "released";
    void this.transport.enqueue(async () => this.transport.endOwnStream(this.stream)).catch(() => undefined);
  }

  abandon(): void {
    if (this.state === "contending") return this.release();
    if (this.state !== "owner") return;
    this.state = "released";
    void this.transport
      .enqueue(async () => this.transport.abandonRequest(this.stream, this.key))
      .catch(() => undefined);
  }
}

/** Request handling shared by the Node listener and the fetch handler. */
class ServerCore {
  readonly options: StreamableHttpServerOptions;
  readonly store: EventStore;
  readonly retryMs: number;
  readonly idleTimeoutMs: number;
  readonly highWaterMark: number;
  readonly sessions = new Map<string, HttpServerTransport>();
  private readonly versions: ReadonlySet<string>;
  private readonly maxBody: number;
  private readonly maxSessions: number;
  private readonly cors: CorsPolicy | undefined;
  /** The HTTP methods the endpoint serves (405's Allow, CORS's allowed methods). */
  private readonly methods: string;
  private readonly routes: ReadonlyMap<string, HttpRoute>;

  constructor(options: StreamableHttpServerOptions) {
    this.options = options;
    this.store = options.eventStore ?? new InMemoryEventStore();
    this.retryMs = options.retryMs ?? 1000;
    this.versions = new Set(options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS);
    this.maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
    this.idleTimeoutMs = limitOption(
      "sessionIdleTimeoutMs",
      options.sessionIdleTimeoutMs,
      DEFAULT_SESSION_IDLE_TIMEOUT_MS,
      MAX_TIMER_MS,
    );
    this.maxSessions = limitOption("maxSessions", options.maxSessions, DEFAULT_MAX_SESSIONS);
    this.highWaterMark = limitOption(
      "sseHighWaterMarkBytes",
      options.sseHighWaterMarkBytes,
      DEFAULT_SSE_HIGH_WATER_MARK,
    );
    this.methods = options.stateless ? "POST" : "GET, POST, DELETE";
    this.cors = options.cors === undefined ? undefined : new CorsPolicy(options.cors, this.methods);
    this.routes = routeTable(options.routes ?? [], options.path);
  }

  forget(transport: HttpServerTransport): void {
    if (transport.sessionId !== undefined && this.sessions.get(transport.sessionId) === transport) {
      this.sessions.delete(transport.sessionId);
    }
  }

  async handle(exchange: HttpExchange): Promise<void> {
    const origin = exchange.headers["origin"];
    const corsOrigin = this.cors?.allows(origin) ? origin : undefined;
    const ex =
      corsOrigin === undefined ? exchange : withResponseHeaders(exchange, this.cors!.responseHeaders(corsOrigin));
    try {
      await this.dispatch(ex, corsOrigin);
    } catch (error) {
      this.options.onerror?.(error instanceof Error ? error : new Error(String(error)));
      if (!ex.responded) fail(ex, 500, ErrorCode.InternalError, "Internal server error");
    }
  }

  /** `corsOrigin`: the request's Origin, when CORS is on and lists it. */
  private async dispatch(ex: HttpExchange, corsOrigin: string | undefined): Promise<void> {
    const route = this.routes.get(ex.url.pathname);
    if (route === undefined && this.options.path !== undefined && ex.url.pathname !== this.options.path) {
      return fail(ex, 404, ErrorCode.InvalidRequest, "Not found");
    }
    // An origin the CORS list names is trusted by the Origin check too; the Host check applies to it all the same.
    const checked = corsOrigin === undefined ? ex.headers : withoutOrigin(ex.headers);
    const rejection = checkHostAndOrigin(checked, this.options, ex.localAddress);
    if (rejection) return fail(ex, rejection.status, ErrorCode.InvalidRequest, rejection.message);
    if (this.cors && CorsPolicy.isPreflight(ex.method, ex.headers)) {
      // Before authentication: browsers send no credentials with a preflight.
      if (corsOrigin === undefined)
        return fail(ex, 403, ErrorCode.InvalidRequest, `Origin not allowed: ${ex.headers["origin"]}`);
      return ex.respond(204, this.cors.preflightHeaders(corsOrigin, ex.headers));
    }
    if (route !== undefined) return this.serveRoute(ex, route);

    if (ex.method !== "POST" && (this.options.stateless || (ex.method !== "GET" && ex.method !== "DELETE"))) {
      return fail(ex, 405, ErrorCode.InvalidRequest, "Method not allowed", { allow: this.methods });
    }

    let grant: AuthGrant | undefined;
    if (this.options.authenticate) {
      const result = await this.authenticate(ex);
      if (result !== undefined && "status" in result) return challenge(ex, result);
      grant = result;
      if (grant === undefined && this.options.authRequired !== false) {
        return fail(ex, 401, ErrorCode.InvalidRequest, "Unauthorized");
      }
    }

    if (ex.method === "POST") return this.post(ex, grant);
    if (ex.method === "GET") return this.get(ex, grant?.principal);
    return this.delete(ex, grant?.principal);
  }

  /** The app's authenticate hook, its answer checked: a grant, a challenge, or undefined for none. */
  private async authenticate(ex: HttpExchange): Promise<AuthGrant | HttpChallenge | undefined> {
    let result: HttpAuthResult;
    try {
      result = await this.options.authenticate!(requestInfo(ex));
    } catch {
      // The hook's error is not reported: it may quote the credential it failed on.
      return undefined;
    }
    if (result === null || result === undefined) return undefined;
    if (typeof result === "string") return { principal: result };
    const checked = isChallenge(result) ? result : isGrant(result) ? grantOf(result) : undefined;
    if (checked === undefined)
      this.options.onerror?.(new TypeError("authenticate returned neither a principal, a grant nor a challenge"));
    return checked;
  }

  private async serveRoute(ex: HttpExchange, route: HttpRoute): Promise<void> {
    if (ex.method !== "GET") return fail(ex, 405, ErrorCode.InvalidRequest, "Method not allowed", { allow: "GET" });
    const answer = await route.serve(requestInfo(ex));
    ex.respond(answer.status ?? 200, { ...answer.headers }, answer.body);
  }

  /** The session a non-initialize request names, after the session and version checks; undefined = answered. */
  private lookup(ex: HttpExchange, principal: string | undefined): HttpServerTransport | undefined {
    const id = ex.headers[SESSION_HEADER];
    if (id === undefined || id === "") {
      fail(ex, 400, ErrorCode.InvalidRequest, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    const session = this.sessions.get(id);
    // Another principal's session answers exactly like a missing one: its existence is not revealed.
    if (!session || session.isClosed || session.principal !== principal) {
      fail(ex, 404, ErrorCode.InvalidRequest, "Session not found");
      return undefined;
    }
    if (!this.versionOk(ex)) return undefined;
    session.touch();
    return session;
  }

  private versionOk(ex: HttpExchange): boolean {
    const version = ex.headers[PROTOCOL_VERSION_HEADER] ?? DEFAULT_ASSUMED_PROTOCOL_VERSION;
    if (!this.versions.has(version)) {
      fail(ex, 400, ErrorCode.InvalidRequest, `Bad Request: unsupported MCP-Protocol-Version ${version}`);
      return false;
    }
    return true;
  }

  private async post(ex: HttpExchange, grant: AuthGrant | undefined): Promise<void> {
    const principal = grant?.principal;
    const accept = ex.headers["accept"];
    if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
      return fail(
        ex,
        406,
        ErrorCode.InvalidRequest,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(ex.headers["content-type"])) {
      return fail(ex, 415, ErrorCode.InvalidRequest, "Unsupported Media Type: Content-Type must be application/json");
    }
    const body = await ex.readBody(this.maxBody);
    if (body === "too-large") {
      return fail(ex, 413, ErrorCode.InvalidRequest, `Payload Too Large: body exceeds ${this.maxBody} bytes`, {
        connection: "close",
      });
    }
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch {
      return fail(ex, 400, ErrorCode.ParseError, "Parse error: body is not valid UTF-8 JSON");
    }
    const kind = classifyMessage(value);
    if (kind === undefined) {
      return fail(ex, 400, ErrorCode.InvalidRequest, "Invalid Request: body must be one JSON-RPC 2.0 message");
    }
    const message = value as JsonRpcMessage;
    if (this.options.authorize) {
      // Before anything opens: a refused initialize leaves no session behind.
      const refusal = await this.options.authorize(message, grant, requestInfo(ex));
      if (refusal !== undefined) {
        if (!isChallenge(refusal))
          throw new TypeError("authorize returned something other than a challenge or undefined");
        return challenge(ex, refusal, kind === "request" ? (message as { id: RequestId }).id : undefined);
      }
    }
    const isInitialize = kind === "request" && (message as { method: string }).method === "initialize";

    let transport: HttpServerTransport;
    let sessionHeaders: Record<string, string> = {};
    if (this.options.stateless) {
      if (!isInitialize && !this.versionOk(ex)) return;
      transport = new HttpServerTransport(this, undefined, principal);
      if (!(await this.connect(ex, transport))) return;
    } else if (isInitialize) {
      if (ex.headers[SESSION_HEADER] !== undefined) {
        return fail(ex, 400, ErrorCode.InvalidRequest, "Bad Request: initialize must not carry Mcp-Session-Id");
      }
      if (this.maxSessions > 0 && this.sessions.size >= this.maxSessions) {
        // Abandoned sessions hold memory until they expire; refusing the newcomer keeps the live ones whole.
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: (message as { id: RequestId }).id,
          error: {
            code: ErrorCode.ServerBusy,
            message: `Server busy: too many sessions (limit ${this.maxSessions}); try again later`,
          },
        });
        return ex.respond(503, JSON_HEADERS, body);
      }
      const id = (this.options.sessionIdGenerator ?? (() => randomId(24)))();
      if (!isVisibleAscii(id) || this.sessions.has(id)) throw new Error("sessionIdGenerator returned an unusable id");
      transport = new HttpServerTransport(this, id, principal);
      this.sessions.set(id, transport);
      sessionHeaders = { [SESSION_HEADER]: id };
      if (!(await this.connect(ex, transport))) return;
      transport.touch();
    } else {
      const found = this.lookup(ex, principal);
      if (!found) return;
      transport = found;
      sessionHeaders = { [SESSION_HEADER]: found.sessionId ?? "" };
    }

    const info: InboundInfo = { sessionId: transport.sessionId, principal, headers: ex.headers };
    if (grant !== undefined) info.auth = grant;
    if (kind !== "request") {
      ex.respond(202, sessionHeaders);
      transport.deliver(value, info);
      if (this.options.stateless) void transport.close();
      return;
    }
    const id = (message as { id: RequestId }).id;
    const configured = this.options.responseMode ?? "sse";
    const mode = typeof configured === "function" ? configured((message as { method: string }).method) : configured;
    const contending = transport.hasPendingRequest(id);
    if (contending && this.options.reusableIdMethods?.includes((message as { method: string }).method) !== true) {
      return fail(
        ex,
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: request id ${JSON.stringify(id)} is already in flight`,
      );
    }
    info.reply = await transport.openRequestStream(id, ex, mode, sessionHeaders, contending);
    transport.deliver(value, info);
  }

  /** Runs onSession; false when it failed (the POST has been answered and the session dropped). */
  private async connect(ex: HttpExchange, transport: HttpServerTransport): Promise<boolean> {
    try {
      await this.options.onSession(transport);
      return true;
    } catch (error) {
      this.options.onerror?.(error instanceof Error ? error : new Error(String(error)));
      this.forget(transport);
      fail(ex, 500, ErrorCode.InternalError, "Internal error: could not open a session");
      return false;
    }
  }

  private async get(ex: HttpExchange, principal: string | undefined): Promise<void> {
    if (!accepts(ex.headers["accept"], "text/event-stream")) {
      return fail(ex, 406, ErrorCode.InvalidRequest, "Not Acceptable: Accept must list text/event-stream");
    }
    const session = this.lookup(ex, principal);
    if (!session) return;
    const headers = { [SESSION_HEADER]: session.sessionId ?? "" };
    const lastEventId = ex.headers[LAST_EVENT_ID_HEADER];
    if (lastEventId !== undefined) {
      try {
        await session.resume(lastEventId, ex, headers);
      } catch (error) {
        if (!(error instanceof EventReplayError)) throw error;
        const status = error.reason === "expired" ? 410 : error.reason === "unknown" ? 404 : 400;
        // 404 here would read as "session gone" to clients; an unknown event id is a bad request instead.
        return fail(ex, status === 404 ? 400 : status, ErrorCode.InvalidRequest, `Cannot resume: ${error.message}`);
      }
      return;
    }
    const opened = await session.openStandalone(ex, headers);
    if (!opened)
      return fail(ex, 409, ErrorCode.InvalidRequest, "Conflict: this session already has a standalone SSE stream");
  }

  private async delete(ex: HttpExchange, principal: string | undefined): Promise<void> {
    const session = this.lookup(ex, principal);
    if (!session) return;
    await session.close();
    ex.respond(200, {});
  }
}

function withoutOrigin(headers: HeaderRecord): HeaderRecord {
  const { origin: _origin, ...rest } = headers;
  return rest;
}

function fail(
  ex: HttpExchange,
  status: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  ex.respond(status, { ...JSON_HEADERS, ...extra }, errorBody(code, message));
}

function requestInfo(ex: HttpExchange): HttpRequestInfo {
  return { method: ex.method, url: ex.url.toString(), headers: ex.headers };
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  503: "Service Unavailable",
};

/** Answers with an auth hook's challenge; `id`: the refused request's, so the client's call gets its error. */
function challenge(ex: HttpExchange, c: HttpChallenge, id?: RequestId): void {
  const headers: Record<string, string> = { ...c.headers, ...JSON_HEADERS };
  if (c.wwwAuthenticate !== undefined) headers["www-authenticate"] = c.wwwAuthenticate;
  const error: Record<string, unknown> = {
    code: ErrorCode.InvalidRequest,
    message: c.message ?? REASONS[c.status] ?? "Request refused",
  };
  if (c.data !== undefined) error.data = c.data;
  ex.respond(
    c.status,
    headers,
    JSON.stringify(id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error }),
  );
}

function isChallenge(value: unknown): value is HttpChallenge {
  if (!isPlainObject(value)) return false;
  const { status, wwwAuthenticate, message } = value;
  return (
    typeof status === "number" &&
    Number.isInteger(status) &&
    status >= 400 &&
    status <= 599 &&
    (wwwAuthenticate === undefined || typeof wwwAuthenticate === "string") &&
    (message === undefined || typeof message === "string") &&
    (value.headers === undefined || isPlainObject(value.headers))
  );
}

function isGrant(value: unknown): value is AuthGrant {
  if (!isPlainObject(value) || typeof value.principal !== "string") return false;
  const { scopes, claims } = value;
  return (
    (scopes === undefined || (Array.isArray(scopes) && scopes.every((s) => typeof s === "string"))) &&
    (claims === undefined || isPlainObject(claims))
  );
}

/** A frozen copy: handlers of many requests share it, and none may change what another sees. */
function grantOf(value: AuthGrant): AuthGrant {
  const grant: { principal: string; scopes?: readonly string[]; claims?: Readonly<Record<string, unknown>> } = {
    principal: value.principal,
  };
  if (value.scopes !== undefined) grant.scopes = Object.freeze([...value.scopes]);
  if (value.claims !== undefined) grant.claims = Object.freeze({ ...value.claims });
  return Object.freeze(grant);
}

/** The routes by path; a route at the endpoint's own path, or two at one path, are configuration errors. */
function routeTable(routes: readonly HttpRoute[], endpoint: string | undefined): ReadonlyMap<string, HttpRoute> {
  const table = new Map<string, HttpRoute>();
  for (const route of routes) {
    if (typeof route?.path !== "string" || !route.path.startsWith("/") || typeof route.serve !== "function") {
      throw new TypeError("routes: each route needs a path starting with / and a serve function");
    }
    if (route.path === endpoint || table.has(route.path))
      throw new TypeError(`routes: the path ${route.path} is taken`);
    table.set(route.path, route);
  }
  return table;
}

/** Creates the MCP endpoint handler. Mount `nodeListener` in a node:http server or use `fetch`. */
export function createStreamableHttpServer(options: StreamableHttpServerOptions): StreamableHttpServer {
  const core = new ServerCore(options);
  return {
    nodeListener: (req, res) => {
      void core.handle(nodeExchange(req, res));
    },
    fetch: async (request, info) => {
      const { exchange, response } = webExchange(request, info?.localAddress);
      void core.handle(exchange);
      return response;
    },
    sessions: core.sessions,
    async close() {
      await Promise.all([...core.sessions.values()].map((s) => s.close()));
    },
  };
}
