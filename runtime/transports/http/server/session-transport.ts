// One session of the Streamable HTTP server as a Transport: routes what is sent to the right stream, resumes streams.
import type { JsonRpcMessage, RequestId } from "../../../rpc/jsonrpc.js";
import type { AuthGrant, InboundInfo, ReplyChannel, SendOptions, Transport } from "../../../rpc/transport.js";
import type { HttpExchange } from "./exchange.js";
import { HttpReplyChannel } from "./reply-channel.js";
import { JSON_HEADERS, SSE_HEADERS } from "./replies.js";
import type { ResponseMode, StreamableHttpServerOptions } from "./options.js";
import { SseOutput, UndeliverableMessageError, newStreamId, type OutStream, type SseSettings } from "./sse-output.js";
import { classifyMessage, requestKey, responseId } from "../wire.js";
import { encodeSseEvent } from "../sse.js";

export { UndeliverableMessageError } from "./sse-output.js";

/** What a session needs of the server that made it: the shared store and settings, and the session table. */
export interface SessionHost extends SseSettings {
  readonly options: StreamableHttpServerOptions;
  readonly idleTimeoutMs: number;
  forget(transport: HttpServerTransport): void;
}

/** @internal How one POSTed request's reply goes out (HttpServerTransport.openRequestStream). */
export interface RequestStreamOptions {
  readonly mode: ResponseMode;
  /** Headers of the reply that opens the stream (Mcp-Session-Id). */
  readonly headers: Record<string, string>;
  /** What the POST was authenticated with; the stream's connection ends when it lapses. */
  readonly grant: AuthGrant | undefined;
  /**
   * The request reuses the id of one still in flight (see reusableIdMethods): its stream stays outside the id's
   * routing and it answers there until its channel takes the id over.
   */
  readonly contending?: boolean;
  /** A lost connection is the request's cancellation (ReplyChannel.lossCancels), as in MCP 2026-07-28. */
  readonly lossCancels?: boolean;
  /** The HTTP status of a response sent as the whole JSON reply; default 200. */
  readonly statusOf?: (response: JsonRpcMessage) => number;
}

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

  /** Undefined in stateless mode and on the 2026-07-28 lane. */
  readonly sessionId: string | undefined;
  /** The principal this session is bound to, when authentication is on. */
  readonly principal: string | undefined;

  private readonly core: SessionHost;
  private readonly streams = new Map<string, OutStream>();
  private readonly byRequest = new Map<string, OutStream>();
  private readonly standalone: OutStream;
  private readonly output: SseOutput;
  private closed = false;

  /** @internal */
  constructor(core: SessionHost, sessionId: string | undefined, principal: string | undefined) {
    this.core = core;
    this.sessionId = sessionId;
    this.principal = principal;
    this.output = new SseOutput(core, sessionId, (error) => this.reportError(error));
    this.standalone = {
      id: this.newStreamId(),
      kind: "standalone",
      pending: new Set(),
      backlog: [],
      done: false,
      replyHeaders: {},
    };
  }

  /**
   * A stream id: a counter where nothing is stored and the id only tells this transport's streams apart (per-request
   * transports); in a session, where the event store keys events by it, the counter follows a random prefix drawn
   * once per session, so ids stay unique in a store that outlives this process, at one random draw per session
   * instead of one per request.
   */
  private newStreamId(): string {
    if (this.sessionId === undefined) return String(++this.streamCount);
    this.streamPrefix ??= newStreamId();
    return `${this.streamPrefix}-${++this.streamCount}`;
  }
  private streamCount = 0;
  private streamPrefix: string | undefined = undefined;

  /** True without a session id: the transport carries one POSTed message, and no handshake comes on it. */
  get perRequest(): boolean {
    return this.sessionId === undefined;
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
      if (stream) this.output.dropConnection(stream);
    });
  }

  /** The same for the standalone GET stream. */
  closeStandaloneStream(): Promise<void> {
    return this.enqueue(async () => this.output.dropConnection(this.standalone));
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

  // ---- internal, used by the session table and the endpoint ----

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
    return this.output.enqueue(work);
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
      if (isResponse) respondJson(stream, exchange, message);
      else await this.output.beginSse(stream, exchange, stream.replyHeaders, stream.grant);
    }
    if (exchange === undefined || !isResponse) await this.output.emit(stream, message);
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
   * channel the layer above sees (see RequestStreamOptions).
   */
  openRequestStream(id: RequestId, exchange: HttpExchange, options: RequestStreamOptions): Promise<ReplyChannel> {
    const { mode, headers, grant, contending = false } = options;
    const key = requestKey(id);
    const stream: OutStream = {
      id: this.newStreamId(),
      kind: "request",
      pending: new Set([key]),
      backlog: [],
      done: false,
      replyHeaders: headers,
    };
    if (grant !== undefined) stream.grant = grant;
    if (options.statusOf !== undefined) stream.statusOf = options.statusOf;
    // Before the channel, which reads its connection from the stream (a pending JSON reply counts as one).
    if (mode === "json") stream.jsonReply = exchange;
    const channel = new HttpReplyChannel(this, stream, key, contending ? "contending" : "owner", options.lossCancels);
    stream.reply = channel;
    this.streams.set(stream.id, stream);
    if (!contending) this.byRequest.set(key, stream);
    if (mode === "json") {
      // Nobody reads the reply any more: the request goes on without a connection (see ReplyChannel).
      exchange.onGone(() => {
        if (stream.jsonReply !== exchange) return;
        stream.jsonReply = undefined;
        channel.changed();
      });
      return Promise.resolve(channel);
    }
    return this.enqueue(async () => {
      await this.output.beginSse(stream, exchange, headers, grant);
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

  /** @internal GET without Last-Event-ID: the standalone stream; `grant`: what the GET was authenticated with. */
  openStandalone(
    exchange: HttpExchange,
    headers: Record<string, string>,
    grant: AuthGrant | undefined,
  ): Promise<boolean> {
    return this.enqueue(async () => {
      const stream = this.standalone;
      if (stream.sink && !stream.sink.closed) return false;
      await this.output.beginSse(stream, exchange, headers, grant);
      const backlog = stream.backlog.splice(0);
      for (const item of backlog) this.output.writeEvent(stream, item.eventId, item.message);
      return true;
    });
  }

  /**
   * @internal GET with Last-Event-ID: replay that stream's later events, then continue live on it. `grant`: what
   * the GET was authenticated with; the connection ends when it lapses.
   */
  resume(
    lastEventId: string,
    exchange: HttpExchange,
    headers: Record<string, string>,
    grant: AuthGrant | undefined,
  ): Promise<void> {
    return this.enqueue(async () => {
      if (this.sessionId === undefined) throw new Error("resumption needs a session");
      // Throws EventReplayError before anything is written, so the GET can still answer with a 4xx.
      const replay = await this.core.store.replayAfter(this.sessionId, lastEventId);
      const live = replay.streamId === this.standalone.id ? this.standalone : this.streams.get(replay.streamId);
      if (live) this.output.dropConnection(live, false);
      const sink = exchange.openStream(200, { ...SSE_HEADERS, ...headers });
      let wrote = false;
      for (const event of replay.events) {
        if (event.message === undefined) continue;
        if (this.output.overHighWaterMark(sink)) {
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
        sink.onDelivered(() => this.output.tellStore(() => this.core.store.deleteStream?.(sessionId, replay.streamId)));
        sink.end();
        return;
      }
      if (live === this.standalone) live.backlog.length = 0;
      if (!wrote) {
        // A fresh id for this connection, so a close right after it still leaves a resume point.
        const primingId = await this.core.store.append(this.sessionId, live.id);
        sink.write(encodeSseEvent({ id: primingId, data: "" }));
      }
      this.output.attach(live, sink, grant);
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
        respondJson(stream, exchange, message);
      } else {
        await this.output.emit(stream, message);
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
        await this.output.beginSse(related, exchange, related.replyHeaders, related.grant);
      }
      await this.output.emit(related, message);
      return;
    }
    if (this.sessionId === undefined) {
      throw new UndeliverableMessageError(
        "stateless transport: only messages related to the POSTed request can be sent",
      );
    }
    await this.output.emit(this.standalone, message);
  }

  /** `completed`: the stream's last response was just emitted (see SseOutput.finish). */
  private finishStream(stream: OutStream, sessionEnding: boolean, completed = false): void {
    if (stream.kind === "request") {
      stream.done = true;
      this.streams.delete(stream.id);
      for (const key of stream.pending) this.byRequest.delete(key);
    }
    this.output.finish(stream, sessionEnding, completed);
    // A stateless transport lives exactly as long as its one request.
    if (this.sessionId === undefined && stream.kind === "request" && !sessionEnding) void this.close();
  }

  private reportError(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    if (this.onerror) this.onerror(err);
    else this.core.options.onerror?.(err);
  }
}

/** A response sent as the whole reply of its POST, under the status its stream's lane gives it. */
function respondJson(stream: OutStream, exchange: HttpExchange, message: JsonRpcMessage): void {
  const status = stream.statusOf === undefined ? 200 : stream.statusOf(message);
  // Object.assign rather than spread: faster on Node 20 for the small objects of every reply.
  exchange.respond(status, Object.assign({}, JSON_HEADERS, stream.replyHeaders), JSON.stringify(message));
}
