// Whom a per-client quota counts a holding against: the principal when there is one, else the client's address group.

/**
 * The key a client's sessions or tasks are counted under: `p:<principal>` when authentication named one, else
 * `a:<address group>` (see addressGroup), else undefined (nothing is known of the client; the caller decides).
 * The two kinds never collide, whatever the principal's text.
 */
export function clientKey(principal: string | undefined, address: string | undefined): string | undefined {
  if (principal !== undefined) return `p:${principal}`;
  if (address !== undefined && address !== "") return `a:${addressGroup(address)}`;
  return undefined;
}

/**
 * The group an address counts in. IPv4: the address itself (an IPv4-mapped IPv6 address too). IPv6: its /64,
 * written `<first four groups>::/64`, because one subscriber is routinely given a whole /64 and could otherwise
 * present a new address per request. Brackets, a port and a zone are ignored. Anything else (a proxy's obfuscated
 * identifier) counts as given, lower-cased.
 */
export function addressGroup(address: string): string {
  const bare = withoutPort(address.trim()).toLowerCase();
  if (!bare.includes(":")) return bare;
  const groups = ipv6Groups(bare.replace(/%.*$/, ""));
  if (groups === undefined) return bare;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join(".");
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** `[v6]:port` -> `v6`, `v4:port` -> `v4`; an address without a port is returned as is. */
export function withoutPort(address: string): string {
  if (address.startsWith("[")) {
    const end = address.indexOf("]");
    return end < 0 ? address : address.slice(1, end);
  }
  const colon = address.indexOf(":");
  // One colon: IPv4 (or a name) with a port. More: a bare IPv6 address, whose last group is no port.
  if (colon >= 0 && colon === address.lastIndexOf(":")) return address.slice(0, colon);
  return address;
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail becomes the last two), or undefined when it is none. */
function ipv6Groups(text: string): number[] | undefined {
  let s = text;
  const lastColon = s.lastIndexOf(":");
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const octets = tail.split(".");
    if (octets.length !== 4 || !octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)) return undefined;
    const [a, b, c, d] = octets.map(Number) as [number, number, number, number];
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] === "" ? [] : halves[0]!.split(":");
  const rest = halves.length === 1 || halves[1] === "" ? [] : halves[1]!.split(":");
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<string>(missing).fill("0"), ...rest];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}
