// Two McpServer nodes sharing a real Redis: a subscriptions/listen stream on one hears the list changes and resource
// updates raised on the other (RedisOperationStore.changeFeed), and an input-required retry completes on either.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { redisForTests } from "../store/redis-server.js";
import { envelope, makeServer, rawPeer } from "./helpers.js";

const cleanup = closeAfterEach();
const redis = redisForTests();
const SUB = "io.modelcontextprotocol/subscriptionId";
const keys = [{ id: "cluster", secret: "one secret every node of the cluster shares!" }];

/** A node: an McpServer whose changes go through the shared Redis. */
async function node() {
  const store = redis.store({});
  const server = makeServer({ subscriptions: true, changes: store.changeFeed(), requestState: { keys } });
  server.tool("ask", {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: "name?", requestedSchema: { type: "object", properties: {} } });
    return `hi ${String(answer.content?.name)}`;
  });
  await store.changesReady();
  cleanup(() => server.close());
  return Object.assign(server, { feed: store.changeFeed() });
}

describe("two nodes behind one Redis", () => {
  it("a listen stream on node A hears tools/list_changed and resources/updated raised on node B, once each", async () => {
    const a = await node();
    let heardOnA = 0;
    a.feed.subscribe(() => heardOnA++);
    const b = await node();
    // B's own registration (its ask tool) is announced too: let A hear it before the stream opens.
    await until(() => heardOnA === 1);
    const peer = await rawPeer(cleanup, a);
    const id = peer.send("subscriptions/listen", {
      _meta: envelope(),
      notifications: { toolsListChanged: true, resourceSubscriptions: ["file:///shared"] },
    });
    const stream = () =>
      peer.received.filter(
        (m) => ((m.params as JsonObject | undefined)?._meta as JsonObject | undefined)?.[SUB] === id,
      );
    await until(() => stream().length === 1, 10_000, JSON.stringify(peer.received));
    b.tool("added-on-b", {}, () => "b");
    await b.resourceUpdated("file:///shared");
    await until(() => stream().length === 3, 10_000, JSON.stringify(peer.received));
    expect(
      stream()
        .slice(1)
        .map((m) => m.method)
        .sort(),
    ).toEqual(["notifications/resources/updated", "notifications/tools/list_changed"]);
    // A node does not hear its own publications twice.
    a.tool("added-on-a", {}, () => "a");
    await until(() => stream().length === 4, 10_000, JSON.stringify(peer.received));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream()).toHaveLength(4);
  });

  it("an input-required round answered on node B completes there", async () => {
    const [a, b] = [await node(), await node()];
    const meta = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } });
    const onA = await rawPeer(cleanup, a);
    const round = (await onA.request("tools/call", { name: "ask", arguments: {}, _meta: meta })).result as JsonObject;
    const onB = await rawPeer(cleanup, b);
    const done = await onB.request("tools/call", {
      name: "ask",
      arguments: {},
      inputResponses: { q0: { action: "accept", content: { name: "bea" } } },
      requestState: round.requestState as string,
      _meta: meta,
    });
    expect(done.result).toMatchObject({ resultType: "complete", content: [{ text: "hi bea" }] });
  });
});
