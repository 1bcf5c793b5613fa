// Async tool calls over in-memory links: call, progress fan-out to joined sessions, get with/without timeout, cancel, keepAlive, refusal.
import { describe, expect, it } from "vitest";
import { AsyncTools } from "../../runtime/eras/2025-11-25/async-tools/server.js";
import {
  AsyncCallRejectedError,
  callToolAsync,
  callToolPreferAsync,
  joinToolAsync,
} from "../../runtime/eras/2025-11-25/async-tools/client.js";
import { connect, gate, makeTools, type Gate } from "./helpers.js";
import { until } from "../kit/timing.js";

describe("async tool calls", () => {
  it("advertises async.maxKeepAliveTime, accepts, runs detached and answers get without timeout with the result", async () => {
    const tools = new AsyncTools(makeTools(), { maxKeepAlive: 30 });
    const { client } = await connect(tools);
    expect(client.serverCapabilities?.async).toEqual({ maxKeepAliveTime: 30 });
    const seen: number[] = [];
    const handle = await callToolAsync(
      client,
      "count",
      { steps: 4 },
      { keepAlive: 999, onProgress: (p) => seen.push(p.progress) },
    );
    expect(handle.keepAlive).toBe(30); // capped by the advertised maximum
    const result = await handle.result();
    expect(result.content).toEqual([{ type: "text", text: "done 4" }]);
    expect(seen).toEqual([1, 2, 3, 4]);
    await client.close();
    tools.close();
  });

  it("get with a timeout answers isPending while the tool runs", async () => {
    const gates = [gate(), gate()];
    const tools = new AsyncTools(makeTools([undefined as unknown as Gate, gates[1]]));
    const { client } = await connect(tools);
    const handle = await callToolAsync(client, "count", { steps: 1 });
    const pending = await handle.result({ timeout: 0 });
    expect(pending.isPending).toBe(true);
    gates[1].open();
    const done = await handle.result({ timeout: 5 });
    expect(done.isPending).toBeUndefined();
    expect(done.content).toEqual([{ type: "text", text: "done 1" }]);
    await client.close();
    tools.close();
  });

  it("a second client joins: progress goes to both; cancel from one notifies both and aborts the run", async () => {
    const gates = [gate(), gate(), gate(), gate()];
    const aborted = { value: false };
    const tools = new AsyncTools(makeTools(gates, aborted));
    const a = await connect(tools);
    const b = await connect(tools);
    const seenA: number[] = [];
    const seenB: number[] = [];
    const handleA = await callToolAsync(a.client, "count", { steps: 3 }, { onProgress: (p) => seenA.push(p.progress) });
    gates[1].open();
    await until(() => seenA.length === 1);
    const handleB = await joinToolAsync(b.client, handleA.token, { onProgress: (p) => seenB.push(p.progress) });
    gates[2].open();
    await until(() => seenA.length === 2 && seenB.length === 1);
    expect(seenA).toEqual([1, 2]);
    expect(seenB).toEqual([2]);
    const cancelledA = new Promise<string | undefined>((r) => (handleA.oncancelled = r));
    const cancelledB = new Promise<string | undefined>((r) => (handleB.oncancelled = r));
    await handleB.cancel();
    expect(await cancelledA).toMatch(/Cancelled/);
    expect(await cancelledB).toMatch(/Cancelled/);
    expect(aborted.value).toBe(true);
    await expect(handleA.result()).rejects.toThrow(/cancelled/);
    await a.client.close();
    await b.client.close();
    tools.close();
  });

  it("frees a run keepAlive seconds after its last session detached; its token is then unknown", async () => {
    const gates = [gate(), gate()];
    const aborted = { value: false };
    const tools = new AsyncTools(makeTools(gates, aborted));
    const a = await connect(tools);
    const handle = await callToolAsync(a.client, "count", { steps: 1 }, { keepAlive: 1 });
    await a.client.close();
    await tools.idle();
    expect(aborted.value).toBe(true);
    expect(tools.stats.expired).toBe(1);
    const b = await connect(tools);
    await expect(joinToolAsync(b.client, handle.token)).rejects.toThrow(/Unknown or expired async tool call/);
    await b.client.close();
  });

  it("refuses with accepted: false and a reason tools/async/get returns", async () => {
    const tools = new AsyncTools(makeTools(), { accept: (name) => (name === "count" ? true : `no async for ${name}`) });
    const { client } = await connect(tools);
    const error = await callToolAsync(client, "echo", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AsyncCallRejectedError);
    expect((error as AsyncCallRejectedError).reason).toBe("no async for echo");
    await client.close();
    tools.close();
  });

  it("only the same principal may join or get a run", async () => {
    const gates = [gate(), gate()];
    const tools = new AsyncTools(makeTools(gates));
    const alice = await connect(tools, "alice");
    const mallory = await connect(tools, "mallory");
    const handle = await callToolAsync(alice.client, "count", { steps: 1 });
    const asMallory = await mallory.client
      .request("tools/async/get", { token: handle.token, timeout: 0 })
      .catch((e: unknown) => e);
    const unknown = await mallory.client
      .request("tools/async/get", { token: "nope", timeout: 0 })
      .catch((e: unknown) => e);
    expect((asMallory as Error).message).toBe((unknown as Error).message);
    gates[1].open();
    expect((await handle.result()).content).toEqual([{ type: "text", text: "done 1" }]);
    await alice.client.close();
    await mallory.client.close();
    tools.close();
  });

  it("preferAsync: async when the server offers it, tools/call when it does not", async () => {
    const tools = new AsyncTools(makeTools());
    const withAsync = await connect(tools);
    const plain = await connect(undefined);
    const tool = { name: "count", annotations: { preferAsync: true } };
    expect((await callToolPreferAsync(withAsync.client, tool, { steps: 2 })).content).toEqual([
      { type: "text", text: "done 2" },
    ]);
    expect(tools.stats.accepted).toBe(1);
    expect((await callToolPreferAsync(plain.client, tool, { steps: 2 })).content).toEqual([
      { type: "text", text: "done 2" },
    ]);
    expect(tools.stats.accepted).toBe(1);
    await withAsync.client.close();
    await plain.client.close();
    tools.close();
  });
});
