// Session limits of the HTTP server: the global cap on live sessions (503 beyond it) and the default idle expiry.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  createStreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import {
  ACCEPT_BOTH,
  initialize,
  handlerPerTest,
  initializeMessage,
  post,
  readSse,
  sessionHeaders,
  serverPerTest,
} from "./helpers.js";

const start = serverPerTest();
const handler = handlerPerTest();
// Registered after the handler's teardown, so it runs before it: the handler closes on real timers.
afterEach(() => vi.useRealTimers());

/** The fetch handler in process (no sockets, so fake timers can drive it), and a raw initialize / echo on it. */
function inProcess(options: Partial<StreamableHttpServerOptions> = {}) {
  const h = handler(options);
  return {
    mcp: h.mcp,
    responder: h.responder,
    async open(): Promise<{ status: number; sessionId: string | null; body: string }> {
      const res = await h.open();
      return { status: res.status, sessionId: res.headers.get("mcp-session-id"), body: await res.text() };
    },
    async echo(sessionId: string): Promise<number> {
      const res = await h.post({ jsonrpc: "2.0", id: 2, method: "echo" }, sessionHeaders(sessionId));
      await res.text();
      return res.status;
    },
  };
}

describe("maxSessions", () => {
  it("refuses an initialize beyond the cap with 503 and a JSON-RPC error; the live sessions go on", async () => {
    const server = await start({ maxSessions: 2 });
    const a = await initialize(server.url);
    const b = await initialize(server.url);
    const refused = await post(server.url, initializeMessage(5));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("content-type")).toBe("application/json");
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32000, message: expect.stringContaining("too many sessions (limit 2)") },
    });
    // Nothing was opened for it: onSession never ran.
    expect(server.responder.transports).toHaveLength(2);
    expect(server.mcp.sessions.size).toBe(2);
    for (const [n, sid] of [a, b].entries()) {
      const echo = await readSse(
        await post(server.url, { jsonrpc: "2.0", id: 10 + n, method: "echo" }, sessionHeaders(sid)),
      );
      expect(echo.messages.at(-1)).toMatchObject({ id: 10 + n, result: { sessionId: sid } });
    }
    // A session that ends makes room.
    expect((await fetch(server.url, { method: "DELETE", headers: sessionHeaders(a) })).status).toBe(200);
    const c = await initialize(server.url);
    expect(server.mcp.sessions.has(c)).toBe(true);
    expect((await post(server.url, initializeMessage(6))).status).toBe(503);
  });

  it(`defaults to ${DEFAULT_MAX_SESSIONS} live sessions`, async () => {
    // Sessions nobody answers: the SSE reply has started, which is all a live session needs here, and cheap.
    const h = handler({ onSession: () => undefined });
    // Each from an address of its own, within its per-client quota: the global cap is what is reached.
    const open = (i: number) => h.open({ clientAddress: `10.0.${i >> 8}.${i & 255}` });
    for (let i = 0; i < DEFAULT_MAX_SESSIONS; i++) {
      const opened = await open(i);
      if (opened.status !== 200) throw new Error(`session ${i} refused: ${opened.status} ${await opened.text()}`);
    }
    const refused = await open(DEFAULT_MAX_SESSIONS);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: -32000 } });
    expect(h.mcp.sessions.size).toBe(DEFAULT_MAX_SESSIONS);
  });

  it("rejects a negative or fractional cap", () => {
    const onSession = () => undefined;
    expect(() => createStreamableHttpServer({ onSession, maxSessions: -1 })).toThrow(RangeError);
    expect(() => createStreamableHttpServer({ onSession, maxSessions: 1.5 })).toThrow(RangeError);
  });
});

describe("sessionIdleTimeoutMs", () => {
  it(`closes a session ${DEFAULT_SESSION_IDLE_TIMEOUT_MS / 60_000} minutes after its last request by default`, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const s = inProcess();
    const { sessionId } = await s.open();
    const sid = sessionId!;
    vi.advanceTimersByTime(DEFAULT_SESSION_IDLE_TIMEOUT_MS - 60_000);
    // A request restarts the clock.
    expect(await s.echo(sid)).toBe(200);
    vi.advanceTimersByTime(DEFAULT_SESSION_IDLE_TIMEOUT_MS - 1);
    expect(s.mcp.sessions.has(sid)).toBe(true);
    expect(s.responder.closed).toHaveLength(0);
    vi.advanceTimersByTime(1);
    await vi.waitFor(() => expect(s.responder.closed.map((t) => t.sessionId)).toEqual([sid]));
    expect(s.mcp.sessions.has(sid)).toBe(false);
    expect(await s.echo(sid)).toBe(404);
  });

  it("0 keeps idle sessions until DELETE or close()", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const s = inProcess({ sessionIdleTimeoutMs: 0 });
    const { sessionId } = await s.open();
    vi.advanceTimersByTime(7 * 24 * 3600_000);
    expect(s.responder.closed).toHaveLength(0);
    expect(await s.echo(sessionId!)).toBe(200);
  });

  it("rejects values a timer cannot hold", () => {
    const onSession = () => undefined;
    expect(() => createStreamableHttpServer({ onSession, sessionIdleTimeoutMs: -5 })).toThrow(RangeError);
    expect(() => createStreamableHttpServer({ onSession, sessionIdleTimeoutMs: 2 ** 31 })).toThrow(RangeError);
  });
});
