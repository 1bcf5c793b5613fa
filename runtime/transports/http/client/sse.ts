// Following one SSE stream of the client: reading its events, reconnecting with Last-Event-ID and backoff until done or the server is gone.
import type { JsonRpcMessage, RequestId } from "../../../rpc/jsonrpc.js";
import type { WireResponse } from "./fetch-requester.js";
import type { StreamableHttpClientOptions } from "./options.js";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";
import { describeFailure, serverGone } from "./errors.js";
import { mediaType, statusError } from "./requests.js";
import { classifyMessage, requestKey, responseId } from "../wire.js";
import { SseDecoder } from "../sse.js";

/** One followed stream: the request it carries the reply of, where it resumes from, the lifetime it hangs off. */
export interface StreamContext {
  readonly requestId?: RequestId;
  readonly standalone: boolean;
  lastEventId?: string;
  retryMs?: number;
  gotResponse: boolean;
  readonly signal: AbortSignal;
}

/** What following a stream needs of the transport it belongs to. */
export interface StreamHost {
  readonly options: StreamableHttpClientOptions;
  /** The session id requests go out with now. */
  sessionId(): string | undefined;
  /** The request is still waiting for its response. */
  awaiting(requestId: RequestId): boolean;
  /** The layer above recovers this request when its stream is lost (skipStreamResume). */
  recoveredAbove(requestId: RequestId): boolean;
  /** Whether streams may be taken up again with GET and Last-Event-ID (not on MCP 2026-07-28). */
  resumable(): boolean;
  get(lastEventId: string | undefined, signal: AbortSignal): Promise<WireResponse>;
  expireSession(sessionId: string): void;
  /** The stream is lost for good; `cause` is the error of the last reconnect attempt, when one was made. */
  streamFailed(ctx: StreamContext, reason: string, cause?: unknown): void;
  inbound(value: unknown): void;
  malformed(error: Error): void;
}

/** Waits at least `ms` (timers may fire a fraction early; the server's `retry` is a floor) or until aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const until = performance.now() + ms;
    let timer = setTimeout(tick, ms);
    function tick() {
      const left = until - performance.now();
      if (left > 0) timer = setTimeout(tick, Math.ceil(left));
      else done();
    }
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Keeps one stream going (a request's reply stream, or the standalone one) until it is done or lost. */
export class StreamFollower {
  private readonly maxAttempts: number;
  private readonly initialDelayMs: number;
  private readonly factor: number;
  private readonly maxDelayMs: number;
  /** Where the streams go, for messages: no query or credentials, which may hold secrets. */
  private readonly server: string;

  constructor(private readonly host: StreamHost) {
    const r = host.options.reconnect ?? {};
    this.maxAttempts = limitOption("reconnect.maxAttempts", r.maxAttempts, 5);
    this.initialDelayMs = limitOption("reconnect.initialDelayMs", r.initialDelayMs, 1000, MAX_TIMER_MS);
    this.maxDelayMs = limitOption("reconnect.maxDelayMs", r.maxDelayMs, 30_000, MAX_TIMER_MS);
    this.factor = r.factor ?? 1.5;
    if (!Number.isFinite(this.factor) || this.factor < 1) {
      throw new RangeError(`reconnect.factor must be a finite number of at least 1, got ${this.factor}`);
    }
    const url = new URL(host.options.url);
    this.server = `${url.origin}${url.pathname}`;
  }

  /** Reads a stream and keeps it alive across disconnects (network or SEP-1699 server close) until done. */
  async run(initial: WireResponse | undefined, ctx: StreamContext): Promise<void> {
    const maxAttempts = this.maxAttempts;
    let response = initial;
    let failures = 0;
    let immediate = initial === undefined;
    /** Why the last reconnect attempt failed: the cause of the error when attempts run out. */
    let lastError: unknown;
    for (;;) {
      if (response) {
        // Only a connection that carried something (an id, an event, a retry) shows the stream is alive, so
        // only that resets the count: a server-initiated close is polling, an empty connection is a failure.
        if (await this.readSse(response, ctx)) {
          failures = 0;
          lastError = undefined;
        } else {
          lastError = new Error("the SSE stream ended without any event");
        }
        response = undefined;
      }
      // The response may also have come another way (e.g. on the standalone stream): then there is nothing to resume.
      if (
        ctx.signal.aborted ||
        (ctx.requestId !== undefined && (ctx.gotResponse || !this.host.awaiting(ctx.requestId)))
      )
        return;
      if (ctx.requestId !== undefined && this.host.recoveredAbove(ctx.requestId)) {
        return this.host.streamFailed(ctx, "the SSE stream ended; the request is resumed by the session");
      }
      if (!this.host.resumable()) {
        return this.host.streamFailed(
          ctx,
          "the SSE stream ended before the response; on this revision it cannot be resumed",
        );
      }
      if (!immediate) {
        if (ctx.lastEventId === undefined && !ctx.standalone) {
          return this.host.streamFailed(ctx, "the SSE stream ended before any event id; it cannot be resumed");
        }
        failures++;
        if (failures > maxAttempts) {
          const why = lastError === undefined ? "" : `: ${describeFailure(lastError)}`;
          return this.host.streamFailed(
            ctx,
            `could not resume the SSE stream after ${maxAttempts} attempts${why}`,
            lastError,
          );
        }
        await sleep(this.retryDelay(failures, ctx.retryMs), ctx.signal);
        if (ctx.signal.aborted) return;
      }
      immediate = false;
      const sentSessionId = this.host.sessionId();
      let next: WireResponse;
      try {
        next = await this.host.get(ctx.lastEventId, ctx.signal);
      } catch (error) {
        if (ctx.signal.aborted) return;
        // Nothing listens there any more (refused, no route): the schedule would only delay the failure of a
        // request waiting for its reply. The standalone stream keeps it, so it can ride out a quick restart.
        const gone = ctx.standalone ? undefined : serverGone(error);
        if (gone !== undefined)
          return this.host.streamFailed(ctx, `server at ${this.server} is unreachable: ${gone}`, error);
        lastError = error;
        continue; // any other network failure (timeout, reset, DNS blip): counts as an attempt on the next turn
      }
      if (next.status === 404 && sentSessionId !== undefined) {
        await next.discard();
        this.host.expireSession(sentSessionId);
        return;
      }
      if (next.ok && mediaType(next) === "text/event-stream") {
        response = next;
        continue;
      }
      const error = await statusError(next);
      if (next.status === 405 && ctx.standalone) return; // the server offers no GET stream
      // Other 4xx are definite answers (bad/expired Last-Event-ID, conflict, refused credentials); retrying cannot help.
      if (next.status >= 400 && next.status < 500 && next.status !== 408 && next.status !== 429) {
        return this.host.streamFailed(ctx, `resuming the SSE stream failed: ${error.message}`, error);
      }
      lastError = error;
    }
  }

  /**
   * The wait before reconnect attempt `attempt` (1 after a connection that carried something). The server's retry
   * is honoured exactly the first time (SEP-1699 polling); failures in a row then back off from it with jitter, so
   * a server that is gone is not polled at a fixed rate.
   */
  private retryDelay(attempt: number, retryMs: number | undefined): number {
    if (retryMs !== undefined && attempt <= 1) return retryMs;
    return Math.max(retryMs ?? 0, this.backoff(attempt));
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.maxDelayMs, this.initialDelayMs * Math.pow(this.factor, attempt - 1));
    return Math.round(base * (0.5 + Math.random() * 0.5));
  }

  /** Reads one connection's events until it ends, fails or is aborted; true if it carried anything. */
  private async readSse(response: WireResponse, ctx: StreamContext): Promise<boolean> {
    let progressed = false;
    const decoder = new SseDecoder(
      {
        onLastEventId: (id) => {
          progressed = true;
          ctx.lastEventId = id === "" ? undefined : id;
          if (id !== "") this.host.options.onResumptionToken?.(id, { requestId: ctx.requestId });
        },
        onRetry: (ms) => {
          progressed = true;
          ctx.retryMs = ms;
        },
        onEvent: (event) => {
          progressed = true;
          // Priming events carry only an id; non-message event types are not JSON-RPC.
          if (event.data === "" || event.type !== "message") return;
          let value: unknown;
          try {
            value = JSON.parse(event.data);
          } catch (error) {
            this.host.malformed(error instanceof Error ? error : new Error(String(error)));
            return;
          }
          const id = classifyMessage(value) === "response" ? responseId(value as JsonRpcMessage) : undefined;
          if (id !== undefined && ctx.requestId !== undefined && requestKey(id) === requestKey(ctx.requestId)) {
            ctx.gotResponse = true;
          }
          this.host.inbound(value);
        },
      },
      ctx.lastEventId ?? "",
    );
    try {
      // Ends quietly on a dropped connection too; the caller decides whether to resume.
      await response.stream((text) => decoder.push(text), ctx.signal);
    } finally {
      decoder.end();
    }
    return progressed;
  }
}
