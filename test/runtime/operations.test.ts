// The operations registry: bounded recent sets, lazy abort signals, and detach/attach of an in-flight request.
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage } from "../../runtime/jsonrpc.js";
import { InboundOperation, RecentSet } from "../../runtime/operations.js";
import { sessionPair } from "./helpers.js";
import { settle } from "../kit/timing.js";

describe("RecentSet", () => {
  it("remembers at most `limit` keys, forgetting the oldest first", () => {
    const set = new RecentSet<number | string>(3);
    for (const k of [1, 2, 3]) set.add(k);
    expect([1, 2, 3].map((k) => set.has(k))).toEqual([true, true, true]);
    set.add(4);
    expect(set.has(1)).toBe(false);
    expect(set.has(4)).toBe(true);
    set.add(4); // no duplicate slot
    set.add("4");
    expect(set.has(2)).toBe(false);
    expect(set.has(3)).toBe(true);
    expect(set.has("4")).toBe(true);
  });
});

describe("Operation", () => {
  it("creates its AbortSignal lazily, already aborted when the abort came first", () => {
    const op = new InboundOperation(1, "tools/call");
    op.abort("why");
    expect(op.signal.aborted).toBe(true);
    expect(op.signal.reason).toBe("why");
    const other = new InboundOperation(2, "tools/call");
    const signal = other.signal;
    other.abort("later");
    expect(signal.aborted).toBe(true);
  });

  it("holds output while detached and replays it in order on attach", async () => {
    const op = new InboundOperation(1, "tools/call");
    const a: JsonRpcMessage = { jsonrpc: "2.0", method: "notifications/progress" };
    const b: JsonRpcMessage = { jsonrpc: "2.0", id: 1, result: {} };
    expect(op.hold(a)).toBe(false);
    op.detach();
    expect(op.hold(a)).toBe(true);
    expect(op.hold(b)).toBe(true);
    const sent: JsonRpcMessage[] = [];
    await Promise.all(op.attach(async (m) => void sent.push(m)));
    expect(sent).toEqual([a, b]);
    expect(op.hold(a)).toBe(false);
  });

  it("a request being served outlives a detach: its response is sent through the sink it is attached to", async () => {
    const { client, server, serverWire } = await sessionPair();
    let finish!: () => void;
    server.onRequest("tools/call", () => new Promise<JsonObject>((resolve) => (finish = () => resolve({ content: [] }))));
    const call = client.request("tools/call", { name: "x" }, { timeout: 10_000 });
    await settle();
    const op = server.operations.inbound.get(0)!;
    expect(op.method).toBe("tools/call");
    op.detach();
    finish();
    await settle();
    expect(serverWire).toEqual([]);
    const replayed: JsonRpcMessage[] = [];
    await Promise.all(op.attach(async (m) => void replayed.push(m)));
    expect(replayed).toEqual([{ jsonrpc: "2.0", id: 0, result: { content: [] } }]);
    // The replay went to our sink, not the old connection, so the original call is still waiting.
    await client.close();
    await expect(call).rejects.toThrow(/closed/);
  });
});
