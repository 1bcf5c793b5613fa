// Host and Origin allow-lists: DNS-rebinding protection for HTTP servers, on by default for loopback and unknown local addresses.

export interface HostOriginPolicy {
  /**
   * Accepted Host header values: a bare hostname (any port) or `hostname:port` (that port only).
   * IPv6 literals in brackets: `[::1]`.
   */
  allowedHosts?: readonly string[];
  /**
   * Accepted Origin header values: a full origin (`https://app.example:8443`, pinning scheme, host and port)
   * or a bare hostname (any scheme and port). Requests without an Origin header (non-browser clients) are not
   * affected. Default: the hostnames of allowedHosts, else the loopback names (any port: see the README).
   */
  allowedOrigins?: readonly string[];
  /**
   * `true` checks always (using the loopback defaults for any list not given), `false` never,
   * `"auto"` (default) checks when a list is given, when the server is reached on a loopback address, and
   * when the address it was reached on is unknown (a fetch handler called without `localAddress`).
   */
  dnsRebindingProtection?: boolean | "auto";
}

/** @internal */
export const LOOPBACK_HOSTNAMES: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** @internal */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^\[|\]$/g, "");
  return a === "localhost" || a === "::1" || a.startsWith("127.") || a.startsWith("::ffff:127.");
}

export interface SecurityRejection {
  status: number;
  message: string;
}

/** Lower-cased hostname of a Host header value (`name`, `name:port`, `[v6]:port`). */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end < 0 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(":");
  return colon < 0 ? h : h.slice(0, colon);
}

function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.trim().toLowerCase();
  const name = hostnameOf(h);
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    return e === h || e === name;
  });
}

/** An allow-list entry as compared: a full origin in URL form (`https://app.example`, default port dropped), or a hostname. */
function originEntry(entry: string): string {
  const e = entry.trim().toLowerCase();
  if (!e.includes("://")) return e;
  try {
    return new URL(e).origin;
  } catch {
    return e;
  }
}

/** @internal Whether an Origin header value matches an allow-list (full origins or bare hostnames); `null` never does. */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // Sandboxed frames, file: pages and some redirects send "null": nothing to match it against.
  if (url.origin === "null") return false;
  const full = url.origin.toLowerCase();
  const name = url.hostname.toLowerCase();
  return allowed.some((entry) => {
    const e = originEntry(entry);
    return e.includes("://") ? e === full : e === name;
  });
}

/**
 * Checks a request's Host and Origin. `localAddress` is the address the request arrived on (the Node socket's,
 * or what a fetch adapter reports), used by the "auto" mode; undefined counts as loopback, so an unknown
 * address never switches the check off. It must never come from the Host header or the request URL, which
 * the client chooses.
 */
export function checkHostAndOrigin(
  headers: Readonly<Record<string, string | undefined>>,
  policy: HostOriginPolicy,
  localAddress: string | undefined,
): SecurityRejection | undefined {
  const mode = policy.dnsRebindingProtection ?? "auto";
  if (mode === false) return undefined;
  const explicit = policy.allowedHosts !== undefined || policy.allowedOrigins !== undefined;
  const loopback = localAddress === undefined || isLoopbackAddress(localAddress);
  if (mode === "auto" && !explicit && !loopback) return undefined;
  const hosts =
    policy.allowedHosts ??
    (policy.allowedOrigins === undefined || mode === true || loopback ? LOOPBACK_HOSTNAMES : undefined);
  if (hosts !== undefined) {
    const host = headers["host"];
    if (host === undefined || !hostAllowed(host, hosts)) {
      return { status: 403, message: `Host not allowed: ${host ?? "(none)"}` };
    }
  }
  const origin = headers["origin"];
  // Without an origin list, a page served from an allowed host may call its own server. Built only when an
  // Origin header is there to check (most MCP clients send none).
  if (
    origin !== undefined &&
    !originAllowed(origin, policy.allowedOrigins ?? (policy.allowedHosts ?? LOOPBACK_HOSTNAMES).map(hostnameOf))
  ) {
    return { status: 403, message: `Origin not allowed: ${origin}` };
  }
  return undefined;
}
