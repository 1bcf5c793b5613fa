// The Streamable HTTP endpoint's request handling: routes, Host/Origin, CORS, auth, each era's POST lane, GET, DELETE.
import { ErrorCode, type JsonObject, type JsonRpcMessage, type RequestId } from "../../../rpc/jsonrpc.js";
import type { AuthGrant, InboundInfo } from "../../../rpc/transport.js";
import { EventReplayError } from "./event-store.js";
import { CorsPolicy, withResponseHeaders } from "./cors.js";
import type { HeaderRecord, HttpExchange } from "./exchange.js";
import { claimsModernEra, headerMismatch } from "../modern-headers.js";
import { modernReplyStatus, refuseHeaderMismatch } from "./modern-replies.js";
import { readPostedMessage } from "./post-body.js";
import { fail } from "./replies.js";
import { checkHostAndOrigin } from "./security.js";
import { authenticate, challenge, isChallenge, requestInfo } from "./auth.js";
import type { HttpRoute, StreamableHttpServerOptions } from "./options.js";
import type { HttpServerTransport } from "./session-transport.js";
import { SessionTable } from "./sessions.js";
import { LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER, accepts, requestIdOf } from "../wire.js";

/** Request handling shared by the Node listener and the fetch handler. */
export class ServerCore {
  readonly options: StreamableHttpServerOptions;
  readonly table: SessionTable;
  private readonly maxBody: number;
  private readonly cors: CorsPolicy | undefined;
  /** The HTTP methods the endpoint serves (405's Allow, CORS's allowed methods). */
  private readonly methods: string;
  private readonly routes: ReadonlyMap<string, HttpRoute>;

  constructor(options: StreamableHttpServerOptions) {
    this.options = options;
    this.table = new SessionTable(options);
    this.maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
    this.methods = options.stateless ? "POST" : "GET, POST, DELETE";
    this.cors = options.cors === undefined ? undefined : new CorsPolicy(options.cors, this.methods);
    this.routes = routeTable(options.routes ?? [], options.path);
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
      const result = await authenticate(this.options, ex);
      if (result !== undefined && "status" in result) return challenge(ex, result);
      grant = result;
      if (grant === undefined && this.options.authRequired !== false) {
        return fail(ex, 401, ErrorCode.InvalidRequest, "Unauthorized");
      }
    }

    if (ex.method === "POST") return this.post(ex, grant);
    if (ex.method === "GET") return this.get(ex, grant);
    return this.delete(ex, grant?.principal);
  }

  private async serveRoute(ex: HttpExchange, route: HttpRoute): Promise<void> {
    if (ex.method !== "GET") return fail(ex, 405, ErrorCode.InvalidRequest, "Method not allowed", { allow: "GET" });
    const answer = await route.serve(requestInfo(ex));
    ex.respond(answer.status ?? 200, { ...answer.headers }, answer.body);
  }

  private async post(ex: HttpExchange, grant: AuthGrant | undefined): Promise<void> {
    const principal = grant?.principal;
    const posted = await readPostedMessage(ex, this.maxBody);
    if (posted === undefined) return;
    const { message, kind } = posted;
    if (this.options.authorize) {
      // Before anything opens: a refused initialize leaves no session behind.
      const refusal = await this.options.authorize(message, grant, requestInfo(ex));
      if (refusal !== undefined) {
        if (!isChallenge(refusal))
          throw new TypeError("authorize returned something other than a challenge or undefined");
        return challenge(ex, refusal, requestIdOf(message));
      }
    }
    // Classified once, by the body: a message claiming the 2026-07-28 era takes the per-request lane whatever its
    // headers say (that revision ignores Mcp-Session-Id); everything else is the sessionful lane of 2025-11-25.
    if (kind !== "response" && claimsModernEra(message)) return this.postModern(ex, message, kind, grant);
    const isInitialize = kind === "request" && (message as { method: string }).method === "initialize";
    if (!isInitialize && kind !== "response" && ex.headers[SESSION_HEADER] === undefined) {
      const version = ex.headers[PROTOCOL_VERSION_HEADER];
      // A client of a revision this lane does not speak, its envelope missing or broken: the per-request lane, whose
      // session tells it what its request lacks (-32602) in the terms such a client recognizes.
      if (version !== undefined && !this.table.speaks(version)) return this.postModern(ex, message, kind, grant);
    }
    const session = await this.table.forPost(ex, message, isInitialize, principal);
    if (session === undefined) return;
    const { transport, headers: sessionHeaders } = session;

    const info = inboundInfo(ex, transport, grant);
    if (kind !== "request") {
      ex.respond(202, sessionHeaders);
      transport.deliver(message, info);
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
    info.reply = await transport.openRequestStream(id, ex, { mode, headers: sessionHeaders, grant, contending });
    transport.deliver(message, info);
  }

  /**
   * A POST on the 2026-07-28 lane: its mirrored headers checked against the body, then a transport of its own that
   * mints no session id, stores nothing and ends with the request. The reply is JSON until a related message
   * (progress, a log) needs a stream; a lone JSON error goes out under the status the binding gives its code; and a
   * closed connection, JSON or SSE, cancels the request.
   */
  private async postModern(
    ex: HttpExchange,
    message: JsonRpcMessage,
    kind: "request" | "notification",
    grant: AuthGrant | undefined,
  ): Promise<void> {
    const request = message as { method: string; params?: JsonObject };
    const id = requestIdOf(message);
    // Notifications: the revision defines none for this transport, nor header rules for them; accepted as sent.
    if (kind === "request") {
      const problem = headerMismatch(ex.headers, request, this.options.headerParams);
      if (problem !== undefined) return refuseHeaderMismatch(ex, id, problem);
    }
    const posted = await this.table.forOneMessage(ex, id, grant?.principal);
    if (posted === undefined) return;
    const { transport } = posted;
    const info = inboundInfo(ex, transport, grant);
    const claimed = ex.headers[PROTOCOL_VERSION_HEADER];
    if (claimed !== undefined) info.protocolVersion = claimed;
    if (id === undefined) {
      ex.respond(202, {});
      transport.deliver(message, info);
      void transport.close();
      return;
    }
    const reply = await transport.openRequestStream(id, ex, {
      mode: "json",
      headers: {},
      grant,
      lossCancels: true,
      statusOf: modernReplyStatus,
    });
    if (!reply.connected) {
      // The client left while the request was being let in: cancelled before it started, so it never starts.
      void transport.close();
      return;
    }
    info.reply = reply;
    transport.deliver(message, info);
  }

  /** `grant`: the stream this GET opens or resumes ends when it lapses. */
  private async get(ex: HttpExchange, grant: AuthGrant | undefined): Promise<void> {
    if (!accepts(ex.headers["accept"], "text/event-stream")) {
      return fail(ex, 406, ErrorCode.InvalidRequest, "Not Acceptable: Accept must list text/event-stream");
    }
    const session = this.table.lookup(ex, grant?.principal);
    if (!session) return;
    const headers = { [SESSION_HEADER]: session.sessionId ?? "" };
    const lastEventId = ex.headers[LAST_EVENT_ID_HEADER];
    if (lastEventId !== undefined) {
      try {
        await session.resume(lastEventId, ex, headers, grant);
      } catch (error) {
        if (!(error instanceof EventReplayError)) throw error;
        const status = error.reason === "expired" ? 410 : error.reason === "unknown" ? 404 : 400;
        // 404 here would read as "session gone" to clients; an unknown event id is a bad request instead.
        return fail(ex, status === 404 ? 400 : status, ErrorCode.InvalidRequest, `Cannot resume: ${error.message}`);
      }
      return;
    }
    const opened = await session.openStandalone(ex, headers, grant);
    if (!opened)
      return fail(ex, 409, ErrorCode.InvalidRequest, "Conflict: this session already has a standalone SSE stream");
  }

  private async delete(ex: HttpExchange, principal: string | undefined): Promise<void> {
    const session = this.table.lookup(ex, principal);
    if (!session) return;
    await session.close();
    ex.respond(200, {});
  }
}

/** What the session is told of where a POSTed message came from. */
function inboundInfo(ex: HttpExchange, transport: HttpServerTransport, grant: AuthGrant | undefined): InboundInfo {
  const info: InboundInfo = { sessionId: transport.sessionId, principal: grant?.principal, headers: ex.headers };
  if (ex.clientAddress !== undefined) info.clientAddress = ex.clientAddress;
  if (grant !== undefined) info.auth = grant;
  return info;
}

function withoutOrigin(headers: HeaderRecord): HeaderRecord {
  const { origin: _origin, ...rest } = headers;
  return rest;
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
