// A requests/resume that reuses the id of a live request changes nothing about it until it is accepted.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { startResumableHttp, type ResumableHttp } from "../resumable/harness.js";
import { post, readSse, sessionHeaders, type SseRead } from "./helpers.js";
import { until } from "../kit/timing.js";

let server: ResumableHttp | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** initialize + notifications/initialized with raw HTTP; returns the session id. */
async function openSession(url: string, capabilities: JsonObject): Promise<string> {
  const init = await post(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "0" } },
  });
  await readSse(init);
  const sid = init.headers.get("mcp-session-id")!;
  const initialized = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(sid));
  expect(initialized.status).toBe(202);
  return sid;
}

/** POSTs tools/call of the three-step "count" tool under `id`, asking for progress. */
function countCall(url: string, sid: string, id: number): Promise<Response> {
  const params = { name: "count", arguments: { steps: 3 }, _meta: { progressToken: "p" } };
  return post(url, { jsonrpc: "2.0", id, method: "tools/call", params }, sessionHeaders(sid));
}

function lastOf(read: SseRead): JsonObject | undefined {
  return read.messages.at(-1);
}

describe("a bogus requests/resume with the id of a request in flight", () => {
  it.each([
    { name: "a plain request, wrong token", resumable: false, params: { resumeToken: "x".repeat(32) }, code: -32600 },
    {
      name: "a resumable request, wrong token",
      resumable: true,
      params: { resumeToken: "x".repeat(32) },
      code: -32602,
    },
    { name: "a resumable request, no token at all", resumable: true, params: {}, code: -32602 },
  ])(
    "$name: the resume gets its error on its own POST, the request keeps its stream and gets its answer",
    async ({ resumable, params, code }) => {
      const manager = new ResumableRequests({ policy: (method) => method === "tools/call" });
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      server = await startResumableHttp(manager, { step: (_name, _args, i) => (i === 2 ? gate : undefined) });
      const sid = await openSession(server.url, resumable ? { resumableRequests: {} } : {});
      const original = await countCall(server.url, sid, 5);
      expect(original.status).toBe(200);
      const live: SseRead = { events: [], messages: [], ended: false };
      const reading = readSse(original, undefined, live);
      await until(() => live.messages.some((m) => m.method === "notifications/progress"));
      expect(manager.stats.made).toBe(resumable ? 1 : 0);

      const bogus = await post(
        server.url,
        { jsonrpc: "2.0", id: 5, method: "requests/resume", params },
        sessionHeaders(sid),
      );
      expect(bogus.status).toBe(200);
      const refused = await readSse(bogus);
      expect(refused.ended).toBe(true);
      expect(refused.messages).toHaveLength(1);
      expect(lastOf(refused)).toMatchObject({ jsonrpc: "2.0", id: 5, error: { code } });

      open();
      const answered = await reading;
      expect(answered.ended).toBe(true);
      const final = lastOf(answered)!;
      expect(final.id).toBe(5);
      expect((final.result as { content: { text: string }[] }).content[0].text).toBe("counted 3 for ");
      const progress = answered.messages
        .filter((m) => m.method === "notifications/progress")
        .map((m) => (m.params as { progress: number }).progress);
      expect(progress).toEqual([1, 2, 3]);
      expect(manager.stats.resumed).toBe(0);
      expect(server.mcp.sessions.get(sid)!.pendingRequestCount).toBe(0);
    },
  );

  it("a resumable request stays the one its id names: a cancel sent after the bogus resume still reaches it", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call" });
    let reason: unknown;
    server = await startResumableHttp(manager, {
      step: async (_name, _args, i, ctx) => {
        if (i !== 2) return;
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        reason = ctx.signal.reason;
      },
    });
    const sid = await openSession(server.url, { resumableRequests: {} });
    const original = await countCall(server.url, sid, 7);
    const live: SseRead = { events: [], messages: [], ended: false };
    readSse(original, undefined, live).catch(() => undefined); // cancelled below: the stream then ends with no response
    await until(() => live.messages.some((m) => m.method === "notifications/progress"));
    const refused = await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: 7, method: "requests/resume", params: { resumeToken: "x".repeat(32) } },
        sessionHeaders(sid),
      ),
    );
    expect(lastOf(refused)).toMatchObject({ id: 7, error: { code: -32602 } });
    const cancel = await post(
      server.url,
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "no longer needed" } },
      sessionHeaders(sid),
    );
    expect(cancel.status).toBe(202);
    await until(() => reason !== undefined);
    expect(String((reason as Error).message)).toMatch(/no longer needed/);
    await manager.idle();
    expect(manager.size).toBe(0);
  });

  it("an accepted resume still takes the request over: the earlier stream ends, the resume's POST carries the rest", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call" });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    server = await startResumableHttp(manager, { step: (_name, _args, i) => (i === 2 ? gate : undefined) });
    const sid = await openSession(server.url, { resumableRequests: {} });
    const original = await countCall(server.url, sid, 6);
    const first = await readSse(original, (r) => r.messages.some((m) => m.method === "notifications/progress"));
    const policy = first.messages.find((m) => m.method === "notifications/requests/resumePolicy")!.params as JsonObject;

    const resume = await post(
      server.url,
      {
        jsonrpc: "2.0",
        id: 6,
        method: "requests/resume",
        params: { resumeToken: policy.resumeToken, _meta: { "io.mcpgen/lastSeq": 1 } },
      },
      sessionHeaders(sid),
    );
    const reading = readSse(resume);
    await until(() => manager.stats.resumed === 1);
    open();
    const rest = await reading;
    expect(
      rest.messages
        .filter((m) => m.method === "notifications/progress")
        .map((m) => (m.params as { progress: number }).progress),
    ).toEqual([2, 3]);
    expect(lastOf(rest)).toMatchObject({ id: 6, result: { content: [{ type: "text", text: "counted 3 for " }] } });
  });
});
