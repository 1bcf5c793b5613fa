// The client as task receiver: task-augmented sampling/createMessage and elicitation/create from the server.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { TaskReceiver } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { RELATED_TASK_META } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, kit } from "./helpers.js";

const cleanup = closeAfterEach();
const METHODS = ["sampling/createMessage", "elicitation/create"] as const;

/** A server session and a client that runs its sampling and elicitation handlers as tasks when `opted` in. */
async function pair(opted: boolean) {
  const receiver = new TaskReceiver({ pollIntervalMs: 20 });
  cleanup(() => receiver.close());
  const answer = gate();
  const base = { sampling: {}, elicitation: {} };
  const { client, server } = await kit.connectedPair({
    client: { capabilities: opted ? { ...base, ...receiver.capabilities(METHODS) } : base },
  });
  cleanup(() => client.close());
  const sampled: JsonObject[] = [];
  client.onRequest("sampling/createMessage", async (params) => {
    sampled.push(params!);
    await answer.promise;
    return { role: "assistant", content: { type: "text", text: "sampled" }, model: "test-model" };
  });
  client.onRequest("elicitation/create", async (_params, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    return { action: "cancel" };
  });
  receiver.install(client, METHODS);
  return { receiver, client, server, sampled, answer };
}

const sampling = {
  messages: [{ role: "user", content: { type: "text", text: "hi" } }],
  maxTokens: 10,
};

describe("client task receiver", () => {
  it("advertises the client capabilities exactly as the spec's table", () => {
    expect(new TaskReceiver().capabilities(METHODS)).toEqual({
      tasks: {
        list: {},
        cancel: {},
        requests: { sampling: { createMessage: {} }, elicitation: { create: {} } },
      },
    });
  });

  it("runs a task-augmented sampling/createMessage as a task the server polls and collects", async () => {
    const { server, sampled, answer, receiver } = await pair(true);
    const created = await server.request("sampling/createMessage", { ...sampling, task: { ttl: 5000 } });
    const task = created.task as JsonObject;
    expect(task).toMatchObject({ status: "working", ttl: 5000, pollInterval: 20 });
    expect(await server.request("tasks/get", { taskId: task.taskId })).toMatchObject({ status: "working" });
    expect(((await server.request("tasks/list", {})).tasks as JsonObject[]).map((t) => t.taskId)).toEqual([
      task.taskId,
    ]);
    answer.open();
    const result = await server.request("tasks/result", { taskId: task.taskId });
    expect(result).toEqual({
      role: "assistant",
      content: { type: "text", text: "sampled" },
      model: "test-model",
      _meta: { [RELATED_TASK_META]: { taskId: task.taskId } },
    });
    expect(sampled).toHaveLength(1);
    expect(receiver.stats.completed).toBe(1);
  });

  it("cancels a task-augmented elicitation: the handler's signal fires and the task stays cancelled", async () => {
    const { server } = await pair(true);
    const created = await server.request("elicitation/create", {
      message: "Name?",
      requestedSchema: { type: "object", properties: {} },
      task: {},
    });
    const taskId = (created.task as JsonObject).taskId;
    expect(await server.request("tasks/cancel", { taskId })).toMatchObject({ status: "cancelled" });
    expect(await server.request("tasks/get", { taskId })).toMatchObject({ status: "cancelled" });
  });

  it("a client that did not declare task support answers normally, ignoring `task`", async () => {
    const { server, answer, receiver } = await pair(false);
    answer.open();
    const result = await server.request("sampling/createMessage", { ...sampling, task: { ttl: 5000 } });
    expect(result).toMatchObject({ role: "assistant", model: "test-model" });
    expect(receiver.size).toBe(0);
  });
});
