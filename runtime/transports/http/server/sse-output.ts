// Writing one session's SSE streams: priming, event ids from the store, the high-water mark, SEP-1699 closes, grant expiry.
import { ErrorCode, type JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import { MAX_TIMER_MS } from "../../../rpc/limits.js";
import type { AuthGrant } from "../../../rpc/transport.js";
import type { EventStore } from "./event-store.js";
import type { HttpExchange, StreamSink } from "./exchange.js";
import { JSON_HEADERS, SSE_HEADERS } from "./replies.js";
import { errorBody, randomId } from "../wire.js";
import { encodeSseEvent } from "../sse.js";

/** Thrown by HttpServerTransport.send when a message has nowhere to go. */
export class UndeliverableMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndeliverableMessageError";
  }
}

export function newStreamId(): string {
  return randomId(9);
}

/** One logical SSE stream: a request's reply stream or the session's standalone GET stream. */
export interface OutStream {
  readonly id: string;
  readonly kind: "request" | "standalone";
  /** Request keys on this stream still waiting for their response. */
  readonly pending: Set<string>;
  /** The current connection, if any. */
  sink?: StreamSink;
  closeTimer?: ReturnType<typeof setTimeout>;
  /** JSON mode, before anything forced SSE: the POST still waiting for its single JSON reply. */
  jsonReply?: HttpExchange;
  /** Headers for the reply that opens this stream (Mcp-Session-Id). */
  replyHeaders: Record<string, string>;
  /** Standalone only: messages sent while no GET was connected, for the next fresh GET. */
  backlog: { eventId?: string; message: JsonRpcMessage }[];
  done: boolean;
  /** Something was appended to the event store for this stream, so finishing it must tell the store. */
  logged?: boolean;
  /** Request streams: the channel the layer above sees (InboundInfo.reply), told when the connection changes. */
  reply?: { changed(): void };
  /** Request streams: the grant of the POST that opened it, for a JSON reply that turns into SSE later. */
  grant?: AuthGrant;
  /** Request streams: the HTTP status of a response sent as the whole JSON reply (default 200). */
  statusOf?: (response: JsonRpcMessage) => number;
}

const BACKLOG_LIMIT = 1000;

/** What writing needs of the server: the event store and the SSE settings. */
export interface SseSettings {
  readonly store: EventStore;
  readonly retryMs: number;
  readonly highWaterMark: number;
  readonly options: { readonly closeSseAfterMs?: number };
}

/**
 * The output side of one session's streams. `sessionId` undefined: stateless, so no event ids, nothing stored,
 * nothing to resume with.
 */
export class SseOutput {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: SseSettings,
    private readonly sessionId: string | undefined,
    /** Where failures with no request to report to go. */
    private readonly report: (error: unknown) => void,
  ) {}

  /** Serializes everything that touches streams so events keep their order across async stores. */
  enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** `grant`: what the request opening the connection was authenticated with (see attach). */
  async beginSse(
    stream: OutStream,
    exchange: HttpExchange,
    headers: Record<string, string>,
    grant: AuthGrant | undefined,
  ): Promise<void> {
    const sink = exchange.openStream(200, { ...SSE_HEADERS, ...headers });
    if (this.sessionId !== undefined) {
      stream.logged = true;
      const primingId = await this.settings.store.append(this.sessionId, stream.id);
      sink.write(encodeSseEvent({ id: primingId, data: "" }));
    }
    this.attach(stream, sink, grant);
  }

  /**
   * Makes `sink` the stream's connection. `grant`: what the request that opened it was authenticated with; the
   * connection ends when the grant expires or is revoked.
   */
  attach(stream: OutStream, sink: StreamSink, grant: AuthGrant | undefined): void {
    stream.sink = sink;
    stream.reply?.changed();
    sink.onClose(() => {
      if (stream.sink === sink) stream.sink = undefined;
      if (stream.closeTimer) clearTimeout(stream.closeTimer);
      stream.reply?.changed();
    });
    const after = this.settings.options.closeSseAfterMs;
    // Without event ids (stateless) a closed connection could not be resumed, so never close early there.
    if (after !== undefined && this.sessionId !== undefined) {
      if (stream.closeTimer) clearTimeout(stream.closeTimer);
      stream.closeTimer = setTimeout(() => {
        if (stream.sink === sink) void this.enqueue(async () => this.dropConnection(stream)).catch(() => undefined);
      }, after);
      stream.closeTimer.unref?.();
    }
    if (grant !== undefined && (grant.expiresAt !== undefined || grant.whenRevoked !== undefined))
      this.watchGrant(stream, sink, grant);
  }

  /**
   * Ends the connection once its grant expires or is revoked: the credential it was opened with no longer vouches
   * for whoever reads it. One timer per connection, re-armed when the expiry lies beyond the longest delay a timer
   * takes; the timer and the revocation subscription go with the connection.
   */
  private watchGrant(stream: OutStream, sink: StreamSink, grant: AuthGrant): void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let unsubscribe: (() => void) | undefined;
    let over = false;
    const stop = () => {
      over = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const release = unsubscribe;
      unsubscribe = undefined;
      try {
        release?.();
      } catch (error) {
        this.report(error);
      }
    };
    const lapse = () => {
      if (over) return;
      stop();
      void this.enqueue(async () => {
        if (stream.sink === sink) this.endConnection(stream);
      }).catch((error: unknown) => this.report(error));
    };
    const expiresAt = grant.expiresAt;
    const arm = () => {
      if (over || expiresAt === undefined) return;
      const left = expiresAt - Date.now();
      if (left <= 0) return lapse();
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      timer.unref?.();
    };
    if (grant.whenRevoked !== undefined) {
      try {
        const release = grant.whenRevoked(lapse);
        if (over) release();
        else unsubscribe = release;
      } catch (error) {
        this.report(error);
      }
    }
    arm();
    sink.onClose(stop);
  }

  /**
   * Ends a connection whose grant lapsed. With a session this is the end of a connection, not of the stream: a
   * `retry` goes first, later events wait in the store, and the client resumes with a fresh credential. A
   * stateless stream cannot be resumed, so it just ends.
   */
  private endConnection(stream: OutStream): void {
    if (this.sessionId !== undefined) return this.dropConnection(stream);
    const sink = stream.sink;
    stream.sink = undefined;
    sink?.end();
  }

  /** Ends the connection but not the stream; with `retry`, so the client waits before polling again. */
  dropConnection(stream: OutStream, sendRetry = true): void {
    if (this.sessionId === undefined) return;
    const sink = stream.sink;
    if (!sink) return;
    stream.sink = undefined;
    if (stream.closeTimer) clearTimeout(stream.closeTimer);
    if (sendRetry && !sink.closed) sink.write(encodeSseEvent({ retry: this.settings.retryMs }));
    sink.end();
  }

  async emit(stream: OutStream, message: JsonRpcMessage): Promise<void> {
    if (this.sessionId === undefined) {
      // Stateless: no ids, nothing stored; there is no GET to resume with.
      this.writeEvent(stream, undefined, message);
      return;
    }
    stream.logged = true;
    const eventId = await this.settings.store.append(this.sessionId, stream.id, message);
    if (stream.sink && !stream.sink.closed) {
      this.writeEvent(stream, eventId, message);
    } else if (stream.kind === "standalone") {
      stream.backlog.push({ eventId, message });
      if (stream.backlog.length > BACKLOG_LIMIT) stream.backlog.shift();
    }
    // A request stream without a connection: the event waits in the store for a resuming GET.
  }

  /** Writes to the stream's connection unless it holds too much unsent: then the connection is let go instead. */
  writeEvent(stream: OutStream, eventId: string | undefined, message: JsonRpcMessage): void {
    const sink = stream.sink;
    if (!sink) return;
    if (this.overHighWaterMark(sink)) {
      // With a session the event is in the store already: the client gets it by resuming once it reads again.
      this.endConnection(stream);
      if (this.sessionId === undefined)
        this.report(new UndeliverableMessageError("stateless SSE stream closed: its client is not reading"));
      return;
    }
    sink.write(encodeSseEvent({ id: eventId, data: JSON.stringify(message) }));
  }

  /** Checked before a write, so a connection holds at most the mark plus one event (and a `retry`). */
  overHighWaterMark(sink: StreamSink): boolean {
    return sink.buffered >= this.settings.highWaterMark;
  }

  /** Runs an optional store call whose failure has no request to report to. */
  tellStore(call: () => void | Promise<void> | undefined): void {
    try {
      const done = call();
      if (done) done.catch((error: unknown) => this.report(error));
    } catch (error) {
      this.report(error);
    }
  }

  /**
   * Ends a stream's output: a JSON reply still waiting, its connection, and (request streams) its log in the store.
   * `completed`: the stream's last response was just emitted. If that went out on a live connection and the
   * client is then seen to have received the whole body, it has every event and will not come back for them:
   * the store frees the stream at once. Otherwise (cut before the end, taken over by a resume, or no proof of
   * delivery) the stream stays resumable for the store's retention window.
   */
  finish(stream: OutStream, sessionEnding: boolean, completed: boolean): void {
    if (stream.closeTimer) clearTimeout(stream.closeTimer);
    if (stream.jsonReply) {
      // A transport of one request has no session to lose: it ended because the server (or the app) closed it.
      if (this.sessionId === undefined)
        stream.jsonReply.respond(503, JSON_HEADERS, errorBody(ErrorCode.ConnectionLost, "Server closed the request"));
      else stream.jsonReply.respond(404, JSON_HEADERS, errorBody(ErrorCode.InvalidRequest, "Session terminated"));
      stream.jsonReply = undefined;
    }
    const sink = stream.sink;
    stream.sink = undefined;
    const sessionId = this.sessionId;
    if (stream.kind === "request" && !sessionEnding && sessionId !== undefined && stream.logged) {
      const store = this.settings.store;
      this.tellStore(() => store.finishStream?.(sessionId, stream.id));
      if (completed && sink && !sink.closed)
        sink.onDelivered(() => this.tellStore(() => store.deleteStream?.(sessionId, stream.id)));
    }
    if (sink && (stream.kind === "request" || sessionEnding)) sink.end();
  }
}
