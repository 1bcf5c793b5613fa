// Per-client session quotas: a greedy client is refused 429 while others get in; who a client is (principal, address, proxy header).
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { addressGroup, clientKey } from "../../runtime/mcp/quotas.js";
import {
  DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
  createStreamableHttpServer,
} from "../../runtime/transports/http/server/server.js";
import {
  ACCEPT_BOTH,
  fill,
  handlerPerTest,
  initialize,
  initializeMessage,
  post,
  readBody,
  serverPerTest,
  sessionHeaders,
} from "./helpers.js";

const start = serverPerTest();
const inProcess = handlerPerTest();

/** An initialize POSTed from the local address `from` (a second loopback address is a second client). */
function initializeFrom(url: string, from: string): Promise<{ status: number; body: string; sessionId?: string }> {
  const body = JSON.stringify(initializeMessage(1));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        localAddress: from,
        headers: { accept: ACCEPT_BOTH, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const sessionId = res.headers["mcp-session-id"];
        readBody(res).then(
          (read) => resolve({ ...read, sessionId: typeof sessionId === "string" ? sessionId : undefined }),
          reject,
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("maxSessionsPerPrincipal, per client address", () => {
  it("refuses a greedy client 429 with Retry-After and a -32000 error naming the quota; another address still gets in", async () => {
    const server = await start({ maxSessionsPerPrincipal: 3, maxSessions: 10, sessionIdleTimeoutMs: 60_000 });
    const greedy = [await initialize(server.url), await initialize(server.url), await initialize(server.url)];
    const refused = await post(server.url, initializeMessage(7));
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32000,
        message: expect.stringContaining("maxSessionsPerPrincipal 3"),
        data: { maxSessionsPerPrincipal: 3 },
      },
    });
    // Nothing was opened for the refused one.
    expect(server.responder.transports).toHaveLength(3);

    // A second client, on another loopback address, is not affected by the first one's greed.
    const other = await initializeFrom(server.url, "127.0.0.2");
    expect(other.status).toBe(200);
    expect(server.mcp.sessions.has(other.sessionId!)).toBe(true);
    const initialized = server.responder.received.at(-1)!;
    expect(initialized.info?.clientAddress).toMatch(/127\.0\.0\.2$/);

    // The greedy client's sessions go on, and one it ends makes room for it.
    const echo = await post(server.url, { jsonrpc: "2.0", id: 8, method: "ping" }, sessionHeaders(greedy[1]));
    expect(echo.status).toBe(200);
    await echo.text();
    expect((await fetch(server.url, { method: "DELETE", headers: sessionHeaders(greedy[0]) })).status).toBe(200);
    await initialize(server.url);
    expect((await post(server.url, initializeMessage(9))).status).toBe(429);
  });

  it("Retry-After counts from the client's longest-unused session; none when sessions never expire", async () => {
    const s = inProcess({ maxSessionsPerPrincipal: 1, sessionIdleTimeoutMs: 0 });
    expect((await s.open({ clientAddress: "192.0.2.1" })).status).toBe(200);
    const refused = await s.open({ clientAddress: "192.0.2.1" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeNull();
  });

  it("an IPv6 client counts by its /64; an IPv4-mapped address as its IPv4 one", async () => {
    const s = inProcess({ maxSessionsPerPrincipal: 2 });
    expect((await s.open({ clientAddress: "2001:db8:1:2::1" })).status).toBe(200);
    expect((await s.open({ clientAddress: "2001:db8:1:2:ffff:ffff:ffff:ffff" })).status).toBe(200);
    expect((await s.open({ clientAddress: "2001:0db8:0001:0002::9" })).status).toBe(429);
    expect((await s.open({ clientAddress: "2001:db8:1:3::1" })).status).toBe(200);
    expect((await s.open({ clientAddress: "10.0.0.1" })).status).toBe(200);
    expect((await s.open({ clientAddress: "::ffff:10.0.0.1" })).status).toBe(200);
    expect((await s.open({ clientAddress: "10.0.0.1" })).status).toBe(429);
  });

  it("the fetch handler without clientAddress applies only the global cap (no quota shared by all unknown clients)", async () => {
    const s = inProcess({ maxSessionsPerPrincipal: 2, maxSessions: 4 });
    const { opened, refused } = await fill(() => s.open(), 5);
    expect(opened).toBe(4);
    expect(refused.status).toBe(503);
  });

  it(`defaults to ${DEFAULT_MAX_SESSIONS_PER_PRINCIPAL} sessions per client; 0 is no limit`, async () => {
    const s = inProcess({ maxSessions: 0 });
    const { opened, refused } = await fill(() => s.open({ clientAddress: "192.0.2.1" }), 1000);
    expect(opened).toBe(DEFAULT_MAX_SESSIONS_PER_PRINCIPAL);
    expect(refused.status).toBe(429);
    await s.mcp.close();
    const unlimited = inProcess({ maxSessionsPerPrincipal: 0, maxSessions: 150 });
    const filled = await fill(() => unlimited.open({ clientAddress: "192.0.2.1" }), 1000);
    // The global cap, the last line, is what stops it then.
    expect(filled.opened).toBe(150);
    expect(filled.refused.status).toBe(503);
  });

  it("the global cap still answers 503 once many clients, each within its quota, filled it", async () => {
    const s = inProcess({ maxSessionsPerPrincipal: 2, maxSessions: 3 });
    expect((await s.open({ clientAddress: "192.0.2.1" })).status).toBe(200);
    expect((await s.open({ clientAddress: "192.0.2.2" })).status).toBe(200);
    expect((await s.open({ clientAddress: "192.0.2.3" })).status).toBe(200);
    expect((await s.open({ clientAddress: "192.0.2.4" })).status).toBe(503);
  });
});

describe("maxSessionsPerPrincipal, per principal", () => {
  it("counts an authenticated client by its principal, wherever it connects from", async () => {
    const server = await start({
      maxSessionsPerPrincipal: 2,
      authenticate: (req) => String(req.headers.authorization ?? "").replace(/^Bearer /, "") || undefined,
    });
    const alice = { authorization: "Bearer alice" };
    await initialize(server.url, alice);
    await initialize(server.url, alice);
    const refused = await post(server.url, initializeMessage(3), alice);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: -32000, data: { maxSessionsPerPrincipal: 2 } } });
    // Bob, from the very same address, has a quota of his own.
    await initialize(server.url, { authorization: "Bearer bob" });
    await initialize(server.url, { authorization: "Bearer bob" });
  });
});

describe("clientAddressHeader (behind a proxy)", () => {
  it("is ignored unless configured: a client naming other addresses in X-Forwarded-For still counts by its own", async () => {
    const server = await start({ maxSessionsPerPrincipal: 1 });
    await initialize(server.url, { "x-forwarded-for": "198.51.100.1" });
    const refused = await post(server.url, initializeMessage(2), { "x-forwarded-for": "198.51.100.2" });
    expect(refused.status).toBe(429);
    expect(server.responder.received[0]!.info?.clientAddress).toMatch(/127\.0\.0\.1$/);
  });

  it("configured with one hop: the right-most entry counts, entries the client wrote left of it do not", async () => {
    const server = await start({ maxSessionsPerPrincipal: 1, clientAddressHeader: "X-Forwarded-For" });
    await initialize(server.url, { "x-forwarded-for": "203.0.113.5, 198.51.100.1" });
    expect(server.responder.received[0]!.info?.clientAddress).toBe("198.51.100.1");
    // The greedy client varies what it controls: refused all the same.
    const again = await post(server.url, initializeMessage(2), { "x-forwarded-for": "203.0.113.6, 198.51.100.1" });
    expect(again.status).toBe(429);
    // Another client behind the proxy gets in.
    await initialize(server.url, { "x-forwarded-for": "203.0.113.5, 198.51.100.2" });
    // Without the header (not through the proxy) the peer address counts.
    await initialize(server.url);
  });

  it("configured with two hops: the entry second from the right (the right-most untrusted one) counts", async () => {
    const server = await start({
      maxSessionsPerPrincipal: 1,
      clientAddressHeader: "x-forwarded-for",
      trustedProxyHops: 2,
    });
    await initialize(server.url, { "x-forwarded-for": "203.0.113.5, 198.51.100.1, 10.0.0.2" });
    expect(server.responder.received[0]!.info?.clientAddress).toBe("198.51.100.1");
    const again = await post(server.url, initializeMessage(2), { "x-forwarded-for": "198.51.100.1, 10.0.0.3" });
    expect(again.status).toBe(429);
    // Fewer entries than hops: all of them are the proxies', the left-most is the client.
    await initialize(server.url, { "x-forwarded-for": "198.51.100.7" });
    expect(server.responder.received.at(-1)!.info?.clientAddress).toBe("198.51.100.7");
  });

  it("applies to the fetch handler too, from the clientAddress the adapter passes", async () => {
    const s = inProcess({ maxSessionsPerPrincipal: 1, clientAddressHeader: "x-forwarded-for" });
    const first = await s.open({ clientAddress: "10.0.0.1" }, { "x-forwarded-for": "[2001:db8::1]:4711" });
    expect(first.status).toBe(200);
    await first.text();
    expect(s.responder.received[0]!.info?.clientAddress).toBe("2001:db8::1");
    expect((await s.open({ clientAddress: "10.0.0.1" }, { "x-forwarded-for": "2001:db8::2" })).status).toBe(429);
    expect((await s.open({ clientAddress: "10.0.0.1" })).status).toBe(200);
  });
});

describe("options", () => {
  it.each([
    [{ maxSessionsPerPrincipal: -1 }, RangeError],
    [{ maxSessionsPerPrincipal: 2.5 }, RangeError],
    [{ clientAddressHeader: "x-forwarded-for", trustedProxyHops: 0 }, RangeError],
    [{ clientAddressHeader: "x-forwarded-for", trustedProxyHops: 1.5 }, RangeError],
    [{ trustedProxyHops: 1 }, TypeError],
    [{ clientAddressHeader: "x forwarded" }, TypeError],
  ] as const)("refuses %j", (options, error) => {
    expect(() => createStreamableHttpServer({ onSession: () => undefined, ...options })).toThrow(error);
  });
});

describe("addressGroup / clientKey", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:8080", "192.0.2.1"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::ffff:c000:201", "192.0.2.1"],
    ["2001:DB8:0:0:1:2:3:4", "2001:db8:0:0::/64"],
    ["[2001:db8::1]:443", "2001:db8:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["_hidden", "_hidden"],
  ])("%s counts as %s", (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });

  it("a principal and an address never share a key", () => {
    expect(clientKey("a:1.2.3.4", undefined)).not.toBe(clientKey(undefined, "1.2.3.4"));
    expect(clientKey("alice", "1.2.3.4")).toBe("p:alice");
    expect(clientKey(undefined, undefined)).toBeUndefined();
  });
});
