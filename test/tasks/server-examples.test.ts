// The example servers serve tasks: slow_count is task-optional; tasks are created, listed, cancelled and completed there, core tasks for 2025-11-25 clients and the Tasks extension's for 2026-07-28 ones.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { createMcpServer } from "../../generated/server.js";
import { addExampleTools } from "../../examples/tools.js";
import { TaskReceiver } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { startExampleHttpServer } from "../../examples/http-server.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { kit, textOf } from "./helpers.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import { Client } from "../../generated/client.js";

const cleanup = closeAfterEach();

/** Lists, cancels and completes slow_count tasks through `client`. */
async function driveTasks(client: ClientSession): Promise<void> {
  expect(client.serverCapabilities?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const { tools } = await client.request("tools/list", {});
  const slow = (tools as JsonObject[]).find((t) => t.name === "slow_count");
  expect(slow?.execution).toEqual({ taskSupport: "optional" });

  const long = await client.request("tools/call", {
    name: "slow_count",
    arguments: { count: 1000, delayMs: 1000 },
    task: { ttl: 60_000 },
  });
  const longId = (long.task as JsonObject).taskId as string;
  expect(long._meta).toEqual({
    "io.modelcontextprotocol/model-immediate-response": "Counting to 1000; the result follows when the task completes.",
  });
  const short = await client.request("tools/call", {
    name: "slow_count",
    arguments: { count: 2, delayMs: 1 },
    task: {},
  });
  const shortId = (short.task as JsonObject).taskId as string;
  const listed = ((await client.request("tasks/list", {})).tasks as JsonObject[]).map((t) => t.taskId);
  expect(listed).toEqual([longId, shortId]);

  expect(await client.request("tasks/cancel", { taskId: longId })).toMatchObject({ status: "cancelled" });
  expect(await client.request("tasks/get", { taskId: longId })).toMatchObject({ status: "cancelled" });
  expect(textOf(await client.request("tasks/result", { taskId: shortId }))).toBe("done 2");
  expect(await client.request("tasks/get", { taskId: shortId })).toMatchObject({
    status: "completed",
    statusMessage: "step 2 of 2",
  });
}

describe("example servers", () => {
  it("the HTTP example serves slow_count as a task", async () => {
    const running = await startExampleHttpServer(0);
    cleanup(running.stop);
    const client = kit.clientSession();
    await client.connect(new StreamableHttpClientTransport({ url: running.url }));
    cleanup(() => client.close());
    await driveTasks(client);
  });

  it("the example tools as the stdio example registers them serve slow_count as a task", async () => {
    // The stdio example is this server on StdioServerTransport (its built script loads the installed package).
    const tasks = new TaskReceiver();
    const server = createMcpServer({ serverInfo: { name: "stdio-like", version: "1" }, logging: true, tasks });
    addExampleTools(server);
    cleanup(() => tasks.close());
    const [clientEnd, serverEnd] = createInMemoryPair();
    await server.connect(serverEnd);
    const client = kit.clientSession();
    await client.connect(clientEnd);
    cleanup(() => client.close());
    await driveTasks(client);
  });

  it("the HTTP example serves slow_count to a 2026-07-28 client as an extension task when it takes a second or more", async () => {
    const running = await startExampleHttpServer(0);
    cleanup(running.stop);
    const client = await Client.connect(new StreamableHttpClientTransport({ url: running.url }), {
      clientInfo: { name: "example-test", version: "1" },
    });
    cleanup(() => client.peer.close());
    expect(client.peer.era).toBe("modern");
    // Short: answered directly, progress and all.
    const steps: number[] = [];
    const short = await client.callTool(
      { name: "slow_count", arguments: { count: 3, delayMs: 10 } },
      { onProgress: ({ progress }) => void steps.push(progress) },
    );
    expect(textOf(short as unknown as JsonObject)).toBe("done 3");
    expect(steps).toEqual([1, 2, 3]);
    // Long: the server goes on as a task; the handle shows it, a plain call follows it to the same result.
    const handle = await client.callTool(
      { name: "slow_count", arguments: { count: 10, delayMs: 110 } },
      { task: {}, minPollIntervalMs: 20, pollIntervalMs: 50 },
    );
    expect(handle.taskId).not.toBe("");
    expect(textOf((await handle.result()) as unknown as JsonObject)).toBe("done 10");
    expect(handle.status).toBe("completed");
    const plain = await client.callTool(
      { name: "slow_count", arguments: { count: 10, delayMs: 110 } },
      { minPollIntervalMs: 20 },
    );
    expect(textOf(plain as unknown as JsonObject)).toBe("done 10");
  });
});
