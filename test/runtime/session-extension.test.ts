// Session.use: the one extension point (hooks in registration order, removal, typed per-session state, id reuse, close).
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { SessionStateKey, type Session } from "../../runtime/rpc/session/session.js";
import { rawPeer, sessionPair } from "./helpers.js";
import { settle } from "../kit/timing.js";

describe("Session.use", () => {
  it("calls requestStarted and accept of every extension in order, and stops once removed", async () => {
    const { client, server } = await sessionPair();
    const seen: string[] = [];
    server.onRequest("tools/call", () => ({ content: [] }));
    const removeA = server.use({
      accept: (m) => (seen.push(`a:accept:${String(m.method)}`), true),
      requestStarted: (op) => void seen.push(`a:start:${op.method}`),
    });
    server.use({ requestStarted: (op) => void seen.push(`b:start:${op.method}`) });
    await client.request("tools/call", { name: "x" });
    expect(seen).toEqual(["a:accept:tools/call", "a:start:tools/call", "b:start:tools/call"]);
    seen.length = 0;
    removeA();
    await client.request("tools/call", { name: "x" });
    expect(seen).toEqual(["b:start:tools/call"]);
    await client.close();
  });

  it("drops an inbound message an extension does not accept, and refuses what checkOutbound refuses", async () => {
    const { client, server } = await sessionPair();
    let served = 0;
    server.onRequest("tools/call", () => (served++, { content: [] }));
    server.use({ accept: (m) => (m.params as JsonObject | undefined)?.name !== "drop" });
    client.request("tools/call", { name: "drop" }, { timeout: 10_000 }).catch(() => undefined);
    await client.request("tools/call", { name: "keep" });
    expect(served).toBe(1);
    const refusal = new Error("not now");
    client.use({ checkOutbound: (method) => (method === "tools/list" ? refusal : undefined) });
    await expect(client.request("tools/list", undefined)).rejects.toBe(refusal);
    await client.close();
  });

  it("lets a request reuse a live id only when an extension says so", async () => {
    const { server, raw, next } = await rawPeer();
    const finish: (() => void)[] = [];
    server.onRequest(
      "tools/call",
      () => new Promise<JsonObject>((resolve) => finish.push(() => resolve({ content: [] }))),
    );
    server.onRequest("tools/list", () => ({ tools: [] }));
    await raw.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } });
    await settle();
    await raw.send({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(await next()).toMatchObject({ id: 7, error: { code: -32600 } });
    server.use({ mayReuseId: (method, existing) => method === "tools/list" && existing.method === "tools/call" });
    await raw.send({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(await next()).toEqual({ jsonrpc: "2.0", id: 7, result: { tools: [] } });
    finish[0]();
    await server.close();
  });

  it("keeps typed state per session and key, made on first use", async () => {
    const { client, server } = await sessionPair();
    const made: Session[] = [];
    const key = new SessionStateKey("counter", (s) => (made.push(s), { count: 0 }));
    const other = new SessionStateKey("counter", () => ({ count: 100 }));
    expect(server.peekState(key)).toBeUndefined();
    server.state(key).count++;
    server.state(key).count++;
    expect(server.state(key).count).toBe(2);
    expect(server.state(other).count).toBe(100);
    expect(client.peekState(key)).toBeUndefined();
    expect(made).toEqual([server]);
    await client.close();
  });

  it("tells closed(byApp) to every extension; true from one (peer gone) keeps onclose from firing", async () => {
    const { client, server } = await sessionPair();
    const calls: string[] = [];
    server.use({ closed: (byApp) => void calls.push(`server:${byApp}`) });
    client.use({ closed: (byApp) => (calls.push(`client:${byApp}`), true) });
    client.use({ closed: (byApp) => void calls.push(`client2:${byApp}`) });
    let clientOnclose = 0;
    client.onclose = () => clientOnclose++;
    await server.close();
    await settle();
    expect(calls).toEqual(["server:true", "client:false", "client2:false"]);
    expect(clientOnclose).toBe(0);
  });
});
