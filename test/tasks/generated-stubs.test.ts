// The generated stubs over the task requestor: a call with `task` gives a handle, a plain call the result (as a task
// when the tool requires one), and tasks/result the original request's result.
import { describe, expect, it } from "vitest";
import { Client, Server } from "../../generated/index.js";
import { TaskHandle } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { ScriptedReceiver, connectToReceiver } from "./requestor-harness.js";

const onClose = closeAfterEach();

async function stubOver(receiver: ScriptedReceiver) {
  const pair = await connectToReceiver(receiver);
  onClose(() => pair.server.close());
  onClose(() => pair.client.close());
  return new Client(pair.client);
}

const done = { content: [{ type: "text", text: "counted" }] };

describe("Client.callTool, generated for a task-augmentable request", () => {
  it("with options.task: sends params.task and resolves with a TaskHandle whose result is the tool's", async () => {
    const receiver = new ScriptedReceiver();
    const client = await stubOver(receiver);
    const handle = await client.callTool({ name: "slow_count" }, { task: { ttl: 30_000 } });
    expect(handle).toBeInstanceOf(TaskHandle);
    expect(receiver.received).toEqual([{ name: "slow_count", task: { ttl: 30_000 } }]);
    receiver.complete(receiver.only, done);
    expect(await handle.result()).toMatchObject(done);
    // tasks/result typed by the method the task ran.
    expect(await client.getTaskPayload<"tools/call">({ taskId: handle.taskId })).toMatchObject(done);
  });

  it("without: a plain call for a tool that does not require a task, a task run to its end for one that does", async () => {
    const receiver = new ScriptedReceiver();
    receiver.tools = [
      { name: "quick", taskSupport: "optional" },
      { name: "long", taskSupport: "required" },
    ];
    receiver.onCreate = (task) => queueMicrotask(() => receiver.complete(task, done));
    const client = await stubOver(receiver);
    expect(await client.callTool({ name: "quick" })).toEqual({ content: [{ type: "text", text: "plain quick" }] });
    expect(await client.callTool({ name: "long" })).toMatchObject(done);
    expect(receiver.calls).toMatchObject({ plain: 1, create: 1 });
  });
});

describe("Server.createMessage, generated for a request the client may run as a task", () => {
  it("with options.task: a handle over the client's task", async () => {
    const receiver = new ScriptedReceiver();
    const pair = await connectToReceiver(receiver, {
      client: { capabilities: { sampling: {}, tasks: { requests: { sampling: { createMessage: {} } } } } },
    });
    onClose(() => pair.server.close());
    onClose(() => pair.client.close());
    receiver.install(pair.client, "sampling/createMessage");
    const server = new Server(pair.server);
    const handle = await server.createMessage({ messages: [], maxTokens: 5 }, { task: {} });
    const sampled = { role: "assistant", content: { type: "text", text: "hi" }, model: "m" };
    receiver.complete(receiver.only, sampled);
    expect(await handle.result()).toMatchObject(sampled);
  });
});
