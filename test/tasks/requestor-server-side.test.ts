// The other direction: a server sends sampling/createMessage or elicitation/create as a task to a task-capable client.
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as SdkInMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { CapabilityError } from "../../runtime/rpc/errors.js";
import { ServerSession } from "../../runtime/mcp/lifecycle.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { requestAsTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { RELATED_TASK_META } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { ScriptedReceiver, connectToReceiver, serverWiring } from "./requestor-harness.js";

const onClose = closeAfterEach();

const SAMPLING = { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 };
const FAST = { minPollIntervalMs: 1 };

describe("server -> client tasks, scripted client receiver", () => {
  const methods: { method: string; capability: JsonObject; params: JsonObject; answer: JsonObject }[] = [
    {
      method: "sampling/createMessage",
      capability: { sampling: {}, tasks: { requests: { sampling: { createMessage: {} } } } },
      params: SAMPLING,
      answer: { role: "assistant", model: "m", content: { type: "text", text: "hello" } },
    },
    {
      method: "elicitation/create",
      capability: { elicitation: {}, tasks: { requests: { elicitation: { create: {} } } } },
      params: { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
      answer: { action: "accept", content: { name: "Ada" } },
    },
  ];
  for (const m of methods) {
    it(`requestAsTask(serverSession, "${m.method}") works as it does from the client`, async () => {
      const receiver = new ScriptedReceiver();
      receiver.onGet = (task) => receiver.complete(task, m.answer);
      const { client, server } = await connectToReceiver(new ScriptedReceiver(), {
        client: { capabilities: m.capability },
      });
      onClose(() => server.close());
      onClose(() => client.close());
      receiver.install(client, m.method);
      const handle = await requestAsTask<JsonObject>(server, m.method, m.params, { task: { ttl: 1_000 }, ...FAST });
      expect(receiver.received[0]).toMatchObject({ ...m.params, task: { ttl: 1_000 } });
      const result = await handle.result();
      expect(result).toMatchObject(m.answer);
      expect(receiver.calls).toMatchObject({ create: 1, result: 1 });
    });
  }

  it("is refused locally when the client did not declare tasks.requests.sampling.createMessage", async () => {
    const { client, server } = await connectToReceiver(new ScriptedReceiver(), {
      client: { capabilities: { sampling: {}, tasks: { requests: { elicitation: { create: {} } } } } },
    });
    onClose(() => server.close());
    onClose(() => client.close());
    const refusal = requestAsTask(server, "sampling/createMessage", SAMPLING, { task: {} });
    await expect(refusal).rejects.toBeInstanceOf(CapabilityError);
    await expect(refusal).rejects.toThrow(/client does not support tasks\.requests\.sampling\.createMessage/);
  });
});

/** Our transport interface over one end of the SDK's in-memory pair. */
function overSdkTransport(end: SdkInMemoryTransport): Transport {
  const transport: Transport = {
    start: () => end.start(),
    send: (message: JsonRpcMessage) => end.send(message as Parameters<SdkInMemoryTransport["send"]>[0]),
    close: () => end.close(),
  };
  end.onmessage = (message) => transport.onmessage?.(message);
  end.onclose = () => transport.onclose?.();
  end.onerror = (error) => transport.onerror?.(error);
  return transport;
}

describe("server -> official SDK client (its experimental task store) ", () => {
  async function connectSdkClient() {
    const taskStore = new InMemoryTaskStore();
    const sdk = new SdkClient(
      { name: "sdk-client", version: "1.0.0" },
      {
        capabilities: {
          sampling: {},
          elicitation: {},
          tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
        },
        taskStore,
      },
    );
    sdk.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      if (request.params.task === undefined) throw new Error("expected a task-augmented request");
      const task = await extra.taskStore!.createTask({ ttl: request.params.task.ttl ?? 10_000, pollInterval: 5 });
      setTimeout(() => {
        void extra.taskStore!.storeTaskResult(task.taskId, "completed", {
          role: "assistant",
          model: "sdk-model",
          content: { type: "text", text: "sampled" },
        });
      }, 20);
      return { task };
    });
    sdk.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const task = await extra.taskStore!.createTask({ ttl: 10_000, pollInterval: 5 });
      void extra.taskStore!.updateTaskStatus(task.taskId, "working", "asking the user");
      return { task };
    });
    const server = new ServerSession({ ...serverWiring, serverInfo: { name: "our-server", version: "1" } });
    const [ours, theirs] = SdkInMemoryTransport.createLinkedPair();
    await server.connect(overSdkTransport(ours));
    await sdk.connect(theirs);
    onClose(() => sdk.close());
    onClose(() => server.close());
    return { server, taskStore };
  }

  it("creates a sampling task on the SDK client, polls it and gets the result", async () => {
    const { server } = await connectSdkClient();
    const handle = await requestAsTask<JsonObject>(server, "sampling/createMessage", SAMPLING, {
      task: { ttl: 5_000 },
      ...FAST,
    });
    expect(handle.created.task).toMatchObject({ status: "working", ttl: 5_000, pollInterval: 5 });
    const result = await handle.result();
    expect(result).toMatchObject({ model: "sdk-model", content: { type: "text", text: "sampled" } });
    expect((result._meta as JsonObject)[RELATED_TASK_META]).toEqual({ taskId: handle.taskId });
  });

  it("cancels an elicitation task on the SDK client", async () => {
    const { server, taskStore } = await connectSdkClient();
    const handle = await requestAsTask<JsonObject>(
      server,
      "elicitation/create",
      { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
      { task: {}, ...FAST },
    );
    expect(await handle.cancel()).toMatchObject({ taskId: handle.taskId, status: "cancelled" });
    expect((await taskStore.getTask(handle.taskId))?.status).toBe("cancelled");
  });
});
