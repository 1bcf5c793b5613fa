// deferPolicy: a selected call answered within its first tick goes out plain; a slower one gets the policy first. Default: eager.
import { describe, expect, it } from "vitest";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { connectInMemory, recordInbound as record, stampOf } from "./harness.js";
import { resumerOf } from "../../runtime/eras/2025-11-25/resumable/client.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("deferred resume policy", () => {
  it("by default the policy goes out as a selected request starts, even for a call that answers at once", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", retainDeliveredMs: 0 });
    const { client } = await connectInMemory(manager);
    const seen = record(client);
    await client.request("tools/call", { name: "echo" });
    expect(seen.map((m) => m.method ?? "response")).toEqual(["notifications/requests/resumePolicy", "response"]);
    expect(manager.stats).toMatchObject({ selected: 1, made: 1, answeredPlain: 0 });
    await manager.idle();
    await client.close();
  });

  it("a selected call that answers within the tick it arrived in goes out plain: no policy, no token, no store record", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", deferPolicy: true });
    const { client } = await connectInMemory(manager);
    const seen = record(client);
    const result = await client.request("tools/call", { name: "echo" });
    expect((result.content as { text: string }[])[0].text).toBe("echo");
    expect(seen).toHaveLength(1);
    expect(seen[0].result).toBeDefined();
    expect(stampOf(seen[0])).toBeUndefined();
    expect(manager.stats).toMatchObject({ selected: 1, made: 0, answeredPlain: 1 });
    expect(resumerOf(client)!.stats.policies).toBe(0);
    expect(manager.size).toBe(0);
    expect(manager.store.count()).toBe(0);
    // The deferred decision finds nothing to do once the tick is over.
    await tick();
    expect(manager.stats.made).toBe(0);
    await client.close();
  });

  it("a call still running after its first tick gets the policy before any other message of the request", async () => {
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      deferPolicy: true,
      retainDeliveredMs: 0,
    });
    // Nothing is sent in the first tick: the handler waits one macrotask before its first progress value.
    const { client } = await connectInMemory(manager, { step: (_n, _a, i) => (i === 1 ? tick() : undefined) });
    const seen = record(client);
    const progress: number[] = [];
    await client.request(
      "tools/call",
      { name: "count", arguments: { steps: 3 } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3]);
    expect(seen.map((m) => m.method ?? "response")).toEqual([
      "notifications/requests/resumePolicy",
      "notifications/progress",
      "notifications/progress",
      "notifications/progress",
      "response",
    ]);
    expect(seen.slice(1).map((m) => stampOf(m)!.seq)).toEqual([1, 2, 3, 4]);
    expect(manager.stats).toMatchObject({ selected: 1, made: 1, answeredPlain: 0 });
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
  });

  it("makeResumable in the first tick makes it resumable at once, with its own policy; the end of the tick adds nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let explicit: boolean | undefined;
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      deferPolicy: true,
      retainDeliveredMs: 0,
    });
    const { client } = await connectInMemory(manager, {
      step: async (_n, _a, i, ctx) => {
        if (i !== 1) return;
        explicit = manager.makeResumable(ctx, { maxWait: 7 });
        await gate;
      },
    });
    const seen = record(client);
    const call = client.request("tools/call", { name: "count", arguments: { steps: 1 } });
    while (resumerOf(client)!.pending().length === 0) await tick();
    expect(explicit).toBe(true);
    await tick();
    expect(seen.map((m) => m.method)).toEqual(["notifications/requests/resumePolicy"]);
    expect((seen[0].params as JsonObject).maxWait).toBe(7);
    expect(manager.size).toBe(1);
    release();
    await call;
    expect(seen.filter((m) => m.method === "notifications/requests/resumePolicy")).toHaveLength(1);
    expect(manager.stats).toMatchObject({ selected: 1, made: 1 });
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
  });
});
