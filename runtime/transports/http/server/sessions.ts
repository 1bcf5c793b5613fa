// The server's session table: opening a session (within the client's quota and the limit), finding one, forgetting it.
import { ErrorCode, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../../mcp/protocol-versions.js";
import { clientKey } from "../../../mcp/quotas.js";
import { InMemoryEventStore, type EventStore } from "./event-store.js";
import type { HttpExchange } from "./exchange.js";
import { fail } from "./replies.js";
import type { StreamableHttpServerOptions } from "./options.js";
import { HttpServerTransport, type SessionHost } from "./session-transport.js";
import {
  DEFAULT_ASSUMED_PROTOCOL_VERSION,
  PROTOCOL_VERSION_HEADER,
  SESSION_HEADER,
  isVisibleAscii,
  randomId,
  requestIdOf,
} from "../wire.js";

const DEFAULT_SSE_HIGH_WATER_MARK = 1024 * 1024;

/** Defaults of the session limits (see StreamableHttpServerOptions). */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 10_000;
export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 100;
export const DEFAULT_MAX_STATELESS_REQUESTS = 10_000;

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
  /** The live transports of one message each (stateless mode, the 2026-07-28 lane). */
  readonly oneShots = new Set<HttpServerTransport>();
  private readonly versions: ReadonlySet<string>;
  private readonly maxSessions: number;
  private readonly maxPerClient: number;
  private readonly maxOneShots: number;
  /** Each client's live sessions (by clientKey), least recently requested first, with when each last was. */
  private readonly byClient = new Map<string, Map<HttpServerTransport, number>>();
  private readonly clientOf = new Map<HttpServerTransport, string>();

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
    this.maxPerClient = limitOption(
      "maxSessionsPerPrincipal",
      options.maxSessionsPerPrincipal,
      DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    );
    this.maxOneShots = limitOption(
      "maxStatelessRequests",
      options.maxStatelessRequests,
      DEFAULT_MAX_STATELESS_REQUESTS,
    );
    this.highWaterMark = limitOption(
      "sseHighWaterMarkBytes",
      options.sseHighWaterMarkBytes,
      DEFAULT_SSE_HIGH_WATER_MARK,
    );
  }

  forget(transport: HttpServerTransport): void {
    const id = transport.sessionId;
    if (id === undefined) {
      // A per-request transport (no session id).
      this.oneShots.delete(transport);
      return;
    }
    if (this.sessions.get(id) === transport) this.sessions.delete(id);
    const client = this.clientOf.get(transport);
    if (client === undefined) return;
    this.clientOf.delete(transport);
    const mine = this.byClient.get(client);
    if (mine !== undefined && mine.delete(transport) && mine.size === 0) this.byClient.delete(client);
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
      return this.forOneMessage(ex, requestIdOf(message), principal);
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
    const requestId = (message as { id: RequestId }).id;
    // A client with neither principal nor known address has no quota of its own, only the global cap: one shared
    // quota would let a single greedy client lock out every other such client.
    const client = clientKey(principal, ex.clientAddress);
    const mine = client === undefined ? undefined : this.byClient.get(client);
    if (this.maxPerClient > 0 && mine !== undefined && mine.size >= this.maxPerClient) {
      // The client's own doing: it is refused, and nobody else. Its sessions are kept, idle or not: one may
      // hold work its owner (or another client behind the same address) still comes back for.
      const retryAfter = this.retryAfterSeconds(mine);
      refuse(
        ex,
        429,
        requestId,
        `Too many sessions for this client (maxSessionsPerPrincipal ${this.maxPerClient}); end one with DELETE or try again later`,
        { maxSessionsPerPrincipal: this.maxPerClient },
        retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
      );
      return undefined;
    }
    if (this.maxSessions > 0 && this.sessions.size >= this.maxSessions) {
      // Abandoned sessions hold memory until they expire; refusing the newcomer keeps the live ones whole.
      refuse(ex, 503, requestId, `Server busy: too many sessions (limit ${this.maxSessions}); try again later`);
      return undefined;
    }
    const id = (this.options.sessionIdGenerator ?? (() => randomId(24)))();
    if (!isVisibleAscii(id) || this.sessions.has(id)) throw new Error("sessionIdGenerator returned an unusable id");
    const transport = new HttpServerTransport(this, id, principal);
    this.sessions.set(id, transport);
    if (client !== undefined) {
      this.clientOf.set(transport, client);
      if (mine === undefined) this.byClient.set(client, new Map([[transport, Date.now()]]));
      else mine.set(transport, Date.now());
    }
    if (!(await this.connect(ex, transport))) return undefined;
    transport.touch();
    return { transport, headers: { [SESSION_HEADER]: id } };
  }

  /**
   * A transport for one POSTed message and its reply (stateless mode, the 2026-07-28 lane): no session id, nothing
   * stored, outside the session quotas (it lives as long as its request). Undefined: the POST has been answered.
   */
  async forOneMessage(
    ex: HttpExchange,
    requestId: RequestId | undefined,
    principal: string | undefined,
  ): Promise<PostedSession | undefined> {
    if (this.maxOneShots > 0 && this.oneShots.size >= this.maxOneShots) {
      // Each holds a session of the app's and a handler: past the bound the newcomer waits, the others go on.
      refuse(
        ex,
        503,
        requestId,
        `Server busy: too many requests in flight (maxStatelessRequests ${this.maxOneShots}); try again later`,
        { maxStatelessRequests: this.maxOneShots },
        { "retry-after": "1" },
      );
      return undefined;
    }
    const transport = new HttpServerTransport(this, undefined, principal);
    this.oneShots.add(transport);
    if (!(await this.connect(ex, transport))) return undefined;
    return { transport, headers: {} };
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
    const client = this.clientOf.get(session);
    const mine = client === undefined ? undefined : this.byClient.get(client);
    if (mine !== undefined) {
      // To the end: the first one is the client's longest unused session.
      mine.delete(session);
      mine.set(session, Date.now());
    }
    return session;
  }

  /** Seconds until the soonest any of `sessions` can expire idle; undefined when sessions do not expire. */
  private retryAfterSeconds(sessions: ReadonlyMap<HttpServerTransport, number>): number | undefined {
    if (this.idleTimeoutMs === 0) return undefined;
    const oldest = sessions.values().next();
    if (oldest.done === true) return undefined;
    return Math.max(1, Math.ceil((oldest.value + this.idleTimeoutMs - Date.now()) / 1000));
  }

  /** Whether the sessionful lane accepts MCP-Protocol-Version `version` (see supportedProtocolVersions). */
  speaks(version: string): boolean {
    return this.versions.has(version);
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

/** Answers a POST that opens nothing: the HTTP status, and a JSON-RPC error that carries the request's id. */
function refuse(
  ex: HttpExchange,
  status: number,
  id: RequestId | undefined,
  message: string,
  data?: Record<string, number>,
  headers: Record<string, string> = {},
): void {
  fail(ex, status, ErrorCode.ServerBusy, message, headers, { id, data });
}
