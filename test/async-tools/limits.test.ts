// Async tool call limits: running calls capped per principal (or session) and in all, refusals and kept results bounded.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { AsyncTools } from "../../runtime/eras/2025-11-25/async-tools/server.js";
import {
  AsyncCallRejectedError,
  callToolAsync,
  joinToolAsync,
} from "../../runtime/eras/2025-11-25/async-tools/client.js";
import { connect, gate, makeTools, type Gate } from "./helpers.js";
import { until } from "../kit/timing.js";

/** The refusal a call met, or undefined when it was accepted. */
async function refusal(call: Promise<unknown>): Promise<string | undefined> {
  const outcome = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (outcome === undefined) return undefined;
  if (!(outcome instanceof AsyncCallRejectedError)) throw outcome;
  return outcome.reason ?? "(no reason)";
}

/** A tool whose result text is `arguments.size` characters long, ready at once. */
function sizedResult(params: JsonObject): JsonObject {
  const size = Number((params.arguments as JsonObject | undefined)?.size ?? 1);
  return { content: [{ type: "text", text: "x".repeat(size) }] };
}

describe("async tool call limits", () => {
  it("one principal's 1,000 instant calls do not lock another principal out", async () => {
    const tools = new AsyncTools(makeTools());
    const alice = await connect(tools, "alice");
    const bob = await connect(tools, "bob");
    for (let i = 0; i < 1000; i++) await (await callToolAsync(alice.client, "count", { steps: 0 })).result();
    const bobs = await callToolAsync(bob.client, "count", { steps: 1 });
    expect((await bobs.result()).content).toEqual([{ type: "text", text: "done 1" }]);
    // Finished runs are kept for keepAlive (60 s by default) but no longer take a slot.
    expect(tools.size).toBe(1001);
    expect(tools.running).toBe(0);
    // Nor is alice herself locked out by her own finished calls.
    expect(await refusal(callToolAsync(alice.client, "count", { steps: 0 }))).toBeUndefined();
    await alice.client.close();
    await bob.client.close();
    tools.close();
  });

  // Each case: who makes the calls (principals, or anonymous sessions) and the reason the cap gives.
  const perOwner = [
    {
      owner: "principal",
      first: "alice",
      second: "bob",
      reason: /^Too many async tool calls running for this principal \(limit 3\)/,
    },
    {
      owner: "session",
      first: undefined,
      second: undefined,
      reason: /^Too many async tool calls running in this session \(limit 3\)/,
    },
  ];
  for (const { owner, first, second, reason } of perOwner) {
    it(`refuses a ${owner}'s 4th running call with maxRunsPerPrincipal 3, others still get in, and accepts again once one finishes`, async () => {
      const held = new Map<string, Gate>();
      const tools = new AsyncTools(makeTools([], undefined, held), { maxRunsPerPrincipal: 3 });
      const a = await connect(tools, first);
      const b = await connect(tools, second);
      const running = [];
      for (const name of ["r0", "r1", "r2"]) {
        held.set(name, gate());
        running.push(await callToolAsync(a.client, "count", { steps: 1, hold: name }));
      }
      expect(await refusal(callToolAsync(a.client, "count", { steps: 1 }))).toMatch(reason);
      expect(tools.stats.rejected).toBe(1);
      // A refusal holds no run; the other principal (or session) has its own allowance.
      expect(tools.size).toBe(3);
      expect(await refusal(callToolAsync(b.client, "count", { steps: 1 }))).toBeUndefined();
      held.get("r1")!.open();
      // A slot is free again before the result is told.
      expect((await running[1].result()).content).toEqual([{ type: "text", text: "done 1" }]);
      expect(await refusal(callToolAsync(a.client, "count", { steps: 1 }))).toBeUndefined();
      for (const g of held.values()) g.open();
      await a.client.close();
      await b.client.close();
      tools.close();
    });
  }

  it("maxRuns caps running calls of all principals together; finished runs do not count", async () => {
    const held = new Map<string, Gate>([["long", gate()]]);
    const tools = new AsyncTools(makeTools([], undefined, held), { maxRuns: 2 });
    const [alice, bob, carol] = await Promise.all(["alice", "bob", "carol"].map((p) => connect(tools, p)));
    const long = await callToolAsync(alice.client, "count", { steps: 1, hold: "long" });
    const quick = await callToolAsync(bob.client, "count", { steps: 1 });
    await quick.result();
    const second = await callToolAsync(bob.client, "count", { steps: 1, hold: "long" });
    expect(tools.running).toBe(2);
    expect(await refusal(callToolAsync(carol.client, "count", { steps: 1 }))).toMatch(
      /^Too many async tool calls running on this server \(limit 2\)/,
    );
    held.get("long")!.open();
    await Promise.all([long.result(), second.result()]);
    expect(await refusal(callToolAsync(carol.client, "count", { steps: 1 }))).toBeUndefined();
    for (const s of [alice, bob, carol]) await s.client.close();
    tools.close();
  });

  it("a run cancelled while its handler ignores the signal keeps its slot until the handler returns", async () => {
    const release = gate();
    const tools = new AsyncTools(
      async (): Promise<JsonObject> => {
        await release.promise; // deaf to cancellation: still work the process does
        return { content: [] };
      },
      { maxRunsPerPrincipal: 1 },
    );
    const alice = await connect(tools, "alice");
    const first = await callToolAsync(alice.client, "slow", {});
    await first.cancel();
    await expect(first.result()).rejects.toThrow(/cancelled/);
    expect(await refusal(callToolAsync(alice.client, "slow", {}))).toMatch(/limit 1/);
    release.open();
    await until(() => tools.running === 0);
    expect(await refusal(callToolAsync(alice.client, "slow", {}))).toBeUndefined();
    await alice.client.close();
    tools.close();
  });

  it("refusals keep only their reason, at most maxRefusals of them (oldest forgotten), readable by their principal only", async () => {
    const tools = new AsyncTools(makeTools(), { accept: (name) => `no async for ${name}`, maxRefusals: 2 });
    const alice = await connect(tools, "alice");
    const mallory = await connect(tools, "mallory");
    const tokens: string[] = [];
    for (const name of ["one", "two", "three"]) {
      const answer = await alice.client.request("tools/async/call", { name });
      expect(answer.accepted).toBe(false);
      tokens.push(String(answer.token));
    }
    expect(tools.size).toBe(0);
    await expect(alice.client.request("tools/async/get", { token: tokens[0] })).rejects.toThrow(
      /Unknown or expired async tool call/,
    );
    for (const [i, name] of [
      [1, "two"],
      [2, "three"],
    ] as const) {
      expect(await alice.client.request("tools/async/get", { token: tokens[i] })).toEqual({
        content: [{ type: "text", text: `no async for ${name}` }],
        isError: true,
      });
      expect(await alice.client.request("tools/async/join", { token: tokens[i] })).toMatchObject({
        accepted: false,
        token: tokens[i],
      });
    }
    await expect(mallory.client.request("tools/async/get", { token: tokens[2] })).rejects.toThrow(
      /Unknown or expired async tool call/,
    );
    await alice.client.close();
    await mallory.client.close();
    tools.close();
  });

  it("kept results are bounded by maxKeptResultBytes: the oldest are dropped and then read as expired", async () => {
    const tools = new AsyncTools((params) => sizedResult(params), { maxKeptResultBytes: 3 * 10_000 + 3 * 2048 });
    const { client } = await connect(tools);
    const handles = [];
    for (let i = 0; i < 5; i++) {
      const handle = await callToolAsync(client, "big", { size: 10_000 });
      await handle.result();
      handles.push(handle);
    }
    expect(tools.stats.evicted).toBe(2);
    expect(tools.size).toBe(3);
    expect(tools.keptBytes).toBeLessThanOrEqual(3 * 10_000 + 3 * 2048);
    expect(tools.keptBytes).toBeGreaterThan(3 * 10_000);
    for (const dropped of handles.slice(0, 2)) {
      await expect(client.request("tools/async/get", { token: dropped.token })).rejects.toThrow(
        /Unknown or expired async tool call/,
      );
      await expect(joinToolAsync(client, dropped.token)).rejects.toThrow(/Unknown or expired async tool call/);
    }
    for (const kept of handles.slice(2))
      expect(((await kept.result()).content as { text: string }[])[0].text).toHaveLength(10_000);
    await client.close();
    tools.close();
  });

  it("a result larger than maxKeptResultBytes goes to the gets already waiting for it, is not kept, and evicts nothing", async () => {
    const finish = gate();
    const tools = new AsyncTools(
      async (params: JsonObject, _ctx: RequestContext) => {
        if ((params.arguments as JsonObject).wait === true) await finish.promise;
        return sizedResult(params);
      },
      { maxKeptResultBytes: 20_000 },
    );
    const { client } = await connect(tools);
    const small = await callToolAsync(client, "small", { size: 10 });
    await small.result();
    const huge = await callToolAsync(client, "huge", { size: 50_000, wait: true });
    const waiting = huge.result();
    await client.request("ping", undefined); // the session handles messages in order: the get now waits
    finish.open();
    expect(((await waiting).content as { text: string }[])[0].text).toHaveLength(50_000);
    await expect(client.request("tools/async/get", { token: huge.token })).rejects.toThrow(
      /Unknown or expired async tool call/,
    );
    expect((await small.result()).content).toEqual([{ type: "text", text: "x".repeat(10) }]);
    expect(tools.stats.evicted).toBe(1);
    await client.close();
    tools.close();
  });
});
