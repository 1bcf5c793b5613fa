// Cross-origin access for browser pages (CORS): which origins may call the MCP endpoint, and the headers that say so.
import { limitOption } from "../../../rpc/limits.js";
import type { HeaderRecord, HttpExchange } from "./exchange.js";
import { originAllowed } from "./security.js";
import {
  LAST_EVENT_ID_HEADER,
  METHOD_HEADER,
  NAME_HEADER,
  PARAM_HEADER_PREFIX,
  PROTOCOL_VERSION_HEADER,
  SESSION_HEADER,
  isHeaderName,
} from "../wire.js";

export interface CorsOptions {
  /**
   * Origins whose pages may call the server, in the form of `allowedOrigins`: a full origin
   * (`https://app.example:8443`, pinning scheme, host and port) or a bare hostname (any scheme and port).
   * There is no wildcard: name each origin. These origins also pass the DNS-rebinding Origin check.
   */
  allowedOrigins: readonly string[];
  /** How long a browser may reuse a preflight answer, in seconds; default 600. Chromium caps it at 7200. */
  maxAgeSeconds?: number;
  /** Request headers pages may send beyond those MCP uses (e.g. a custom API-key header). */
  allowedHeaders?: readonly string[];
}

export const DEFAULT_CORS_MAX_AGE_SECONDS = 600;

/**
 * What the client transport sends: MCP's own headers (both eras'), content negotiation, and a bearer token. The
 * Mcp-Param-{name} headers of 2026-07-28 are named by each server's tools, so a preflight gets the ones it asks for.
 */
const MCP_REQUEST_HEADERS = [
  SESSION_HEADER,
  PROTOCOL_VERSION_HEADER,
  LAST_EVENT_ID_HEADER,
  METHOD_HEADER,
  NAME_HEADER,
  "content-type",
  "authorization",
  "accept",
];
/**
 * Response headers a page may read beyond the CORS-safelisted ones: the session id an initialize issues, and the
 * challenge of a 401/403 (an OAuth client in a page needs its resource_metadata and scope).
 */
const EXPOSED_HEADERS = [SESSION_HEADER, "www-authenticate"];

/** A configured CORS policy; the server asks it about every request that carries an Origin. */
export class CorsPolicy {
  private readonly origins: readonly string[];
  private readonly maxAge: string;
  private readonly requestHeaders: string;

  /** `methods` are the HTTP methods the endpoint serves (a stateless one takes POST only). */
  constructor(
    options: CorsOptions,
    private readonly methods: string,
  ) {
    if (
      !Array.isArray(options.allowedOrigins) ||
      options.allowedOrigins.some((o) => typeof o !== "string" || o.trim() === "" || o.includes("*"))
    ) {
      throw new TypeError("cors.allowedOrigins must be a list of origins or hostnames (no wildcards)");
    }
    const maxAge = limitOption(
      "cors.maxAgeSeconds",
      options.maxAgeSeconds,
      DEFAULT_CORS_MAX_AGE_SECONDS,
      Number.MAX_SAFE_INTEGER,
    );
    const extra = options.allowedHeaders ?? [];
    if (!Array.isArray(extra) || extra.some((h) => typeof h !== "string" || !isHeaderName(h))) {
      throw new TypeError("cors.allowedHeaders must be a list of header names");
    }
    this.origins = options.allowedOrigins;
    this.maxAge = String(maxAge);
    this.requestHeaders = [...new Set([...MCP_REQUEST_HEADERS, ...extra.map((h) => h.toLowerCase())])].join(", ");
  }

  /** Whether a page from `origin` may call the server. */
  allows(origin: string | undefined): origin is string {
    return origin !== undefined && originAllowed(origin, this.origins);
  }

  /** A browser's preflight: OPTIONS announcing the method it is about to send. */
  static isPreflight(method: string, headers: HeaderRecord): boolean {
    return (
      method === "OPTIONS" && headers["origin"] !== undefined && headers["access-control-request-method"] !== undefined
    );
  }

  /** The headers of every response to a request from an allowed origin. */
  responseHeaders(origin: string): Record<string, string> {
    return {
      "access-control-allow-origin": origin,
      "access-control-expose-headers": EXPOSED_HEADERS.join(", "),
      vary: "origin",
    };
  }

  /** The headers of a 204 answering an allowed origin's preflight. */
  preflightHeaders(origin: string, headers: HeaderRecord): Record<string, string> {
    const params = requestedParamHeaders(headers["access-control-request-headers"]);
    const out: Record<string, string> = {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": this.methods,
      "access-control-allow-headers": params.length === 0 ? this.requestHeaders : `${this.requestHeaders}, ${params}`,
      "access-control-max-age": this.maxAge,
      vary: "origin, access-control-request-method, access-control-request-headers",
    };
    // Chromium asks before a public page reaches a private or loopback address; the origin was named, so yes.
    if (headers["access-control-request-private-network"] === "true")
      out["access-control-allow-private-network"] = "true";
    return out;
  }
}

/** The Mcp-Param-{name} headers a preflight asks for, lower-cased, as a list; names that are no tokens are left out. */
function requestedParamHeaders(requested: string | undefined): string {
  if (requested === undefined) return "";
  const names = requested
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.startsWith(PARAM_HEADER_PREFIX) && isHeaderName(name));
  return [...new Set(names)].join(", ");
}

/**
 * The exchange with `extra` added to whatever it answers (the CORS headers go on errors too, so pages can read
 * them); a header the answer sets itself wins.
 */
export function withResponseHeaders(ex: HttpExchange, extra: Record<string, string>): HttpExchange {
  return {
    get method() {
      return ex.method;
    },
    get url() {
      return ex.url;
    },
    get headers() {
      return ex.headers;
    },
    get localAddress() {
      return ex.localAddress;
    },
    get clientAddress() {
      return ex.clientAddress;
    },
    get responded() {
      return ex.responded;
    },
    readBody: (limit) => ex.readBody(limit),
    respond: (status, headers, body) => ex.respond(status, { ...extra, ...headers }, body),
    openStream: (status, headers) => ex.openStream(status, { ...extra, ...headers }),
    onGone: (callback) => ex.onGone(callback),
  };
}
