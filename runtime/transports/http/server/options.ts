// What the Streamable HTTP server is configured with: its options, and the types its auth hooks and routes see.
import type { JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import type { AuthGrant } from "../../../rpc/transport.js";
import type { EventStore } from "./event-store.js";
import type { CorsOptions } from "./cors.js";
import type { HeaderRecord } from "./exchange.js";
import type { ParamHeadersOf } from "../modern-headers.js";
import type { HostOriginPolicy } from "./security.js";
import type { HttpServerTransport } from "./session-transport.js";

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
   * Called when an initialize request opens a session (stateful), and for every POST that carries one message on
   * its own: each POST when stateless, and each MCP 2026-07-28 request (its params' `_meta` names a protocol
   * version), in either mode. Connect the MCP server session to the transport here; the message is delivered once
   * this settles. `transport.perRequest` tells the second kind: no handshake comes on it. What the promise resolves
   * to is ignored, so `(t) => server.connect(t)` fits as it is (connect resolves to the session it opened).
   */
  onSession: (transport: HttpServerTransport) => void | PromiseLike<unknown>;
  /**
   * No sessions: every POST gets a fresh transport, no Mcp-Session-Id, GET and DELETE answer 405. MCP 2026-07-28
   * requests are served the same way with or without it.
   */
  stateless?: boolean;
  /** Session id maker; default 24 random bytes, base64url. Must yield visible ASCII. */
  sessionIdGenerator?: () => string;
  /**
   * How requests are answered. "sse" (default): an SSE stream, primed at once. "json": one JSON body,
   * unless the handler sends a related message (progress, a server-to-client request) before its response;
   * the reply then becomes an SSE stream at that moment, because JSON cannot carry more than one message.
   * MCP 2026-07-28 requests are always answered the "json" way: an error reply's HTTP status tells its kind there.
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
  /**
   * MCP-Protocol-Version values the sessionful lane accepts; default the published revisions 2024-11-05 ..
   * 2025-11-25. A POST outside a session that names another version and carries no 2026-07-28 envelope is refused
   * 400 with a HeaderMismatch error (-32020). The versions of enveloped requests are the MCP session's to check.
   */
  supportedProtocolVersions?: readonly string[];
  /**
   * MCP 2026-07-28: the tool parameters clients mirror into `Mcp-Param-{name}` headers (`x-mcp-header` in a tool's
   * inputSchema), by tool name, as read from the server's registered tools. When given, the Mcp-Param headers of
   * each tools/call on that lane are checked against its arguments (400 and -32020 HeaderMismatch when they
   * disagree, are missing, or come without a value in the body). Without it, or for a tool it returns undefined
   * for, they are not checked.
   */
  headerParams?: ParamHeadersOf;
  /**
   * Close sessions that saw no HTTP request for this long while nothing is in flight and no stream is
   * connected (ms). Default 30 minutes; 0 keeps sessions until DELETE or close().
   */
  sessionIdleTimeoutMs?: number;
  /**
   * Most live sessions in all, the last line behind maxSessionsPerPrincipal; an initialize beyond it is answered
   * 503 with a JSON-RPC error and opens nothing, while the existing sessions go on. Default 10,000; 0 for no limit.
   */
  maxSessions?: number;
  /**
   * Most live sessions per client: per principal when `authenticate` named one, else per client address (an IPv6
   * address counts by its /64; see clientAddressHeader behind a proxy). When neither is known (the fetch handler
   * called without `clientAddress`) only `maxSessions` applies: pass the address. An initialize beyond it is
   * answered 429 with Retry-After and a JSON-RPC error (-32000, data `{ maxSessionsPerPrincipal }`) and opens
   * nothing; the client's sessions and everyone else's go on. Default 100; 0 for no limit.
   */
  maxSessionsPerPrincipal?: number;
  /**
   * Most requests served at once on a transport of their own (each POST when stateless, each MCP 2026-07-28
   * request): each holds a session of the app's. One more is answered 503 with Retry-After and a JSON-RPC error
   * (-32000, data `{ maxStatelessRequests }`) and opens nothing; the session quotas above do not count these.
   * Default 10,000; 0 for no limit.
   */
  maxStatelessRequests?: number;
  /**
   * Behind reverse proxies: the request header they record the client's address in (e.g. "x-forwarded-for", a
   * list each proxy appends the address it was connected from to). Default: none, and no header is believed (a
   * client writes its own); the address is the connection's peer. Set it only when every request comes through
   * the proxies, else a client reaching the server directly chooses its address.
   */
  clientAddressHeader?: string;
  /**
   * With clientAddressHeader: how many proxies in front of the server append to it. The client's address is the
   * entry this many places from the right, written by the outermost trusted proxy: the right-most address that is
   * not one of the trusted proxies. Entries further left came from the client and are ignored. Default 1.
   */
  trustedProxyHops?: number;
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
