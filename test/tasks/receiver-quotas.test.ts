// Per-client task quotas (maxTasksPerPrincipal) and tasks freed with the session that alone can reach them.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import { MemoryOperationStore } from "../../runtime/store/memory.js";
import {
  DEFAULT_MAX_TASKS_PER_PRINCIPAL,
  TaskReceiver,
  type TaskReceiverOptions,
} from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import type { InboundInfo } from "../../runtime/rpc/transport.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { connectClient, gate, heldServer, kit, makeServer, serveOverHttp, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

function server(tasks: TaskReceiverOptions): { server: TaskServer; release: () => void } {
  return heldServer(cleanup, tasks);
}

/** A client connected in memory; the server sees `info` (principal, client address) with each message. */
async function client(s: TaskServer, info: InboundInfo = {}): Promise<ClientSession> {
  const { client: c } = await connectClient(s, { info });
  cleanup(() => c.close());
  return c;
}

async function createTask(c: ClientSession, args: JsonObject = {}): Promise<string> {
  const reply = await c.request("tools/call", { name: "wait", arguments: args, task: {} });
  return (reply.task as JsonObject).taskId as string;
}

/** A task that has ended (its result fetched), so it is kept for its result only. */
async function finishedTask(c: ClientSession): Promise<string> {
  const taskId = await createTask(c, { quick: true });
  await c.request("tasks/result", { taskId });
  return taskId;
}

describe("maxTasksPerPrincipal", () => {
  it("refuses a greedy principal at its quota with -32000 naming it, on any of its connections; another principal still gets a task", async () => {
    const { server: s, release } = server({ maxTasksPerPrincipal: 3, maxTasks: 10 });
    const alice = await client(s, { principal: "alice" });
    const aliceAgain = await client(s, { principal: "alice" });
    const first = await createTask(alice);
    await createTask(alice);
    await createTask(aliceAgain);
    await expect(createTask(aliceAgain)).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("maxTasksPerPrincipal 3"),
      data: { maxTasksPerPrincipal: 3 },
    });
    expect(s.tasks.stats.refused).toBe(1);
    const bob = await client(s, { principal: "bob" });
    await createTask(bob);
    // A task of hers that ended is what makes room: the new one frees it.
    await alice.request("tasks/cancel", { taskId: first });
    await createTask(alice);
    expect(s.tasks.stats.evicted).toBe(1);
    await expect(alice.request("tasks/get", { taskId: first })).rejects.toMatchObject({ code: -32602 });
    release();
  });

  it("counts a client without principal by its address, across its sessions; another address still gets a task", async () => {
    const { server: s, release } = server({ maxTasksPerPrincipal: 3, maxTasks: 10 });
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await client(s, { clientAddress: "192.0.2.7", sessionId: `s${i}` }));
    for (const c of sessions) await createTask(c);
    const fourth = await client(s, { clientAddress: "192.0.2.7", sessionId: "s3" });
    await expect(createTask(fourth)).rejects.toMatchObject({ code: -32000, data: { maxTasksPerPrincipal: 3 } });
    // Same /64, same client.
    const v6 = await client(s, { clientAddress: "2001:db8::1" });
    for (let i = 0; i < 3; i++) await createTask(v6);
    const v6Neighbour = await client(s, { clientAddress: "2001:db8::2" });
    await expect(createTask(v6Neighbour)).rejects.toMatchObject({ code: -32000 });
    const other = await client(s, { clientAddress: "192.0.2.8" });
    await createTask(other);
    release();
  });

  it("a client flooding instant tasks from many sessions frees its own finished ones and never fills the server", async () => {
    // Ten sessions of one address, each making instant tasks: without the quota they filled maxTasks for the ttl.
    const { server: s, release } = server({ maxTasksPerPrincipal: 3, maxTasks: 5 });
    let made = 0;
    for (let i = 0; i < 10; i++) {
      const c = await client(s, { clientAddress: "192.0.2.7", sessionId: `s${i}` });
      await finishedTask(c);
      await finishedTask(c);
      made += 2;
    }
    expect(s.tasks.size).toBe(3);
    expect(s.tasks.stats.evicted).toBe(made - 3);
    expect(s.tasks.stats.refused).toBe(0);
    const other = await client(s, { clientAddress: "192.0.2.8" });
    await createTask(other);
    await createTask(other);
    release();
  });

  it(`defaults to ${DEFAULT_MAX_TASKS_PER_PRINCIPAL}; 0 is no limit; a bad value is refused`, async () => {
    const { server: s, release } = server({ maxActivePerRequestor: 2000 });
    const alice = await client(s, { principal: "alice" });
    for (let i = 0; i < DEFAULT_MAX_TASKS_PER_PRINCIPAL; i++) await createTask(alice);
    await expect(createTask(alice)).rejects.toMatchObject({
      data: { maxTasksPerPrincipal: DEFAULT_MAX_TASKS_PER_PRINCIPAL },
    });
    release();
    const { server: unlimited } = server({ maxTasksPerPrincipal: 0, maxTasks: 5 });
    const bob = await client(unlimited, { principal: "bob" });
    for (let i = 0; i < 5; i++) await createTask(bob, { quick: true });
    // Only the global cap, the last line, stops it then.
    await expect(createTask(bob)).rejects.toMatchObject({ code: -32000, data: { maxTasks: 5 } });
    expect(() => new TaskReceiver({ maxTasksPerPrincipal: -1 })).toThrow(RangeError);
    expect(() => new TaskReceiver({ maxTasksPerPrincipal: 0.5 })).toThrow(RangeError);
  });
});

describe("a session's own tasks end with it", () => {
  it("closing a connection without principal cancels its running tasks and deletes their records; a principal's tasks stay", async () => {
    const store = new MemoryOperationStore();
    const started = gate();
    const aborted = gate();
    const s = makeServer({ tasks: { store } });
    s.tool("wait", { taskSupport: "optional" }, async (args, ctx) => {
      if ((args as JsonObject).quick === true) return "done";
      started.open();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted.open();
      return "aborted";
    });
    cleanup(() => s.close());
    cleanup(() => s.tasks.close());
    const anonymous = await client(s);
    const alice = await client(s, { principal: "alice" });
    await createTask(anonymous);
    await finishedTask(anonymous);
    await started.promise;
    const hers = await createTask(alice, { quick: true });
    expect(store.count()).toBe(3);
    await anonymous.close();
    await until(() => store.count() === 1, 5000, "the closed session's task records were not deleted");
    // Its handler was told: the task was cancelled, not left running for nobody.
    await aborted.promise;
    expect(s.tasks.size).toBe(1);
    expect(s.tasks.stats.cancelled).toBe(1);
    expect(await alice.request("tasks/get", { taskId: hers })).toMatchObject({ status: "completed" });
  });

  it("over HTTP: DELETE of a session frees its tasks (store empty after); a principal's outlive their session", async () => {
    const store = new MemoryOperationStore();
    const hold = gate();
    const s = makeServer({ tasks: { store } });
    s.tool("wait", { taskSupport: "optional" }, async (args) => {
      if ((args as JsonObject).quick !== true) await hold.promise;
      return "waited";
    });
    const url = await serveOverHttp(cleanup, s, {
      authenticate: (req) => String(req.headers.authorization ?? "").replace(/^Bearer /, "") || undefined,
      authRequired: false,
    });
    const connect = async (principal?: string) => {
      const c = kit.clientSession();
      const headers: Record<string, string> = principal === undefined ? {} : { authorization: `Bearer ${principal}` };
      await c.connect(new StreamableHttpClientTransport({ url, standaloneStream: "manual", headers }));
      cleanup(() => c.close());
      return c;
    };
    const anonymous = await connect();
    await createTask(anonymous);
    await finishedTask(anonymous);
    const alice = await connect("alice");
    const hers = await createTask(alice);
    expect(store.count()).toBe(3);
    // The client ends its session: its transport sends DELETE.
    await anonymous.close();
    await until(() => store.count() === 1, 5000, "the deleted session's task records were not deleted");
    expect(s.tasks.size).toBe(1);
    await alice.close();
    const aliceAgain = await connect("alice");
    expect(await aliceAgain.request("tasks/get", { taskId: hers })).toMatchObject({ status: "working" });
    hold.open();
  });

  it("over HTTP behind a trusted proxy: sessions of one client address share its quota; another address gets in", async () => {
    const s = makeServer({ tasks: { maxTasksPerPrincipal: 2 } });
    const hold = gate();
    s.tool("wait", { taskSupport: "optional" }, async () => {
      await hold.promise;
      return "waited";
    });
    const url = await serveOverHttp(cleanup, s, { clientAddressHeader: "x-forwarded-for" });
    const connect = async (address: string) => {
      const c = kit.clientSession();
      const headers = { "x-forwarded-for": `203.0.113.9, ${address}` };
      await c.connect(new StreamableHttpClientTransport({ url, standaloneStream: "manual", headers }));
      cleanup(() => c.close());
      return c;
    };
    await createTask(await connect("198.51.100.1"));
    await createTask(await connect("198.51.100.1"));
    await expect(createTask(await connect("198.51.100.1"))).rejects.toMatchObject({
      code: -32000,
      data: { maxTasksPerPrincipal: 2 },
    });
    await createTask(await connect("198.51.100.2"));
    hold.open();
  });
});
