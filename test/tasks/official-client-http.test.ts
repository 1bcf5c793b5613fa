// The official SDK's client (experimental tasks) on our server over Streamable HTTP: create, poll, result, list, cancel, input.
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, makeServer, serveOverHttp, textOf, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

/** Our TaskServer with task tools, behind our Streamable HTTP transport. */
async function ourServer(): Promise<{ url: string; server: TaskServer; release: () => void }> {
  const hold = gate();
  const server = makeServer({ tasks: { pollIntervalMs: 10 } });
  server.tool(
    "research",
    { taskSupport: "required", inputSchema: { type: "object", properties: { topic: { type: "string" } } } },
    async ({ topic }, ctx) => {
      ctx.task?.status(`reading about ${String(topic)}`);
      await ctx.progress(1, 2);
      return `findings on ${String(topic)}`;
    },
  );
  server.tool("held", { taskSupport: "optional" }, async (_args, ctx) => {
    await new Promise<void>((resolve) => {
      void hold.promise.then(resolve);
      ctx.signal.addEventListener("abort", () => resolve());
    });
    return "released";
  });
  server.tool("ask", { taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } } },
    });
    return `hello ${String(answer.content?.name)}`;
  });
  const url = await serveOverHttp(cleanup, server);
  return { url, server, release: hold.open };
}

async function sdkClient(url: string, capabilities: Record<string, unknown> = {}): Promise<SdkClient> {
  const client = new SdkClient({ name: "official-sdk-client", version: "1.0.0" }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanup(() => client.close());
  return client;
}

describe("official SDK client -> our task receiver", () => {
  it("sees the tasks capability and taskSupport, and runs a required-task tool through callToolStream", async () => {
    const { url } = await ourServer();
    const client = await sdkClient(url);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "research")?.execution).toEqual({ taskSupport: "required" });
    const kinds: string[] = [];
    let final: unknown;
    for await (const message of client.experimental.tasks.callToolStream({
      name: "research",
      arguments: { topic: "tides" },
    })) {
      kinds.push(message.type);
      if (message.type === "result") final = message.result;
      if (message.type === "error") throw message.error;
    }
    expect(kinds[0]).toBe("taskCreated");
    expect(kinds.at(-1)).toBe("result");
    expect(textOf(final)).toBe("findings on tides");
    // A plain callTool of a task-required tool: the official client refuses it itself.
    await expect(client.callTool({ name: "research", arguments: { topic: "x" } })).rejects.toThrow();
  });

  it("creates, polls, lists, cancels and gets results of tasks", async () => {
    const { url, release } = await ourServer();
    const client = await sdkClient(url);
    const created = await client.request(
      { method: "tools/call", params: { name: "held", arguments: {}, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(created.task).toMatchObject({ status: "working", ttl: 60_000, pollInterval: 10 });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: "working" });
    const other = await client.request(
      { method: "tools/call", params: { name: "held", arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toEqual([taskId, other.task.taskId]);
    const cancelled = await client.experimental.tasks.cancelTask(other.task.taskId);
    expect(cancelled).toMatchObject({ taskId: other.task.taskId, status: "cancelled" });
    await expect(client.experimental.tasks.cancelTask(other.task.taskId)).rejects.toMatchObject({ code: -32602 });
    release();
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(textOf(result)).toBe("released");
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: "completed" });
  });

  it("answers an elicitation the task asks for through tasks/result (input_required)", async () => {
    const { url } = await ourServer();
    const client = await sdkClient(url, { elicitation: {} });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params._meta);
      return { action: "accept", content: { name: "Ada" } };
    });
    let final: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "ask", arguments: {} },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === "result") final = message.result;
      if (message.type === "error") throw message.error;
    }
    expect(textOf(final)).toBe("hello Ada");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ "io.modelcontextprotocol/related-task": { taskId: expect.any(String) } });
  });
});
