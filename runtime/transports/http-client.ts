// Streamable HTTP client transport: POST per message, JSON or SSE replies, standalone GET, resumption, expiry.
import type { JsonRpcErrorResponse, JsonRpcMessage, RequestId } from "../jsonrpc.js";
import type { InboundInfo, SendOptions, Transport } from "../transport.js";
import {
  LAST_EVENT_ID_HEADER,
  PROTOCOL_VERSION_HEADER,
  SESSION_HEADER,
  classifyMessage,
  mediaTypeOf,
  requestKey,
  responseId,
} from "./http-wire.js";
import { SseDecoder } from "./sse.js";
import { nodeBuiltin } from "../node-builtin.js";
import { fetchRequester, type WireRequest, type WireRequester, type WireResponse } from "./fetch-requester.js";
import { platformRequester } from "./http-requester.js";
import { limitOption } from "../limits.js";
import { CONNECTION_LOST_CODE, HttpStatusError, SessionExpiredError, StreamLostError } from "./http-client-errors.js";

export { CONNECTION_LOST_CODE, HttpStatusError, SessionExpiredError, StreamLostError } from "./http-client-errors.js";

/** A 401 or 403 reply, as the transport hands it to its {@link HttpAuthorizer}. */
export interface HttpAuthChallenge {
  readonly status: number;
  /** The response headers, names lower-case (`www-authenticate` carries the challenge). */
  readonly headers: Readonly<Record<string, string>>;
  /** Where the request went. */
  readonly url: URL;
  readonly method: "GET" | "POST" | "DELETE";
  /** The Authorization header the request carried, if any: lets the authorizer see whether it is stale already. */
  readonly authorization?: string;
  /** 1 for a request's first challenge, 2 for the one after its first retry, and so on. */
  readonly attempt: number;
}

/**
 * Credentials for the Streamable HTTP client, consulted on every request (POST, GET and DELETE). The transport
 * knows nothing of how they are obtained; mcpgen/auth's OAuth clients implement this.
 */
export interface HttpAuthorizer {
  /** The Authorization header value for the next request to `url`, or undefined to send none. */
  authorization(url: URL): string | undefined | Promise<string | undefined>;
  /**
   * A request was answered 401 or 403. Resolve true to send it again (asking `authorization()` anew), false to fail
   * it with the HttpStatusError; reject to fail it with that reason. Called at most `maxRetries` times per request.
   */
  challenge(challenge: HttpAuthChallenge): boolean | Promise<boolean>;
  /** How many times one request may be sent again after challenges; default 3. */
  readonly maxRetries?: number;
}

/** Default of {@link HttpAuthorizer.maxRetries}. */
export const DEFAULT_AUTHORIZATION_RETRIES = 3;

export interface ReconnectOptions {
  /** Failed reconnect attempts allowed in a row, for every stream (default 5). A successful GET resets it. */
  maxAttempts?: number;
  /**
   * Backoff between attempts: initial delay (default 1000 ms)... A `retry` the server sent is waited exactly before
   * the first attempt, and is the floor of the backoff after that.
   */
  initialDelayMs?: number;
  /** ...growth factor (default 1.5)... */
  factor?: number;
  /** ...and cap (default 30 000 ms). Each delay is jittered down to between 50% and 100%. */
  maxDelayMs?: number;
}

export interface ResumptionInfo {
  /** The request the stream carries the reply of; undefined for the standalone stream. */
  requestId?: RequestId;
}

export interface StreamableHttpClientOptions {
  url: string | URL;
  /** Extra headers on every request, or a function computing them per request. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /**
   * Use this fetch for every HTTP request. Default: on Node, node:http with a keep-alive pool (much lighter per
   * call); in browsers, workers and other runtimes without it, the platform's fetch.
   */
  fetch?: typeof fetch;
  /** With node:http (no `fetch`): how long a pooled connection may stay idle, ms; default 4000, 0 for no limit. */
  idleSocketTimeoutMs?: number;
  /** Reuse an existing session (e.g. after a restart, with resumeStream). */
  sessionId?: string;
  /** Sent as MCP-Protocol-Version from the start; otherwise set after negotiation. */
  protocolVersion?: string;
  reconnect?: ReconnectOptions;
  /**
   * "auto" (default): open the standalone GET stream once `notifications/initialized` was accepted.
   * "manual": only when openStandaloneStream() is called.
   */
  standaloneStream?: "auto" | "manual";
  /** Send DELETE for the session on close() (default true). */
  terminateOnClose?: boolean;
  /** Every new Last-Event-ID of every stream; hand it back to resumeStream() to continue after a restart. */
  onResumptionToken?: (token: string, info: ResumptionInfo) => void;
  /**
   * Supplies the Authorization header of every request and decides whether a request answered 401/403 is sent
   * again (e.g. an OAuth client from mcpgen/auth). Its header replaces one given in `headers`.
   */
  authorization?: HttpAuthorizer;
}

interface StreamContext {
  readonly requestId?: RequestId;
  readonly standalone: boolean;
  lastEventId?: string;
  retryMs?: number;
  gotResponse: boolean;
  readonly signal: AbortSignal;
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

function mediaType(response: WireResponse): string {
  return mediaTypeOf(response.header("content-type") ?? "");
}

export class StreamableHttpClientTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The server forgot the session (404). Requests in flight have been failed; initialize again to go on. */
  onsessionexpired?: (error: SessionExpiredError) => void;

  private readonly url: URL;
  private readonly options: StreamableHttpClientOptions;
  private readonly http: WireRequester;
  private _sessionId: string | undefined;
  private _protocolVersion: string | undefined;
  /** Aborted on close and on session expiry; every fetch and stream of the current session hangs off it. */
  private lifetime = sessionLifetime();
  private closed = false;
  private standaloneOpen = false;
  /** Requests sent and not yet answered, with the stream carrying their reply once known. */
  private readonly inflight = new Map<string, RequestId>();
  /** Requests whose lost reply stream the layer above recovers (skipStreamResume), until answered or lost. */
  private readonly recoveredAbove = new Set<string>();
  private initializeKey: string | undefined;
  private readonly authRetries: number;

  constructor(options: StreamableHttpClientOptions) {
    this.options = options;
    this.url = new URL(options.url);
    this.http = options.fetch
      ? fetchRequester(options.fetch)
      : platformRequester({ idleSocketTimeoutMs: options.idleSocketTimeoutMs });
    this._sessionId = options.sessionId;
    this._protocolVersion = options.protocolVersion;
    this.authRetries = limitOption(
      "authorization.maxRetries",
      options.authorization?.maxRetries,
      DEFAULT_AUTHORIZATION_RETRIES,
      100,
    );
  }

  get sessionId(): string | undefined {
    return this._sessionId;
  }

  get protocolVersion(): string | undefined {
    return this._protocolVersion;
  }

  /** Called by the session layer once the protocol version is negotiated; sent on every later request. */
  setProtocolVersion(version: string): void {
    this._protocolVersion = version;
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error("transport is closed");
  }

  async send(message: JsonRpcMessage, _options?: SendOptions): Promise<void> {
    if (this.closed) throw new Error("transport is closed");
    const kind = classifyMessage(message);
    const id = kind === "request" ? (message as { id: RequestId }).id : undefined;
    const key = id === undefined ? undefined : requestKey(id);
    if (key !== undefined && id !== undefined) {
      this.inflight.set(key, id);
      if ((message as { method: string }).method === "initialize") this.initializeKey = key;
    }
    const sentSessionId = this._sessionId;
    const signal = this.lifetime.signal;
    let response: WireResponse;
    try {
      response = await this.exchange({
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(message),
        signal,
      });
    } catch (error) {
      if (key !== undefined) this.unanswerable(key);
      throw error;
    }
    const issued = response.header(SESSION_HEADER);
    if (issued && this._sessionId === undefined) this._sessionId = issued;

    if (response.status === 404 && sentSessionId !== undefined) {
      await response.discard();
      if (key !== undefined) this.unanswerable(key);
      throw this.expireSession(sentSessionId);
    }
    if (!response.ok) {
      if (key !== undefined) this.unanswerable(key);
      throw await statusError(response);
    }
    if (id === undefined || response.status === 202) {
      await response.discard();
      if (kind === "notification" && (message as { method: string }).method === "notifications/initialized") {
        if ((this.options.standaloneStream ?? "auto") === "auto") {
          this.openStandaloneStream().catch((error: unknown) => this.report(error));
        }
      }
      return;
    }
    const type = mediaType(response);
    if (type === "application/json") {
      const text = await response.text();
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        this.onmalformed?.(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.inbound(value);
      return;
    }
    if (type === "text/event-stream") {
      const ctx: StreamContext = { requestId: id, standalone: false, gotResponse: false, signal };
      this.runStream(response, ctx).catch((error: unknown) => this.report(error));
      return;
    }
    await response.discard();
    if (key !== undefined) this.unanswerable(key);
    throw new HttpStatusError(
      response.status,
      "",
      `unexpected content type ${JSON.stringify(type)} for a request`,
      response.headers(),
    );
  }

  /**
   * Opens the standalone GET stream for server-initiated messages. Resolves once it is open, or silently when
   * the server offers none (405) or one is already open.
   */
  async openStandaloneStream(): Promise<void> {
    if (this.closed || this.standaloneOpen) return;
    const sentSessionId = this._sessionId;
    const signal = this.lifetime.signal;
    this.standaloneOpen = true;
    let response: WireResponse;
    try {
      response = await this.get(undefined, signal);
    } catch (error) {
      this.standaloneOpen = false;
      // Closed (or expired) while the GET was on its way: nothing went wrong.
      if (signal.aborted) return;
      throw error;
    }
    if (response.status === 404 && sentSessionId !== undefined) {
      this.standaloneOpen = false;
      this.expireSession(sentSessionId);
      return;
    }
    if (response.status === 405 || response.status === 409) {
      await response.discard();
      if (response.status === 405) this.standaloneOpen = false;
      return;
    }
    if (!response.ok || mediaType(response) !== "text/event-stream") {
      this.standaloneOpen = false;
      throw await statusError(response);
    }
    const ctx: StreamContext = { standalone: true, gotResponse: false, signal };
    this.runStream(response, ctx)
      .catch((error: unknown) => this.report(error))
      .finally(() => {
        if (ctx.signal === this.lifetime.signal) this.standaloneOpen = false;
      });
  }

  /**
   * Continues a stream from a resumption token (a Last-Event-ID seen earlier, e.g. before a restart). With
   * `requestId`, that request counts as in flight until its response arrives on the resumed stream.
   */
  async resumeStream(token: string, info: ResumptionInfo = {}): Promise<void> {
    if (this.closed) throw new Error("transport is closed");
    if (info.requestId !== undefined) this.inflight.set(requestKey(info.requestId), info.requestId);
    const ctx: StreamContext = {
      requestId: info.requestId,
      standalone: info.requestId === undefined,
      lastEventId: token,
      gotResponse: false,
      signal: this.lifetime.signal,
    };
    this.runStream(undefined, ctx).catch((error: unknown) => this.report(error));
  }

  /**
   * The layer above recovers this request by its own means (a protocol-level resume) when its reply stream is lost: such a
   * stream is not resumed with GET, its loss is reported at once (the synthesized -32000 response, whose
   * `data.retryMs` carries the server's retry hint), so that recovery runs on the request's own deadline.
   */
  skipStreamResume(requestId: RequestId): void {
    if (!this.closed) this.recoveredAbove.add(requestKey(requestId));
  }

  /** DELETE the session on the server (405 tolerated) and forget its id. */
  async terminateSession(): Promise<void> {
    const sessionId = this._sessionId;
    if (sessionId === undefined) return;
    const response = await this.exchange({ method: "DELETE", headers: {} });
    if (!response.ok && response.status !== 405 && response.status !== 404) {
      throw await statusError(response);
    }
    await response.discard();
    if (this._sessionId === sessionId) this._sessionId = undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lifetime.abort();
    if ((this.options.terminateOnClose ?? true) && this._sessionId !== undefined) {
      await this.terminateSession().catch((error: unknown) => this.report(error));
    }
    this.http.close();
    this.onclose?.();
  }

  // ---- internals ----

  private async headers(): Promise<Record<string, string>> {
    const extra =
      typeof this.options.headers === "function" ? await this.options.headers() : (this.options.headers ?? {});
    const out: Record<string, string> = { ...extra };
    if (this._sessionId !== undefined) out[SESSION_HEADER] = this._sessionId;
    if (this._protocolVersion !== undefined) out[PROTOCOL_VERSION_HEADER] = this._protocolVersion;
    return out;
  }

  private async get(lastEventId: string | undefined, signal: AbortSignal): Promise<WireResponse> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastEventId !== undefined) headers[LAST_EVENT_ID_HEADER] = lastEventId;
    return this.exchange({ method: "GET", headers, signal });
  }

  /**
   * One request with the session's headers and the authorizer's credentials; a 401 or 403 goes to the authorizer,
   * which may have it sent again (at most `maxRetries` times). Any other answer, or the last one, is returned.
   */
  private async exchange(request: WireRequest): Promise<WireResponse> {
    const authorizer = this.options.authorization;
    for (let attempt = 1; ; attempt++) {
      const headers = { ...(await this.headers()), ...request.headers };
      const authorization = authorizer === undefined ? undefined : await authorizer.authorization(this.url);
      if (authorization !== undefined) {
        for (const name of Object.keys(headers)) if (name.toLowerCase() === "authorization") delete headers[name];
        headers.authorization = authorization;
      }
      const response = await this.http.send(this.url, { ...request, headers });
      if (
        authorizer === undefined ||
        (response.status !== 401 && response.status !== 403) ||
        attempt > this.authRetries
      )
        return response;
      const challenge: HttpAuthChallenge = {
        status: response.status,
        headers: response.headers(),
        url: this.url,
        method: request.method,
        authorization,
        attempt,
      };
      let retry: boolean;
      try {
        retry = await authorizer.challenge(challenge);
      } catch (error) {
        await response.discard();
        throw error;
      }
      if (!retry) return response;
      await response.discard();
    }
  }

  /** Reads a stream and keeps it alive across disconnects (network or SEP-1699 server close) until done. */
  private async runStream(initial: WireResponse | undefined, ctx: StreamContext): Promise<void> {
    const maxAttempts = this.options.reconnect?.maxAttempts ?? 5;
    let response = initial;
    let failures = 0;
    let immediate = initial === undefined;
    for (;;) {
      if (response) {
        // Only a connection that carried something (an id, an event, a retry) shows the stream is alive, so
        // only that resets the count: a server-initiated close is polling, an empty connection is a failure.
        if (await this.readSse(response, ctx)) failures = 0;
        response = undefined;
      }
      // The response may also have come another way (e.g. on the standalone stream): then there is nothing to resume.
      if (
        ctx.signal.aborted ||
        (ctx.requestId !== undefined && (ctx.gotResponse || !this.inflight.has(requestKey(ctx.requestId))))
      )
        return;
      if (ctx.requestId !== undefined && this.recoveredAbove.has(requestKey(ctx.requestId))) {
        return this.streamFailed(ctx, "the SSE stream ended; the request is resumed by the session");
      }
      if (!immediate) {
        if (ctx.lastEventId === undefined && !ctx.standalone) {
          return this.streamFailed(ctx, "the SSE stream ended before any event id; it cannot be resumed");
        }
        failures++;
        if (failures > maxAttempts)
          return this.streamFailed(ctx, `could not resume the SSE stream after ${maxAttempts} attempts`);
        await sleep(this.retryDelay(failures, ctx.retryMs), ctx.signal);
        if (ctx.signal.aborted) return;
      }
      immediate = false;
      const sentSessionId = this._sessionId;
      let next: WireResponse;
      try {
        next = await this.get(ctx.lastEventId, ctx.signal);
      } catch {
        continue; // network failure: counts as an attempt on the next turn
      }
      if (next.status === 404 && sentSessionId !== undefined) {
        await next.discard();
        this.expireSession(sentSessionId);
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
        return this.streamFailed(ctx, `resuming the SSE stream failed: ${error.message}`);
      }
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
    const r = this.options.reconnect ?? {};
    const base = Math.min(r.maxDelayMs ?? 30_000, (r.initialDelayMs ?? 1000) * Math.pow(r.factor ?? 1.5, attempt - 1));
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
          if (id !== "") this.options.onResumptionToken?.(id, { requestId: ctx.requestId });
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
            this.onmalformed?.(error instanceof Error ? error : new Error(String(error)));
            return;
          }
          const id = classifyMessage(value) === "response" ? responseId(value as JsonRpcMessage) : undefined;
          if (id !== undefined && ctx.requestId !== undefined && requestKey(id) === requestKey(ctx.requestId)) {
            ctx.gotResponse = true;
          }
          this.inbound(value);
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

  private inbound(value: unknown): void {
    if (classifyMessage(value) === "response") {
      const id = responseId(value as JsonRpcMessage);
      if (id !== undefined) {
        const key = requestKey(id);
        this.inflight.delete(key);
        this.recoveredAbove.delete(key);
        if (key === this.initializeKey) {
          this.initializeKey = undefined;
          const version = (value as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
          if (typeof version === "string" && this._protocolVersion === undefined) this._protocolVersion = version;
        }
      }
    }
    this.onmessage?.(value, this.info());
  }

  /** A request whose POST failed: no reply stream will come for it. */
  private unanswerable(key: string): void {
    this.inflight.delete(key);
    this.recoveredAbove.delete(key);
  }

  private info(): InboundInfo {
    return this._sessionId === undefined ? {} : { sessionId: this._sessionId };
  }

  /** Fails the request a lost stream carried, by handing the session an error response for it. */
  private streamFailed(ctx: StreamContext, reason: string): void {
    const error = new StreamLostError(reason, ctx.requestId);
    if (ctx.requestId !== undefined) {
      const key = requestKey(ctx.requestId);
      // Handed back to the layer above, which marks it again if it resumes the request on this transport.
      const above = this.recoveredAbove.delete(key);
      if (this.inflight.delete(key))
        this.onmessage?.(lostResponse(ctx.requestId, reason, "stream-lost", ctx.retryMs), this.info());
      // Expected, and handled above: not an error worth reporting.
      if (above) return;
    }
    this.report(error);
  }

  /** The server forgot the session: drop its id, stop its streams, fail what was in flight, tell the app. */
  private expireSession(sessionId: string): SessionExpiredError {
    const error = new SessionExpiredError(sessionId);
    if (this._sessionId !== sessionId) return error; // already handled
    this._sessionId = undefined;
    this._protocolVersion = this.options.protocolVersion;
    this.standaloneOpen = false;
    this.lifetime.abort();
    this.lifetime = sessionLifetime();
    const failed = [...this.inflight.values()];
    this.inflight.clear();
    this.recoveredAbove.clear();
    for (const id of failed) this.onmessage?.(lostResponse(id, error.message, "session-expired"), { sessionId });
    this.onsessionexpired?.(error);
    return error;
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}

/** The HttpStatusError for a response the transport cannot use, with its body (when readable) and headers. */
async function statusError(response: WireResponse): Promise<HttpStatusError> {
  const text = await response.text().catch(() => "");
  return new HttpStatusError(response.status, text, undefined, response.headers());
}

function lostResponse(
  id: RequestId,
  message: string,
  reason: "stream-lost" | "session-expired",
  retryMs?: number,
): JsonRpcErrorResponse {
  const data = retryMs === undefined ? { reason } : { reason, retryMs };
  return { jsonrpc: "2.0", id, error: { code: CONNECTION_LOST_CODE, message, data } };
}

/**
 * Every concurrent request and SSE stream of a session listens on one signal, so more than Node's default
 * of 10 listeners is normal use, not a leak; each listener is removed when its exchange ends. Elsewhere
 * nothing warns, and there is nothing to raise.
 */
function sessionLifetime(): AbortController {
  const controller = new AbortController();
  nodeBuiltin("node:events")?.setMaxListeners(0, controller.signal);
  return controller;
}
