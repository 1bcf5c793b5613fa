// subscriptions/listen (MCP 2026-07-28): the acknowledged filter first, then only the changes asked for, each tagged
// with the subscription's id; cancelling ends it quietly, a closing server ends it with a result.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { envelope, makeServer, rawPeer } from "./helpers.js";

const cleanup = closeAfterEach();
const SUB = "io.modelcontextprotocol/subscriptionId";

function server() {
  const s = makeServer({ subscriptions: true });
  s.tool("first", {}, () => "one");
  s.resource("file:///readme", { name: "readme" }, async () => ({ contents: [{ uri: "file:///readme", text: "hi" }] }));
  cleanup(() => s.close());
  return s;
}

/** Messages for subscription `id`, in arrival order, method and params. */
function streamOf(received: JsonObject[], id: number): { method: unknown; params: JsonObject }[] {
  return received
    .filter((m) => ((m.params as JsonObject | undefined)?._meta as JsonObject | undefined)?.[SUB] === id)
    .map((m) => ({ method: m.method, params: m.params as JsonObject }));
}

describe("subscriptions/listen", () => {
  it("acknowledges the subset it honours first, then sends only the changes asked for, tagged with the id", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s);
    await peer.request("tools/list", { _meta: envelope() });
    // Sent without awaiting: the request stays open.
    peer.send("subscriptions/listen", {
      _meta: envelope(),
      notifications: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["file:///readme"] },
    });
    await until(() => streamOf(peer.received, 2).length === 1);
    expect(streamOf(peer.received, 2)[0]).toEqual({
      method: "notifications/subscriptions/acknowledged",
      // No prompts are served: that kind is left out of what is acknowledged.
      params: {
        _meta: { [SUB]: 2 },
        notifications: { toolsListChanged: true, resourceSubscriptions: ["file:///readme"] },
      },
    });
    s.tool("second", {}, () => "two");
    s.resource("file:///other", { name: "other" }, async () => ({ contents: [] }));
    await s.resourceUpdated("file:///readme");
    await s.resourceUpdated("file:///not-subscribed");
    await until(() => streamOf(peer.received, 2).length === 3);
    // The two changes are told independently (list changes are gathered per tick), so in either order.
    const later = streamOf(peer.received, 2).slice(1);
    expect(later).toHaveLength(2);
    expect(later).toEqual(
      expect.arrayContaining([
        { method: "notifications/tools/list_changed", params: { _meta: { [SUB]: 2 } } },
        { method: "notifications/resources/updated", params: { _meta: { [SUB]: 2 }, uri: "file:///readme" } },
      ]),
    );
    // resources/list_changed was not asked for.
    expect(peer.received.some((m) => m.method === "notifications/resources/list_changed")).toBe(false);
  });

  it("keeps two streams apart, ends one quietly when cancelled and the other with a result when the server closes", async () => {
    const s = server();
    const peer = await rawPeer(cleanup, s);
    peer.send("subscriptions/listen", { _meta: envelope(), notifications: { toolsListChanged: true } });
    peer.send("subscriptions/listen", { _meta: envelope(), notifications: { resourcesListChanged: true } });
    await until(
      () => streamOf(peer.received, 1).length === 1 && streamOf(peer.received, 2).length === 1,
      2000,
      JSON.stringify(peer.received),
    );
    await peer.notify("notifications/cancelled", { requestId: 1 });
    s.tool("later", {}, () => "x");
    s.resource("file:///new", { name: "new" }, async () => ({ contents: [] }));
    await until(() => streamOf(peer.received, 2).length === 2, 2000, JSON.stringify(peer.received));
    expect(streamOf(peer.received, 2)[1]!.method).toBe("notifications/resources/list_changed");
    expect(streamOf(peer.received, 1)).toHaveLength(1);
    await s.close();
    await until(() => peer.received.some((m) => m.id === 2));
    expect(peer.received.find((m) => m.id === 2)!.result).toMatchObject({
      resultType: "complete",
      _meta: { [SUB]: 2 },
    });
    expect(peer.received.some((m) => m.id === 1)).toBe(false);
  });

  it("is no method of a 2025-11-25 connection", async () => {
    const peer = await rawPeer(cleanup, server());
    await peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "legacy", version: "1" },
    });
    const listen = await peer.request("subscriptions/listen", { notifications: { toolsListChanged: true } });
    expect(listen.error).toMatchObject({ code: -32601 });
  });
});
