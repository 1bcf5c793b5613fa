// Streamable HTTP client transport: POST per message, JSON or SSE replies, standalone GET, resumption, expiry.
import { isPlainObject, type JsonRpcErrorResponse, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { InboundInfo, SendOptions, Transport } from "../../../rpc/transport.js";
import { withLocalCause } from "../../../rpc/errors.js";
import { nodeBuiltin } from "../../../node-builtin.js";
import type { WireResponse } from "./fetch-requester.js";
import { CONNECTION_LOST_CODE, HttpStatusError, SessionExpiredError, StreamLostError } from "./errors.js";
import type { ResumptionInfo, StreamableHttpClientOptions } from "./options.js";
import { SessionRequests, mediaType, statusError } from "./requests.js";
import { StreamFollower, type StreamContext } from "./sse.js";
import { SESSION_HEADER, classifyMessage, requestKey, responseId } from "../wire.js";
import { MODERN_PROTOCOL_VERSIONS, ModernErrorCode } from "../../../eras/2026-07-28/envelope.js";

export { CONNECTION_LOST_CODE, HttpStatusError, SessionExpiredError, StreamLostError } from "./errors.js";
export { DEFAULT_AUTHORIZATION_RETRIES } from "./options.js";
export type {
  HttpAuthChallenge,
  HttpAuthCredentials,
  HttpAuthRequest,
  HttpAuthResponse,
  HttpAuthorizer,
  ReconnectOptions,
  ResumptionInfo,
  StreamableHttpClientOptions,
} from "./options.js";

const CANCELLED = "notifications/cancelled";

export class StreamableHttpClientTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The server forgot the session (404). Requests in flight have been failed; initialize again to go on. */
  onsessionexpired?: (error: SessionExpiredError) => void;
  /** Every POST gets an HTTP answer, whatever the server makes of its method. */
  readonly answersEachRequest = true;

  private readonly options: StreamableHttpClientOptions;
  private readonly requests: SessionRequests;
  private readonly follower: StreamFollower;
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
  /**
   * MCP 2026-07-28 (a modern revision was set): no session, no standalone stream, streams are not resumed, and a
   * request is cancelled by closing its own exchange, whose controllers these are, by request.
   */
  private modern = false;
  private readonly exchanges = new Map<string, AbortController>();

  constructor(options: StreamableHttpClientOptions) {
    this.options = options;
    this.requests = new SessionRequests(new URL(options.url), options, this);
    this._sessionId = options.sessionId;
    this._protocolVersion = options.protocolVersion;
    this.follower = new StreamFollower({
      options,
      sessionId: () => this._sessionId,
      awaiting: (id) => this.inflight.has(requestKey(id)),
      recoveredAbove: (id) => this.recoveredAbove.has(requestKey(id)),
      resumable: () => !this.modern,
      get: (lastEventId, signal) => this.requests.get(lastEventId, signal),
      expireSession: (sessionId) => {
        this.expireSession(sessionId);
      },
      streamFailed: (ctx, reason, cause) => this.streamFailed(ctx, reason, cause),
      inbound: (value) => this.inbound(value),
      malformed: (error) => this.onmalformed?.(error),
    });
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
    this.modern = MODERN_PROTOCOL_VERSIONS.includes(version);
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error("transport is closed");
  }

  async send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.closed) throw new Error("transport is closed");
    const kind = classifyMessage(message);
    // On MCP 2026-07-28 closing the request's stream is its cancellation; no notification goes out.
    if (this.modern && kind === "notification" && (message as { method: string }).method === CANCELLED) {
      const target = (message as { params?: { requestId?: unknown } }).params?.requestId;
      if (typeof target === "string" || typeof target === "number") this.cancelExchange(requestKey(target));
      return;
    }
    const id = kind === "request" ? (message as { id: RequestId }).id : undefined;
    const key = id === undefined ? undefined : requestKey(id);
    if (key !== undefined && id !== undefined) {
      this.inflight.set(key, id);
      if ((message as { method: string }).method === "initialize") this.initializeKey = key;
    }
    const sentSessionId = this._sessionId;
    let signal = this.lifetime.signal;
    if (this.modern && key !== undefined) {
      const exchange = new AbortController();
      this.exchanges.set(key, exchange);
      signal = AbortSignal.any([signal, exchange.signal]);
    }
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (options?.headers !== undefined) Object.assign(headers, options.headers);
    let response: WireResponse;
    try {
      response = await this.requests.send({ method: "POST", headers, body: JSON.stringify(message), signal });
    } catch (error) {
      if (key !== undefined) this.unanswerable(key);
      throw error;
    }
    const issued = response.header(SESSION_HEADER);
    // A server that speaks both eras may still name a session; on 2026-07-28 there is none to keep.
    if (issued && this._sessionId === undefined && !this.modern) this._sessionId = issued;

    if (response.status === 404 && sentSessionId !== undefined) {
      await response.discard();
      if (key !== undefined) this.unanswerable(key);
      throw this.expireSession(sentSessionId);
    }
    if (!response.ok) {
      if (key !== undefined) this.unanswerable(key);
      // A 4xx whose body is a JSON-RPC error answers the request (MCP 2026-07-28 sends -32020..-32022 and -32601
      // so): the caller gets that error, code and data, instead of an HTTP failure.
      const body = await response.text().catch(() => "");
      const answer = id === undefined ? undefined : rpcErrorAnswer(response, body, id, this.modern);
      if (answer !== undefined) {
        this.onmessage?.(answer, this.info());
        return;
      }
      throw new HttpStatusError(response.status, body, undefined, response.headers());
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
      this.follower.run(response, ctx).catch((error: unknown) => this.report(error));
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
    if (this.closed || this.standaloneOpen || this.modern) return;
    const sentSessionId = this._sessionId;
    const signal = this.lifetime.signal;
    this.standaloneOpen = true;
    let response: WireResponse;
    try {
      response = await this.requests.get(undefined, signal);
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
    this.follower
      .run(response, ctx)
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
    this.follower.run(undefined, ctx).catch((error: unknown) => this.report(error));
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
    const response = await this.requests.send({ method: "DELETE", headers: {} });
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
    this.requests.close();
    this.onclose?.();
  }

  // ---- internals ----

  private inbound(value: unknown): void {
    if (classifyMessage(value) === "response") {
      const id = responseId(value as JsonRpcMessage);
      if (id !== undefined) {
        const key = requestKey(id);
        this.inflight.delete(key);
        this.recoveredAbove.delete(key);
        this.exchanges.delete(key);
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
    this.exchanges.delete(key);
  }

  /** Cancels a request on MCP 2026-07-28: its exchange is closed, and no answer is awaited from it any more. */
  private cancelExchange(key: string): void {
    const exchange = this.exchanges.get(key);
    if (exchange === undefined) return;
    this.exchanges.delete(key);
    this.inflight.delete(key);
    this.recoveredAbove.delete(key);
    exchange.abort();
  }

  private info(): InboundInfo {
    return this._sessionId === undefined ? {} : { sessionId: this._sessionId };
  }

  /** Fails the request a lost stream carried, by handing the session an error response for it. */
  private streamFailed(ctx: StreamContext, reason: string, cause?: unknown): void {
    const error = new StreamLostError(reason, ctx.requestId, cause);
    if (ctx.requestId !== undefined) {
      const key = requestKey(ctx.requestId);
      // Handed back to the layer above, which marks it again if it resumes the request on this transport.
      const above = this.recoveredAbove.delete(key);
      this.exchanges.delete(key);
      if (this.inflight.delete(key))
        this.onmessage?.(lostResponse(ctx.requestId, reason, "stream-lost", ctx.retryMs, cause), this.info());
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

/** The errors of MCP 2026-07-28 a server of that revision answers with a 4xx (-32020..-32022). */
const MODERN_CODES: ReadonlySet<number> = new Set(Object.values(ModernErrorCode));

/**
 * The JSON-RPC error response a refused POST carries, as the answer to request `id`, or undefined when its body is
 * not one (the status then stands as an HTTP failure). On MCP 2026-07-28 any such body counts; before it, only that
 * revision's own codes do (a probe's evidence), so a 2025 app keeps its HttpStatusError with status and headers.
 * Credentials refused (401, 403) stay HTTP failures.
 */
function rpcErrorAnswer(
  response: WireResponse,
  text: string,
  id: RequestId,
  modern: boolean,
): JsonRpcErrorResponse | undefined {
  if (response.status < 400 || response.status > 499 || response.status === 401 || response.status === 403) return;
  if (mediaType(response) !== "application/json") return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  if (!isPlainObject(body) || !isPlainObject(body.error)) return;
  const { code, message, data } = body.error;
  if (typeof code !== "number" || !Number.isInteger(code) || typeof message !== "string") return;
  if (!modern && !MODERN_CODES.has(code)) return;
  if (body.id !== undefined && body.id !== null && body.id !== id) return;
  const error: JsonRpcErrorResponse["error"] = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

/** The error response failing a request; `cause` (never on the wire) becomes the cause of the request's rejection. */
function lostResponse(
  id: RequestId,
  message: string,
  reason: "stream-lost" | "session-expired",
  retryMs?: number,
  cause?: unknown,
): JsonRpcErrorResponse {
  const data = retryMs === undefined ? { reason } : { reason, retryMs };
  const error = { code: CONNECTION_LOST_CODE, message, data };
  return { jsonrpc: "2.0", id, error: cause === undefined ? error : withLocalCause(error, cause) };
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
