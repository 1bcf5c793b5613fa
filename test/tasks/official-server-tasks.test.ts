// Interop: our client creates, polls, gets results of, lists and cancels tasks on a server written with the official SDK.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { TaskCancelledError, requestAsTask, requestOrTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { RELATED_TASK_META, type TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { clientWiring } from "./requestor-harness.js";

const fixture = fileURLToPath(new URL("./official-server-fixture.mjs", import.meta.url));

type CallResult = { content: { type: string; text: string }[]; isError?: boolean; _meta?: JsonObject };

let client: ClientSession;

beforeAll(async () => {
  client = new ClientSession({ ...clientWiring, clientInfo: { name: "mcpgen-tasks-test", version: "1" } });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [fixture], cwd: process.cwd(), stderr: "ignore" }),
  );
});

afterAll(() => client?.close());

const count = (steps: number, stepMs: number, fail?: boolean): JsonObject => ({
  name: "count",
  arguments: fail === undefined ? { steps, stepMs } : { steps, stepMs, fail },
});

describe("official SDK server (experimental tasks) <- our client", () => {
  it("creates a task, polls it at the server's pollInterval, and gets the result with related-task _meta", async () => {
    const handle = await requestAsTask<CallResult>(client, "tools/call", count(3, 20), {
      task: { ttl: 30_000 },
      minPollIntervalMs: 1,
    });
    expect(handle.created.task).toMatchObject({ taskId: handle.taskId, status: "working", pollInterval: 25 });
    expect(handle.pollInterval).toBe(25);
    const seen: TaskState[] = [];
    handle.onstatus((state) => seen.push(state));
    const result = await handle.result();
    expect(result.content).toEqual([{ type: "text", text: "counted 3" }]);
    expect(result._meta?.[RELATED_TASK_META]).toEqual({ taskId: handle.taskId });
    expect(seen.at(-1)?.status).toBe("completed");
    expect(seen.some((s) => /^step \d of 3$/.test(s.statusMessage ?? ""))).toBe(true);
  });

  it("a failed task (isError result) resolves with that result", async () => {
    const handle = await requestAsTask<CallResult>(client, "tools/call", count(1, 5, true), {
      task: {},
      minPollIntervalMs: 1,
    });
    const result = await handle.result();
    expect(result.isError).toBe(true);
    expect(handle.status).toBe("failed");
  });

  it("refresh() reads the task with tasks/get", async () => {
    const handle = await requestAsTask<CallResult>(client, "tools/call", count(50, 20), { task: {} });
    const state = await handle.refresh();
    expect(state).toMatchObject({ taskId: handle.taskId, status: "working" });
    await handle.cancel();
  });

  it("cancels: the server answers cancelled and keeps it; result() rejects with TaskCancelledError", async () => {
    const handle = await requestAsTask<CallResult>(client, "tools/call", count(50, 20), {
      task: {},
      minPollIntervalMs: 1,
    });
    const result = handle.result();
    expect(await handle.cancel()).toMatchObject({ taskId: handle.taskId, status: "cancelled" });
    await expect(result).rejects.toBeInstanceOf(TaskCancelledError);
    expect((await client.request("tasks/get", { taskId: handle.taskId })).status).toBe("cancelled");
    await expect(handle.cancel()).rejects.toMatchObject({ code: -32602 });
  });

  it("lists tasks across pages (the SDK's store pages by 10)", async () => {
    const created: string[] = [];
    for (let i = 0; i < 12; i++) {
      const handle = await requestAsTask(client, "tools/call", count(1, 1), { task: {} });
      created.push(handle.taskId);
    }
    const listed: string[] = [];
    let cursor: string | undefined = undefined;
    let pages = 0;
    do {
      const page: JsonObject = await client.request("tasks/list", cursor === undefined ? undefined : { cursor });
      listed.push(...(page.tasks as JsonObject[]).map((t) => t.taskId as string));
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(1);
    expect(listed).toEqual(expect.arrayContaining(created));
  });

  it("requestOrTask runs the task-required tool as a task and leaves the plain tool plain", async () => {
    const result = await requestOrTask<CallResult>(client, "tools/call", count(2, 5), { minPollIntervalMs: 1 });
    expect(result.content).toEqual([{ type: "text", text: "counted 2" }]);
    const echoed = await requestOrTask<CallResult>(client, "tools/call", { name: "echo", arguments: { text: "hi" } });
    expect(echoed.content).toEqual([{ type: "text", text: "hi" }]);
  });
});
