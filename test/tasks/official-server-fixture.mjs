// Interop fixture: a stdio server written with the official SDK's experimental tasks (task store, task tools).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: "sdk-task-fixture", version: "1.0.0" },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Steps through `steps` status messages `stepMs` apart, then stores the result (or an isError one when `fail`). */
async function work(store, taskId, { steps, stepMs, fail }) {
  for (let i = 1; i <= steps; i++) {
    const task = await store.getTask(taskId);
    if (task === null || task.status === "cancelled") return;
    await store.updateTaskStatus(taskId, "working", `step ${i} of ${steps}`);
    await sleep(stepMs);
  }
  const task = await store.getTask(taskId);
  if (task === null || task.status === "cancelled") return;
  if (fail)
    await store.storeTaskResult(taskId, "failed", { content: [{ type: "text", text: "it broke" }], isError: true });
  else await store.storeTaskResult(taskId, "completed", { content: [{ type: "text", text: `counted ${steps}` }] });
}

server.experimental.tasks.registerToolTask(
  "count",
  {
    description: "Counts in steps, as a task",
    inputSchema: { steps: z.number().int(), stepMs: z.number().int(), fail: z.boolean().optional() },
    execution: { taskSupport: "required" },
  },
  {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 25 });
      work(extra.taskStore, task.taskId, { steps: args.steps, stepMs: args.stepMs, fail: args.fail === true }).catch(
        (error) => console.error(error),
      );
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);

server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: "text", text }],
}));

await server.connect(new StdioServerTransport());
