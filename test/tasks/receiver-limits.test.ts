// Task retention and limits: ttl from creation frees the task and its store record; per-requestor and total bounds.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import { TaskReceiver, type TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { clientAs, heldServer, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

function server(tasks: TaskReceiverOptions | TaskReceiver): { server: TaskServer; release: () => void } {
  return heldServer(cleanup, tasks);
}

function client(s: TaskServer, principal?: string): Promise<ClientSession> {
  return clientAs(cleanup, s, principal);
}

async function createTask(c: ClientSession, args: JsonObject = {}, ttl?: number): Promise<string> {
  const reply = await c.request("tools/call", {
    name: "wait",
    arguments: args,
    task: ttl === undefined ? {} : { ttl },
  });
  return (reply.task as JsonObject).taskId as string;
}

describe("ttl", () => {
  it("frees a finished task and its store record once its ttl from creation has passed", async () => {
    const store = new MemoryOperationStore();
    const { server: s } = server({ store });
    const c = await client(s, "alice");
    const kept = await createTask(c, { quick: true }, 60_000);
    const short = await createTask(c, { quick: true }, 50);
    expect(store.count()).toBe(2);
    await c.request("tasks/result", { taskId: kept });
    // Each record holds the task's state.
    await until(() => s.tasks.stats.completed === 2);
    await until(() => store.count() === 1, 5000, "the short task's record was not deleted");
    expect(s.tasks.size).toBe(1);
    expect(s.tasks.stats.expired).toBe(1);
    await expect(c.request("tasks/get", { taskId: short })).rejects.toMatchObject({ code: -32602 });
    expect(await c.request("tasks/get", { taskId: kept })).toMatchObject({ status: "completed" });
  });

  it("ends a task still running when its ttl passes: its handler is aborted and waiting tasks/result calls get -32602", async () => {
    const store = new MemoryOperationStore();
    const { server: s } = server({ store });
    const c = await client(s, "alice");
    const taskId = await createTask(c, {}, 80);
    const waiting = c.request("tasks/result", { taskId });
    await expect(waiting).rejects.toMatchObject({ code: -32602 });
    expect(store.count()).toBe(0);
    expect(s.tasks.size).toBe(0);
  });

  it("keeps the record's state in step with the task", async () => {
    const store = new MemoryOperationStore();
    const { server: s, release } = server({ store });
    const c = await client(s, "alice");
    const taskId = await createTask(c);
    const [record] = [...(store as unknown as { entries: Map<string, { operation: JsonObject }> }).entries.values()];
    expect(record.operation).toMatchObject({ kind: "task", principal: "alice", status: "processing" });
    expect(record.operation.task).toMatchObject({ taskId, status: "working" });
    release();
    await c.request("tasks/result", { taskId });
    expect(record.operation).toMatchObject({ status: "completed", task: { taskId, status: "completed" } });
  });
});

describe("limits", () => {
  it("refuses a requestor's task past maxActivePerRequestor with -32000, others go on; an ended task frees a slot", async () => {
    const { server: s, release } = server({ maxActivePerRequestor: 2 });
    const alice = await client(s, "alice");
    const bob = await client(s, "bob");
    const first = await createTask(alice);
    await createTask(alice);
    await expect(createTask(alice)).rejects.toMatchObject({ code: -32000, data: { maxActivePerRequestor: 2 } });
    await createTask(bob);
    expect(s.tasks.stats.refused).toBe(1);
    await alice.request("tasks/cancel", { taskId: first });
    await createTask(alice);
    release();
  });

  it("frees a requestor's oldest finished tasks past maxKeptPerRequestor", async () => {
    const { server: s } = server({ maxKeptPerRequestor: 2 });
    const alice = await client(s, "alice");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await createTask(alice, { quick: true }));
      await alice.request("tasks/result", { taskId: ids[i] });
    }
    await until(() => s.tasks.size === 2);
    expect(s.tasks.stats.evicted).toBe(2);
    const listed = ((await alice.request("tasks/list", {})).tasks as JsonObject[]).map((t) => t.taskId);
    expect(listed).toEqual(ids.slice(2));
  });

  it("refuses creation past maxTasks held in all", async () => {
    const { server: s } = server({ maxTasks: 2 });
    const alice = await client(s, "alice");
    const bob = await client(s, "bob");
    await createTask(alice);
    await createTask(bob);
    await expect(createTask(bob)).rejects.toMatchObject({ code: -32000, data: { maxTasks: 2 } });
  });

  it.each([[{ maxTtlMs: -1 }], [{ pageSize: 1.5 }], [{ maxActivePerRequestor: -3 }], [{ pollIntervalMs: Number.NaN }]])(
    "refuses a bad option %j",
    (options) => {
      expect(() => new TaskReceiver(options)).toThrow(RangeError);
    },
  );

  it("an unlimited ttl only when the app allows it (maxTtlMs: null)", async () => {
    const { server: s } = server({ maxTtlMs: null, defaultTtlMs: null });
    const c = await client(s, "alice");
    const reply = await c.request("tools/call", { name: "wait", arguments: { quick: true }, task: {} });
    expect((reply.task as JsonObject).ttl).toBeNull();
    const { server: capped } = server({});
    const d = await client(capped, "alice");
    const other = await d.request("tools/call", { name: "wait", arguments: { quick: true }, task: {} });
    expect((other.task as JsonObject).ttl).toBe(3_600_000);
  });
});
