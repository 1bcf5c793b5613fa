// Our client against @modelcontextprotocol/server-everything (child process, stdio): its task-required research tool.
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { TaskCancelledError, requestAsTask, requestOrTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { RELATED_TASK_META, type TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { clientWiring } from "./requestor-harness.js";

const everythingBin = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
const TOOL = "simulate-research-query";
// The research runs four one-second stages; the hang guard leaves room for a loaded machine.
const TASK_TIMEOUT_MS = 60_000;

type CallResult = { content: { type: string; text: string }[]; _meta?: JsonObject };

let client: ClientSession;
const elicitations: JsonObject[] = [];

beforeAll(async () => {
  client = new ClientSession({
    ...clientWiring,
    clientInfo: { name: "mcpgen-tasks-test", version: "1" },
    capabilities: { elicitation: {} },
  });
  client.onRequest("elicitation/create", (params) => {
    elicitations.push(params ?? {});
    return { action: "accept", content: { interpretation: "snake" } };
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [everythingBin, "stdio"],
    stderr: "ignore",
  });
  await client.connect(transport);
});

afterAll(() => client?.close());

function statuses(seen: TaskState[]): string[] {
  return seen.map((s) => s.status);
}

describe("server-everything: simulate-research-query (taskSupport required)", () => {
  it("advertises tasks for tools/call and the tool as requiring one", async () => {
    expect(client.serverCapabilities?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
    const list = await client.request("tools/list", undefined);
    const tool = (list.tools as JsonObject[]).find((t) => t.name === TOOL);
    expect(tool?.execution).toEqual({ taskSupport: "required" });
  });

  it(
    "completes through our task handle, with the status updates seen on the way",
    async () => {
      const handle = await requestAsTask<CallResult>(
        client,
        "tools/call",
        { name: TOOL, arguments: { topic: "tides" } },
        { task: { ttl: 60_000 } },
      );
      expect(handle.status).toBe("working");
      expect(handle.state.pollInterval).toBe(1000);
      const seen: TaskState[] = [];
      handle.onstatus((state) => seen.push(state));
      const result = await handle.result();
      expect(result.content[0].text).toContain("# Research Report: tides");
      expect(result._meta?.[RELATED_TASK_META]).toEqual({ taskId: handle.taskId });
      expect(statuses(seen)).toContain("working");
      expect(seen.map((s) => s.statusMessage)).toContain("Generating report...");
      expect(seen.at(-1)?.status).toBe("completed");
      expect(handle.status).toBe("completed");
    },
    TASK_TIMEOUT_MS,
  );

  it(
    "with ambiguous: true, goes through input_required and our elicitation handler answers (related-task _meta)",
    async () => {
      elicitations.length = 0;
      const handle = await requestAsTask<CallResult>(
        client,
        "tools/call",
        { name: TOOL, arguments: { topic: "python", ambiguous: true } },
        { task: {} },
      );
      const seen: TaskState[] = [];
      handle.onstatus((state) => seen.push(state));
      const result = await handle.result();
      expect(elicitations).toHaveLength(1);
      expect(elicitations[0]._meta).toEqual({ [RELATED_TASK_META]: { taskId: handle.taskId } });
      expect(result.content[0].text).toContain("# Research Report: python (snake)");
      expect(statuses(seen)).toContain("input_required");
      expect(seen.at(-1)?.status).toBe("completed");
    },
    TASK_TIMEOUT_MS,
  );

  it("cancels: tasks/cancel answers cancelled, the server keeps it cancelled, result() rejects", async () => {
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: TOOL, arguments: { topic: "x" } },
      {
        task: {},
      },
    );
    const result = handle.result();
    const state = await handle.cancel();
    expect(state).toMatchObject({ taskId: handle.taskId, status: "cancelled" });
    await expect(result).rejects.toBeInstanceOf(TaskCancelledError);
    const fresh = await client.request("tasks/get", { taskId: handle.taskId });
    expect(fresh.status).toBe("cancelled");
    // Cancelling again is refused as the spec says (-32602), and the connection goes on.
    await expect(handle.cancel()).rejects.toMatchObject({ code: -32602 });
    const listed = await client.request("tasks/list", undefined);
    expect((listed.tasks as JsonObject[]).map((t) => t.taskId)).toContain(handle.taskId);
  });

  it(
    "a plain call of the tool goes through a task automatically (requestOrTask)",
    async () => {
      const before = await client.request("tasks/list", undefined);
      const result = await requestOrTask<CallResult>(client, "tools/call", {
        name: TOOL,
        arguments: { topic: "moss" },
      });
      expect(result.content[0].text).toContain("# Research Report: moss");
      const after = await client.request("tasks/list", undefined);
      expect((after.tasks as JsonObject[]).length).toBe((before.tasks as JsonObject[]).length + 1);
      // Without the requestor the server refuses the plain call (its SDK reports the -32601 as a tool error).
      const refused = await client.request("tools/call", { name: TOOL, arguments: { topic: "moss" } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("requires task augmentation");
    },
    TASK_TIMEOUT_MS,
  );

  it("a plain call of a task-forbidden tool stays plain", async () => {
    const result = await requestOrTask<CallResult>(client, "tools/call", {
      name: "echo",
      arguments: { message: "hi" },
    });
    expect(result.content[0].text).toContain("hi");
  });
});
