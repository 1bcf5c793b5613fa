// Responses to task-augmented requests, checked through the generated tables: a CreateTaskResult is the answer to
// a request sent with `task` that the schema lets be task-augmented, and to nothing else.
import { describe, expect, it } from "vitest";
import { clientToServer, serverToClient } from "../../generated/dispatch.js";
import type { DispatchTable } from "../../runtime/rpc/dispatch.js";
import { InvalidResultError } from "../../runtime/rpc/errors.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { connectedPair } from "../kit/mcp-sessions.js";

const onClose = closeAfterEach();

const created: JsonObject = {
  task: {
    taskId: "t-1",
    status: "working",
    createdAt: "2025-11-25T00:00:00Z",
    lastUpdatedAt: "2025-11-25T00:00:00Z",
    ttl: 60_000,
    pollInterval: 500,
  },
};
const toolResult: JsonObject = { content: [{ type: "text", text: "done" }] };
const sampled: JsonObject = { role: "assistant", content: { type: "text", text: "hi" }, model: "m" };

/** A connected pair whose server answers tools/call and tools/list, and whose client answers sampling, with `answer`. */
async function pair(answer: () => JsonObject) {
  const connected = await connectedPair({
    server: { capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } } },
    client: { capabilities: { sampling: {}, tasks: { requests: { sampling: { createMessage: {} } } } } },
    setup: (server) => {
      server.onRequest("tools/call", answer);
      server.onRequest("tools/list", answer);
    },
  });
  connected.client.onRequest("sampling/createMessage", answer);
  onClose(() => connected.server.close());
  onClose(() => connected.client.close());
  return connected;
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );

describe("the generated tables say which requests may be answered by a task", () => {
  it("tools/call (client to server), sampling/createMessage and elicitation/create (server to client)", () => {
    const tasked = (table: DispatchTable) =>
      Object.entries(table)
        .filter(([, spec]) => spec.taskCapability !== undefined && typeof spec.isTaskResult === "function")
        .map(([method, spec]) => [method, spec.taskCapability]);
    expect(tasked(clientToServer)).toEqual([["tools/call", "tasks.requests.tools.call"]]);
    expect(tasked(serverToClient)).toEqual([
      ["elicitation/create", "tasks.requests.elicitation.create"],
      ["sampling/createMessage", "tasks.requests.sampling.createMessage"],
    ]);
  });
});

describe("a response to a task-augmented request", () => {
  it("our client accepts a CreateTaskResult for tools/call sent with `task`", async () => {
    const { client } = await pair(() => created);
    expect(await client.request("tools/call", { name: "slow", task: { ttl: 60_000 } })).toEqual(created);
  });

  it("our server accepts a CreateTaskResult for sampling/createMessage sent with `task`", async () => {
    const { server } = await pair(() => created);
    const params = { messages: [], maxTokens: 10, task: {} };
    expect(await server.request("sampling/createMessage", params)).toEqual(created);
  });

  it("still accepts the method's own result: a receiver may run the request plainly, ignoring `task`", async () => {
    const { client } = await pair(() => toolResult);
    expect(await client.request("tools/call", { name: "slow", task: {} })).toEqual(toolResult);
    const { server } = await pair(() => sampled);
    expect(await server.request("sampling/createMessage", { messages: [], maxTokens: 10, task: {} })).toEqual(sampled);
  });

  it("rejects a malformed task with InvalidResultError -32003 and the CreateTaskResult issues", async () => {
    const broken = { task: { taskId: "t-1" } };
    const { client } = await pair(() => broken);
    const error = await rejection(client.request("tools/call", { name: "slow", task: {} }));
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).code).toBe(-32003);
    const pointers = (error as InvalidResultError).issues.map((i) => i.pointer);
    expect(pointers.length).toBeGreaterThan(0);
    expect(pointers.every((p) => p.startsWith("/task"))).toBe(true);
  });
});

describe("a CreateTaskResult where no task was asked for", () => {
  it("tools/call without `task`: InvalidResultError -32003, as before", async () => {
    const { client } = await pair(() => created);
    const error = await rejection(client.request("tools/call", { name: "slow" }));
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).code).toBe(-32003);
    expect((error as InvalidResultError).issues.map((i) => i.pointer)).toContain("");
  });

  it("tools/list, which cannot be task-augmented, is checked as before even with `task` in its params", async () => {
    const { client } = await pair(() => created);
    const error = await rejection(client.request("tools/list", { task: { ttl: 1 } }));
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).code).toBe(-32003);
  });
});
