// Resumable requests over an in-memory link: policy first, resume after a cut, deduplicated progress, status, expiry, errors.
import { describe, expect, it } from "vitest";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import {
  LAST_SEQ_META_KEY,
  RESUME_ATTEMPT_META_KEY,
  SEQ_META_KEY,
} from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import { InMemoryLink } from "../../runtime/transports/in-memory.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ProgressInfo } from "../../runtime/rpc/peer.js";
import { connectInMemory, newServerSession, recordInbound, stampOf } from "./harness.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("resumable requests, in memory", () => {
  it("sends the policy before any other message of the request, and stamps the rest with sequence numbers", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 0 });
    const { client } = await connectInMemory(manager);
    const seen = recordInbound(client);
    const progress: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "count", arguments: { steps: 3 } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3]);
    expect((result.content as { text: string }[])[0].text).toBe("counted 3 for ");
    expect(seen[0].method).toBe("notifications/requests/resumePolicy");
    expect(seen.slice(1).map((m) => stampOf(m)!.seq)).toEqual([1, 2, 3, 4]);
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
  });

  it("stamps a copy of params the handler passed (its objects stay as they were) and the progress values the runtime made itself", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 0 });
    const logged = { level: "info", data: "step one", _meta: { "app/trace": "t1" } };
    const { client } = await connectInMemory(manager, {
      step: async (_name, _args, i, ctx) => {
        if (i === 1)
          await (ctx as unknown as { notify(method: string, params: JsonObject): Promise<void> }).notify(
            "notifications/message",
            logged,
          );
      },
    });
    const seen = recordInbound(client);
    const progress: number[] = [];
    await client.request(
      "tools/call",
      { name: "count", arguments: { steps: 2 } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2]);
    expect(logged).toEqual({ level: "info", data: "step one", _meta: { "app/trace": "t1" } });
    const log = seen.find((m) => m.method === "notifications/message")!;
    expect((log.params as JsonObject)._meta).toEqual({ "app/trace": "t1", [SEQ_META_KEY]: stampOf(log) });
    expect(seen.slice(1).map((m) => [m.method ?? "response", stampOf(m)!.seq])).toEqual([
      ["notifications/message", 1],
      ["notifications/progress", 2],
      ["notifications/progress", 3],
      ["response", 4],
    ]);
    await client.close();
    manager.close();
  });

  it("drops a finished request as soon as the transport confirms the client has its response, not after retainDeliveredMs", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 60_000 });
    const { client, link } = await connectInMemory(manager);
    expect(link.server.confirmsDelivery).toBe(true);
    await client.request("tools/call", { name: "count", arguments: { steps: 2 } });
    expect(manager.stats.made).toBe(1);
    await Promise.resolve(); // the confirmation runs right after the client's onmessage
    expect(manager.size).toBe(0);
    expect(manager.store.count()).toBe(0);
    await client.close();
    manager.close();
  });

  it("keeps a delivered final response for retainDeliveredMs when the transport cannot confirm delivery", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 60_000 });
    const { client, link } = await connectInMemory(manager, {}, {}, undefined, { confirmsDelivery: false });
    expect(link.server.confirmsDelivery).toBe(true); // the link can, but the server's transport says it cannot
    await client.request("tools/call", { name: "count", arguments: { steps: 2 } });
    await new Promise((r) => setImmediate(r));
    expect(manager.size).toBe(1);
    expect(manager.store.count()).toBe(1);
    await client.close();
    manager.close();
  });

  it("keeps at most maxRetained delivered final responses, dropping the oldest first (a resume of one gets the unknown-request error)", async () => {
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      retainDeliveredMs: 60_000,
      maxRetained: 3,
    });
    const { client } = await connectInMemory(manager, {}, {}, undefined, { confirmsDelivery: false });
    const tokens: { requestId: unknown; resumeToken: unknown }[] = [];
    client.observe(
      "notifications/requests/resumePolicy",
      (params) => void tokens.push({ requestId: params?.requestId, resumeToken: params?.resumeToken }),
    );
    for (let i = 0; i < 5; i++) await client.request("tools/call", { name: "count", arguments: { steps: 1 } });
    await new Promise((r) => setImmediate(r));
    expect(tokens).toHaveLength(5);
    expect(manager.size).toBe(3);
    expect(manager.store.count()).toBe(3);
    // The newest three can still be looked at; the two oldest are gone.
    const statusOf = (t: (typeof tokens)[number]) => client.request("requests/getStatus", t as JsonObject);
    for (const t of tokens.slice(2)) expect((await statusOf(t)).status).toBe("completed");
    for (const t of tokens.slice(0, 2))
      await expect(statusOf(t)).rejects.toThrow(/Unknown or expired resumable request/);
    await client.close();
    manager.close();
  });

  it("does nothing special for a client that did not advertise resumableRequests", async () => {
    const manager = new ResumableRequests({ policy: () => true });
    const { client } = await connectInMemory(manager, {}, { extensions: [] });
    expect(client.capabilities.resumableRequests).toBeUndefined();
    await client.request("tools/call", { name: "count", arguments: { steps: 2 } });
    expect(manager.stats.made).toBe(0);
    await client.close();
  });

  it("resumes after a cut mid-progress: the call resolves, every progress value arrives once, in order", async () => {
    const manager = new ResumableRequests({ policy: () => true, retainDeliveredMs: 0 });
    const gate = deferred();
    const cutPoint = deferred();
    const { client, link } = await connectInMemory(manager, {
      step: async (_name, _args, i) => {
        if (i === 5) {
          cutPoint.resolve();
          await gate.promise;
        }
      },
    });
    const progress: ProgressInfo[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps: 10 } },
      { onProgress: (p) => progress.push(p) },
    );
    await cutPoint.promise;
    link.cut();
    gate.resolve();
    const result = await call;
    expect((result.content as { text: string }[])[0].text).toBe("counted 10 for ");
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(manager.stats.resumed).toBe(1);
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
  });

  it("rejects a wrong token, an unknown request and an expired one with the same error", async () => {
    const manager = new ResumableRequests({ policy: () => true, maxWait: 1 });
    const gate = deferred();
    const { client } = await connectInMemory(manager, { step: (_n, _a, i) => (i === 1 ? gate.promise : undefined) });
    let token = "";
    let requestId: string | number = -1;
    client.onNotification("notifications/requests/resumePolicy", (p) => {
      token = String(p?.resumeToken);
      requestId = p?.requestId as number;
    });
    const call = client.request("tools/call", { name: "count", arguments: { steps: 1 } });
    await vi_waitFor(() => token !== "");
    expect(token.length).toBeGreaterThanOrEqual(22);
    const errors: unknown[] = [];
    for (const params of [
      { requestId, resumeToken: token + "x" },
      // Same lookup prefix as the real token (the in-memory store finds requests by it), wrong after it.
      { requestId, resumeToken: token.slice(0, -1) + (token.endsWith("A") ? "B" : "A") },
      { requestId, resumeToken: token.slice(0, 16) },
      { requestId: 12345, resumeToken: token },
      { requestId: String(requestId), resumeToken: token },
    ]) {
      errors.push(await client.request("requests/getStatus", params).catch((e: unknown) => e));
    }
    const status = await client.request("requests/getStatus", { requestId, resumeToken: token });
    expect(status).toEqual({ requestId, status: "processing", hasPendingMessage: false, hasInputRequest: false });
    const shapes = errors.map((e) => ({ code: (e as { code: number }).code, message: (e as Error).message }));
    expect(new Set(shapes.map((s) => JSON.stringify(s))).size).toBe(1);
    expect(shapes[0].code).toBe(-32602);
    gate.resolve();
    await call;
    await client.close();
  });

  it("with principals, another principal holding the token is refused exactly like a wrong token", async () => {
    const manager = new ResumableRequests({ policy: () => true });
    const gate = deferred();
    const alice = await connectInMemory(
      manager,
      { step: (_n, _a, i) => (i === 1 ? gate.promise : undefined) },
      {},
      "alice",
    );
    const mallory = await connectInMemory(manager, {}, {}, "mallory");
    let token = "";
    let requestId: string | number = -1;
    alice.client.onNotification("notifications/requests/resumePolicy", (p) => {
      token = String(p?.resumeToken);
      requestId = p?.requestId as number;
    });
    const call = alice.client.request("tools/call", { name: "count", arguments: { steps: 1 } });
    await vi_waitFor(() => token !== "");
    const stolen = await mallory.client
      .request("requests/getStatus", { requestId, resumeToken: token })
      .catch((e: unknown) => e);
    const wrong = await mallory.client
      .request("requests/getStatus", { requestId, resumeToken: "x".repeat(32) })
      .catch((e: unknown) => e);
    expect((stolen as Error).message).toBe("Unknown or expired resumable request");
    expect({ code: (stolen as { code: number }).code, message: (stolen as Error).message }).toEqual({
      code: (wrong as { code: number }).code,
      message: (wrong as Error).message,
    });
    expect((await alice.client.request("requests/getStatus", { requestId, resumeToken: token })).status).toBe(
      "processing",
    );
    gate.resolve();
    await call;
    await alice.client.close();
    await mallory.client.close();
  });

  it("cancels a detached request after maxWait: its handler is aborted, the client gets a ResumeFailedError, the store is emptied", async () => {
    const manager = new ResumableRequests({ policy: () => true, maxWait: 1 });
    const started = deferred();
    const abortSeen = deferred();
    let aborted = false;
    const { client, link } = await connectInMemory(
      manager,
      {
        step: async (_n, _a, i, ctx) => {
          if (i !== 1) return;
          started.resolve();
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
          aborted = true;
          abortSeen.resolve();
        },
      },
      { reconnect: undefined },
    );
    const call = client.request("tools/call", { name: "count", arguments: { steps: 1 } });
    const outcome = call.catch((e: unknown) => e);
    await started.promise;
    link.cut();
    expect(((await outcome) as Error).name).toBe("ResumeFailedError");
    await manager.idle();
    await abortSeen.promise;
    expect(aborted).toBe(true);
    expect(manager.stats.expired).toBe(1);
    expect(manager.store.count()).toBe(0);
  });

  it("keeps retrying inside maxWait: after failed reconnects the client backs off by at most an eighth of maxWait", async () => {
    // A doubling delay (50, 100, 200, 400, 800 ms) would put the sixth attempt 1.55 s after the cut, past maxWait.
    const manager = new ResumableRequests({ policy: () => true, maxWait: 1, retainDeliveredMs: 0 });
    const cutNow = deferred();
    let cutAt = 0;
    const { client, link, reconnectAttempts } = await connectInMemory(
      manager,
      {
        step: async (_n, _a, i) => {
          if (i !== 2) return;
          cutNow.resolve();
          await new Promise((r) => setTimeout(r, 20));
        },
      },
      {},
      undefined,
      { failReconnects: 5 },
    );
    const seen: number[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps: 3 } },
      { onProgress: (p: ProgressInfo) => void seen.push(p.progress) },
    );
    await cutNow.promise;
    cutAt = Date.now();
    link.cut();
    const result = await call;
    expect((result.content as { text: string }[])[0].text).toBe("counted 3 for ");
    expect(seen).toEqual([1, 2, 3]);
    expect(reconnectAttempts).toHaveLength(6);
    // Gaps never exceed maxWait / 8 (plus timer slack): the successful sixth attempt lands well inside maxWait.
    for (let k = 1; k < reconnectAttempts.length; k++)
      expect(reconnectAttempts[k] - reconnectAttempts[k - 1]).toBeLessThan(125 + 60);
    expect(reconnectAttempts[5] - cutAt).toBeLessThan(1000);
    expect(manager.stats.expired).toBe(0);
    await client.close();
  });

  it("confirms with lastSeq on resume: the server replays only what the client did not get", async () => {
    const manager = new ResumableRequests({ policy: () => true, retainDeliveredMs: 0 });
    const gate = deferred();
    const at = deferred();
    const { client, link } = await connectInMemory(manager, {
      step: async (_n, _a, i) => {
        if (i === 4) {
          at.resolve();
          await gate.promise;
        }
      },
    });
    const sent: JsonObject[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps: 6 } },
      { onProgress: () => undefined },
    );
    await at.promise;
    // Capture what the client sends on the next connection.
    const spy = client as unknown as { resendAs: (op: unknown, method: string, params: JsonObject) => Promise<void> };
    const original = spy.resendAs.bind(client);
    spy.resendAs = (op, method, params) => {
      sent.push({ method, params });
      return original(op, method, params);
    };
    link.cut();
    // Release the handler only once the resume is being served, so nothing is produced while detached.
    while (manager.stats.resumed === 0) await new Promise((r) => setImmediate(r));
    gate.resolve();
    await call;
    const resume = sent.find((m) => m.method === "requests/resume");
    expect(resume).toBeDefined();
    expect(((resume!.params as JsonObject)._meta as JsonObject)[LAST_SEQ_META_KEY]).toBe(3);
    expect(manager.stats.replayed).toBe(0);
    await client.close();
  });

  it("numbers each resume; an earlier attempt delivered late on another connection does not take the request from the live one", async () => {
    const manager = new ResumableRequests({ policy: () => true, retainDeliveredMs: 0 });
    const firstCut = deferred();
    const secondCut = deferred();
    const go = deferred();
    const { client, link } = await connectInMemory(manager, {
      step: async (_n, _a, i) => {
        if (i === 3) firstCut.resolve();
        if (i === 5) {
          secondCut.resolve();
          await go.promise;
        }
      },
    });
    let policy: JsonObject | undefined;
    client.onNotification("notifications/requests/resumePolicy", (p) => void (policy = p));
    const attempts: unknown[] = [];
    const spy = client as unknown as { resendAs: (op: unknown, method: string, params: JsonObject) => Promise<void> };
    const original = spy.resendAs.bind(client);
    spy.resendAs = (op, method, params) => {
      attempts.push((params._meta as JsonObject)[RESUME_ATTEMPT_META_KEY]);
      return original(op, method, params);
    };
    const progress: number[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps: 8 } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    await firstCut.promise;
    link.cut();
    await secondCut.promise;
    await vi_waitFor(() => manager.stats.resumed === 1);
    link.cut();
    await vi_waitFor(() => manager.stats.resumed === 2);
    expect(attempts).toEqual([1, 2]);

    // Resume number 1 again, as if it had been held up on the connection the client left and arrived only now.
    const stale = new InMemoryLink();
    await newServerSession(manager).connect(stale.server);
    const other = clientSession({ clientInfo: { name: "stale", version: "1" }, extensions: [resumableClient()] });
    const heard: unknown[] = [];
    other.onerror = (error) => heard.push(error);
    await other.connect(stale.client);
    await stale.client.send({
      jsonrpc: "2.0",
      id: policy!.requestId as number,
      method: "requests/resume",
      params: {
        resumeToken: policy!.resumeToken as string,
        _meta: { [LAST_SEQ_META_KEY]: 0, [RESUME_ATTEMPT_META_KEY]: 1 },
      },
    });
    await vi_waitFor(() => manager.stats.resumed === 3);
    go.resolve();
    const outcome = await Promise.race([
      call.then(() => "done"),
      new Promise((r) => setTimeout(() => r("hung"), 3000)),
    ]);
    expect(outcome).toBe("done");
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(heard).toEqual([]); // the stale resume got no answer at all
    await other.close();
    await client.close();
  });
});

async function vi_waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error("condition not reached");
}
