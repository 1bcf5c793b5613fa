// The server's session table: opening a session (within the limit), finding the one a request names, forgetting it.
import { ErrorCode, type JsonRpcMessage, type RequestId } from "../jsonrpc.js";
import { MAX_TIMER_MS, limitOption } from "../limits.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../protocol-versions.js";
import { InMemoryEventStore, type EventStore } from "./event-store.js";
import type { HttpExchange } from "./http-exchange.js";
import { JSON_HEADERS, fail } from "./http-replies.js";
import type { StreamableHttpServerOptions } from "./http-server-options.js";
import { HttpServerTransport, type SessionHost } from "./http-session-transport.js";
import {
  DEFAULT_ASSUMED_PROTOCOL_VERSION,
  PROTOCOL_VERSION_HEADER,
  SESSION_HEADER,
  isVisibleAscii,
  randomId,
} from "./http-wire.js";

const DEFAULT_SSE_HIGH_WATER_MARK = 1024 * 1024;

/** Defaults of the session limits (see StreamableHttpServerOptions). */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 10_000;

/** The session a POSTed message goes to, and the headers of its reply. */
export interface PostedSession {
  readonly transport: HttpServerTransport;
  readonly headers: Record<string, string>;
}

/** The live sessions, and what every session shares: the event store, the SSE settings and the limits. */
export class SessionTable implements SessionHost {
  readonly options: StreamableHttpServerOptions;
  readonly store: EventStore;
  readonly retryMs: number;
  readonly idleTimeoutMs: number;
  readonly highWaterMark: number;
  readonly sessions = new Map<string, HttpServerTransport>();
  private readonly versions: ReadonlySet<string>;
  private readonly maxSessions: number;

  constructor(options: StreamableHttpServerOptions) {
    this.options = options;
    this.store = options.eventStore ?? new InMemoryEventStore();
    this.retryMs = options.retryMs ?? 1000;
    this.versions = new Set(options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS);
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
  }

  forget(transport: HttpServerTransport): void {
    if (transport.sessionId !== undefined && this.sessions.get(transport.sessionId) === transport) {
      this.sessions.delete(transport.sessionId);
    }
  }

  /**
   * The session a POSTed message goes to: a fresh one per message when stateless, a new one for an initialize,
   * else the one the request names. Undefined: the POST has been answered.
   */
  async forPost(
    ex: HttpExchange,
    message: JsonRpcMessage,
    isInitialize: boolean,
    principal: string | undefined,
  ): Promise<PostedSession | undefined> {
    if (this.options.stateless) {
      if (!isInitialize && !this.versionOk(ex)) return undefined;
      const transport = new HttpServerTransport(this, undefined, principal);
      if (!(await this.connect(ex, transport))) return undefined;
      return { transport, headers: {} };
    }
    if (!isInitialize) {
      const found = this.lookup(ex, principal);
      if (!found) return undefined;
      return { transport: found, headers: { [SESSION_HEADER]: found.sessionId ?? "" } };
    }
    if (ex.headers[SESSION_HEADER] !== undefined) {
      fail(ex, 400, ErrorCode.InvalidRequest, "Bad Request: initialize must not carry Mcp-Session-Id");
      return undefined;
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
      ex.respond(503, JSON_HEADERS, body);
      return undefined;
    }
    const id = (this.options.sessionIdGenerator ?? (() => randomId(24)))();
    if (!isVisibleAscii(id) || this.sessions.has(id)) throw new Error("sessionIdGenerator returned an unusable id");
    const transport = new HttpServerTransport(this, id, principal);
    this.sessions.set(id, transport);
    if (!(await this.connect(ex, transport))) return undefined;
    transport.touch();
    return { transport, headers: { [SESSION_HEADER]: id } };
  }

  /** The session a non-initialize request names, after the session and version checks; undefined = answered. */
  lookup(ex: HttpExchange, principal: string | undefined): HttpServerTransport | undefined {
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
}
