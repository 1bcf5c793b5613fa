// Streamable HTTP server (MCP 2025-11-25 with SEP-1699 polling, 2026-07-28): the public entry, Node listener, fetch.
import { ServerCore } from "./endpoint.js";
import { nodeExchange, webExchange, type NodeRequestListener } from "./exchange.js";
import { clientAddressResolver } from "./remote-address.js";
import type { StreamableHttpServerOptions } from "./options.js";
import type { HttpServerTransport } from "./session-transport.js";

export type {
  HttpAuthResult,
  HttpChallenge,
  HttpRequestInfo,
  HttpRoute,
  HttpRouteResponse,
  ResponseMode,
  StreamableHttpServerOptions,
} from "./options.js";
export type { ParamHeader, ParamHeadersOf } from "../modern-headers.js";
export { HttpServerTransport, UndeliverableMessageError } from "./session-transport.js";
export {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
  DEFAULT_MAX_STATELESS_REQUESTS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
} from "./sessions.js";

/** What a fetch adapter knows of a request beyond the Request itself. */
export interface FetchRequestInfo {
  /** The local address the request arrived on (e.g. `127.0.0.1`, `::1`, `10.0.0.5`), or the address listened on. */
  localAddress?: string;
  /**
   * The address the request came from (the connection's peer, e.g. Deno's `info.remoteAddr.hostname`), for the
   * per-client quotas (maxSessionsPerPrincipal). Without it, and without a trusted clientAddressHeader, every
   * unauthenticated request counts against one shared quota.
   */
  clientAddress?: string;
}

export interface StreamableHttpServer {
  /**
   * A Node request listener: `listenHttp(server.nodeListener)` or `createHttpServer(...)` (which set request
   * timeouts), `http.createServer(...)`, or call it from any router.
   */
  readonly nodeListener: NodeRequestListener;
  /**
   * A web-standard handler for fetch-style runtimes. Pass `info.localAddress` when the adapter knows the
   * address the request arrived on; without it the Host/Origin allow-list applies (see dnsRebindingProtection).
   * Pass `info.clientAddress` too: unauthenticated clients are counted per address.
   */
  readonly fetch: (request: Request, info?: FetchRequestInfo) => Promise<Response>;
  /** Live sessions by id. */
  readonly sessions: ReadonlyMap<string, HttpServerTransport>;
  /** Ends every session and every request on a transport of its own (onclose fires on each). */
  close(): Promise<void>;
}

/** Creates the MCP endpoint handler. Mount `nodeListener` in a node:http server or use `fetch`. */
export function createStreamableHttpServer(options: StreamableHttpServerOptions): StreamableHttpServer {
  const clientAddressOf = clientAddressResolver(options);
  const core = new ServerCore(options);
  return {
    nodeListener: (req, res) => {
      void core.handle(nodeExchange(req, res, clientAddressOf));
    },
    fetch: async (request, info) => {
      const { exchange, response } = webExchange(request, info?.localAddress, info?.clientAddress, clientAddressOf);
      void core.handle(exchange);
      return response;
    },
    sessions: core.table.sessions,
    async close() {
      const open = [...core.table.sessions.values(), ...core.table.oneShots];
      await Promise.all(open.map((s) => s.close()));
    },
  };
}
