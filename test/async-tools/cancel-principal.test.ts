// tools/async/cancel is honoured only from the principal that started the run, on its node and through Redis.
import { describe, expect, it } from "vitest";
import { AsyncTools } from "../../runtime/eras/2025-11-25/async-tools/server.js";
import { callToolAsync, joinToolAsync } from "../../runtime/eras/2025-11-25/async-tools/client.js";
import { redisForTests } from "../store/redis-server.js";
import { connect, gate, makeTools, type Gate } from "./helpers.js";
import { until } from "../kit/timing.js";

describe("tools/async/cancel checks the principal", () => {
  // Each case: who sends the cancel for alice's run (another principal, or a connection without one).
  for (const canceller of ["mallory", undefined]) {
    it(`a cancel from ${canceller ?? "a connection without a principal"} holding the token is ignored: the run goes on`, async () => {
      const held = new Map<string, Gate>([["h", gate()]]);
      const aborted = { value: false };
      const tools = new AsyncTools(makeTools([], aborted, held));
      const alice = await connect(tools, "alice");
      const other = await connect(tools, canceller);
      const handle = await callToolAsync(alice.client, "count", { steps: 1, hold: "h" });
      await other.client.notify("tools/async/cancel", { token: handle.token });
      await other.client.request("ping", undefined); // handled in order: the cancel has been seen
      expect(tools.stats.cancelled).toBe(0);
      expect(aborted.value).toBe(false);
      held.get("h")!.open();
      expect((await handle.result()).content).toEqual([{ type: "text", text: "done 1" }]);
      expect(handle.cancelled).toBe(false);

      // The same cancel from alice (on another connection) does stop a run.
      held.set("h2", gate());
      const second = await callToolAsync(alice.client, "count", { steps: 1, hold: "h2" });
      const aliceElsewhere = await connect(tools, "alice");
      await aliceElsewhere.client.notify("tools/async/cancel", { token: second.token });
      await expect(second.result()).rejects.toThrow(/cancelled/);
      expect(tools.stats.cancelled).toBe(1);
      held.get("h2")!.open();
      for (const s of [alice, other, aliceElsewhere]) await s.client.close();
      tools.close();
    });
  }
});

describe("tools/async/cancel checks the principal across nodes (Redis)", () => {
  const redis = redisForTests();

  it("a cancel from another principal on node B is not passed to node A; alice's own cancel on B is", async () => {
    const held = new Map<string, Gate>([["h", gate()]]);
    const aborted = { value: false };
    const node = async () => {
      const store = redis.store({ prefix: "cancel-principal:", leaseMs: 2000 });
      const tools = redis.closeAfter(new AsyncTools(makeTools([], aborted, held), { store }));
      await store.ready();
      return { store, tools };
    };
    const a = await node();
    const b = await node();
    // Registered after A's AsyncTools: it hears each signal once A has acted on it.
    const heardOnA: string[] = [];
    a.store.onSignal((_key, signal) => heardOnA.push(signal.type));

    const aliceOnA = await connect(a.tools, "alice");
    const malloryOnB = await connect(b.tools, "mallory");
    const aliceOnB = await connect(b.tools, "alice");
    const handle = await callToolAsync(aliceOnA.client, "count", { steps: 1, hold: "h" });
    await malloryOnB.client.notify("tools/async/cancel", { token: handle.token });
    await malloryOnB.client.request("ping", undefined);
    // B looks alice's join up in Redis after mallory's cancel and signals A through the same connection, so
    // once A heard the attach it would have heard a cancel sent before it.
    await joinToolAsync(aliceOnB.client, handle.token);
    await until(() => heardOnA.includes("attach"), 10_000);
    expect(heardOnA).toEqual(["attach"]);
    expect(a.tools.stats.cancelled).toBe(0);
    held.get("h")!.open();
    expect((await handle.result()).content).toEqual([{ type: "text", text: "done 1" }]);
    expect(aborted.value).toBe(false);

    held.set("h2", gate());
    const second = await callToolAsync(aliceOnA.client, "count", { steps: 1, hold: "h2" });
    await aliceOnB.client.notify("tools/async/cancel", { token: second.token });
    await expect(second.result()).rejects.toThrow(/cancelled/);
    expect(heardOnA).toContain("cancel");
    held.get("h2")!.open();
    for (const s of [aliceOnA, malloryOnB, aliceOnB]) await s.client.close();
  });
});
