// A request the client cancels gets no response, so its SSE stream ends at once instead of being held until the session ends.
import { afterEach, describe, expect, it } from "vitest";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { startResumableHttp, type ResumableHttp } from "../resumable/harness.js";
import { post, readSse, sessionHeaders, type SseRead } from "./helpers.js";
import { until } from "../kit/timing.js";

let server: ResumableHttp | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function openSession(url: string): Promise<string> {
  const init = await post(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  });
  await readSse(init);
  const sid = init.headers.get("mcp-session-id")!;
  expect((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(sid))).status).toBe(
    202,
  );
  return sid;
}

describe("a cancelled request over HTTP", () => {
  it("ends its reply stream and frees its place in the transport; later calls in the session still work", async () => {
    const manager = new ResumableRequests({ policy: () => false });
    let aborted = 0;
    server = await startResumableHttp(manager, {
      // Every call waits at its first step until cancelled.
      step: async (_name, _args, i, ctx) => {
        if (i !== 1) return;
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        aborted++;
      },
    });
    const sid = await openSession(server.url);
    const transport = server.mcp.sessions.get(sid)!;
    const CALLS = 50;
    for (let id = 1; id <= CALLS; id++) {
      const call = await post(
        server.url,
        { jsonrpc: "2.0", id, method: "tools/call", params: { name: "count", arguments: { steps: 2 } } },
        sessionHeaders(sid),
      );
      const live: SseRead = { events: [], messages: [], ended: false };
      const reading = readSse(call, undefined, live);
      await until(() => transport.pendingRequestCount === 1);
      const cancel = await post(
        server.url,
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "not needed" } },
        sessionHeaders(sid),
      );
      expect(cancel.status).toBe(202);
      // The stream ends without a response: a cancelled request is not answered.
      await until(() => live.ended, 5000);
      const read = await reading;
      expect(read.ended).toBe(true);
      expect(read.messages.some((m) => m.id === id)).toBe(false);
      expect(transport.pendingRequestCount).toBe(0);
    }
    await until(() => aborted === CALLS);
    // The session is as good as new: a call that is not cancelled is answered.
    const echo = await readSse(await post(server.url, { jsonrpc: "2.0", id: 99, method: "ping" }, sessionHeaders(sid)));
    expect(echo.messages.at(-1)).toMatchObject({ id: 99, result: {} });
  });
});
