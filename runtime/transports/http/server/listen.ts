// A node:http server with explicit limits on how long a client may take to send a request, and a listen helper.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";

/**
 * How long a client may take to send its request. Both request timeouts bound receiving only: once a request
 * is complete its response (an SSE stream) may last as long as it needs. 0 turns a timeout off.
 */
export interface HttpServerTimeouts {
  /** Most ms from a request's first byte (or the connection's opening) until its headers are complete. Default 10,000. */
  headersTimeoutMs?: number;
  /** Most ms to receive a whole request, headers and body. Default 30,000; not below headersTimeoutMs. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept after its last response. Default 5,000. */
  keepAliveTimeoutMs?: number;
  /** How often the two request timeouts are checked, i.e. how late past them a slow client may be cut off. Default 1,000. */
  timeoutCheckIntervalMs?: number;
}

export const DEFAULT_HTTP_SERVER_TIMEOUTS: Readonly<Required<HttpServerTimeouts>> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  timeoutCheckIntervalMs: 1_000,
});

function resolveTimeouts(timeouts: HttpServerTimeouts): Required<HttpServerTimeouts> {
  const out = { ...DEFAULT_HTTP_SERVER_TIMEOUTS };
  for (const key of Object.keys(out) as (keyof HttpServerTimeouts)[])
    out[key] = limitOption(key, timeouts[key], out[key], MAX_TIMER_MS);
  if (out.timeoutCheckIntervalMs === 0) throw new RangeError("timeoutCheckIntervalMs must be at least 1 ms");
  // Node refuses this pairing: the headers are part of the request.
  if (out.requestTimeoutMs > 0 && out.headersTimeoutMs > out.requestTimeoutMs) {
    throw new RangeError(
      `headersTimeoutMs (${out.headersTimeoutMs}) must not exceed requestTimeoutMs (${out.requestTimeoutMs})`,
    );
  }
  return out;
}

/**
 * `http.createServer(listener)` with the timeouts set explicitly instead of left to Node's defaults (60 s for
 * headers, 300 s for a request, checked every 30 s), which let slow clients hold connections for minutes.
 */
export function createHttpServer(listener: RequestListener, timeouts: HttpServerTimeouts = {}): Server {
  const t = resolveTimeouts(timeouts);
  const server = createServer(
    {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      connectionsCheckingInterval: t.timeoutCheckIntervalMs,
    },
    listener,
  );
  // A property rather than an option: not every Node 20 release reads it from the options.
  server.keepAliveTimeout = t.keepAliveTimeoutMs;
  return server;
}

export interface ListenHttpOptions extends HttpServerTimeouts {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: reachable from this machine only. */
  host?: string;
}

export interface ListeningHttpServer {
  readonly server: Server;
  /** The bound port (the one picked when 0 was asked). */
  readonly port: number;
  /** `http://host:port`, IPv6 hosts in brackets. */
  readonly origin: string;
  /** Stops listening and ends every connection, open SSE streams included. */
  close(): Promise<void>;
}

/** Creates a server with createHttpServer and listens; rejects when the port cannot be bound. */
export async function listenHttp(
  listener: RequestListener,
  options: ListenHttpOptions = {},
): Promise<ListeningHttpServer> {
  const { port = 0, host = "127.0.0.1", ...timeouts } = options;
  const server = createHttpServer(listener, timeouts);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    close() {
      server.closeAllConnections();
      // The only error close() reports is "not running": a second close() is not one.
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
