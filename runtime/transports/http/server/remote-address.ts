// The address an HTTP request comes from: the connection's peer, or the entry a trusted proxy wrote in its forwarding header.
import { limitOption } from "../../../rpc/limits.js";
import { withoutPort } from "../../../mcp/quotas.js";
import type { HeaderRecord } from "./exchange.js";
import { isHeaderName } from "../wire.js";

/** The options that say where the client's address is read (see StreamableHttpServerOptions). */
export interface ClientAddressOptions {
  readonly clientAddressHeader?: string;
  readonly trustedProxyHops?: number;
}

/** The client's address from the connection's peer address (or what a fetch adapter reports) and the headers. */
export type ClientAddressOf = (peer: string | undefined, headers: HeaderRecord) => string | undefined;

const MAX_PROXY_HOPS = 64;

/**
 * How to read the client's address. Without `clientAddressHeader` it is the peer, and no header is believed: the
 * client writes its own headers. With it, each of the `trustedProxyHops` proxies in front of the server appended the
 * address it was connected from, so the entry that many places from the right is the one the outermost trusted
 * proxy saw; entries left of it were sent by the client and are ignored. A shorter list: its left-most entry (all
 * of it was written by trusted proxies). No header: the peer (the request did not come through the proxies).
 */
export function clientAddressResolver(options: ClientAddressOptions): ClientAddressOf {
  const header = options.clientAddressHeader;
  if (header === undefined) {
    if (options.trustedProxyHops !== undefined)
      throw new TypeError("trustedProxyHops needs clientAddressHeader (the header the proxies write)");
    return (peer) => peer;
  }
  if (typeof header !== "string" || !isHeaderName(header)) {
    throw new TypeError(`clientAddressHeader must be a header name, got ${JSON.stringify(header)}`);
  }
  const hops = limitOption("trustedProxyHops", options.trustedProxyHops, 1, MAX_PROXY_HOPS, 1);
  const name = header.toLowerCase();
  return (peer, headers) => {
    const value = headers[name];
    if (value === undefined) return peer;
    const entries = value
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    if (entries.length === 0) return peer;
    return withoutPort(entries[Math.max(0, entries.length - hops)]!);
  };
}
