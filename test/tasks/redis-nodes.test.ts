// Tasks on several nodes sharing one Redis: any node answers tasks/get|result|list|cancel; a killed node's tasks fail.
import { describe, expect, it } from "vitest";
import { RpcError, isPlainObject, type JsonObject, type RequestId } from "../../runtime/rpc/jsonrpc.js";
import { LATEST_PROTOCOL_VERSION } from "../../runtime/mcp/protocol-versions.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { RELATED_TASK_META, type TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { NODE_LOST_STATUS } from "../../runtime/eras/2025-11-25/tasks/remote.js";
import { tokenKey } from "../../runtime/store/key.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { eventually } from "../kit/timing.js";
import { redisForTests } from "../store/redis-server.js";
import { LEASE_MS, childNodes, nodesHere, rpcFailure } from "./nodes-kit.js";
import type { TaskNode } from "./redis-nodes-node.js";

const redis = redisForTests();
const cleanup = closeAfterEach();
let prefixes = 0;

/**
 * A bare JSON-RPC client over a transport: it sends task-augmented requests and reads replies as they come, with
 * no result checks of its own (what is checked here is the server's answer).
 */
class RawClient {
  private nextId = 1;
  private readonly pending = new Map<RequestId, { resolve: (r: JsonObject) => void; reject: (e: unknown) => void }>();
  readonly notifications: JsonObject[] = [];
  /** Answers to server-to-client requests, by method (-32601 without one; no answer when it returns undefined). */
  readonly handlers = new Map<string, (params: JsonObject) => JsonObject | undefined>();
  closed = false;

  constructor(private readonly transport: Transport) {
    transport.onmessage = (raw) => {
      if (!isPlainObject(raw)) return;
      const id = raw.id as RequestId | undefined;
      if (raw.method !== undefined) {
        if (id === undefined) this.notifications.push(raw);
        else {
          const handler = this.handlers.get(raw.method as string);
          if (handler === undefined)
            void transport.send({ jsonrpc: "2.0", id, error: { code: -32601, message: "not here" } });
          else {
            const result = handler(raw.params as JsonObject);
            if (result !== undefined) void transport.send({ jsonrpc: "2.0", id, result });
          }
        }
        return;
      }
      const waiter = id === undefined ? undefined : this.pending.get(id);
      if (waiter === undefined) return;
      this.pending.delete(id!);
      if (isPlainObject(raw.error)) {
        const e = raw.error as { code: number; message: string; data?: unknown };
        waiter.reject(new RpcError(e.code, e.message, e.data));
      } else waiter.resolve(raw.result as JsonObject);
    };
    transport.onclose = () => {
      this.closed = true;
      for (const w of this.pending.values()) w.reject(new Error("connection closed"));
      this.pending.clear();
    };
  }

  static async connect(transport: Transport): Promise<RawClient> {
    const client = new RawClient(transport);
    await transport.start();
    await client.request("initialize", {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: { elicitation: {} },
      clientInfo: { name: "raw", version: "1" },
    });
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return client;
  }

  request(method: string, params?: JsonObject): Promise<JsonObject> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.transport.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }).catch(reject);
    });
  }

  /** Starts `tool` as a task; resolves with its id. */
  async startTask(tool: string, args: JsonObject = {}, meta?: JsonObject): Promise<string> {
    const params: JsonObject = { name: tool, arguments: args, task: { ttl: 60_000 } };
    if (meta !== undefined) params._meta = meta;
    const created = await this.request("tools/call", params);
    return (created.task as TaskState).taskId;
  }

  get(taskId: string): Promise<TaskState> {
    return this.request("tasks/get", { taskId }) as unknown as Promise<TaskState>;
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

const here = nodesHere(redis, cleanup);
const nodeHere = here.node;

/** A client of `node` authenticated as `principal` (in memory). */
async function clientOf(node: TaskNode, principal: string): Promise<RawClient> {
  const client = await RawClient.connect(await here.link(node, principal));
  cleanup(() => client.close());
  return client;
}

const failure = rpcFailure;

describe("tasks across nodes (Redis)", () => {
  it("a task created on node A: node B answers tasks/get, tasks/list and tasks/result, the same as A", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const taskId = await onA.startTask("count", { steps: 5, delayMs: 20 });

    const seen = await onB.get(taskId);
    expect(seen.taskId).toBe(taskId);
    expect(["working", "completed"]).toContain(seen.status);
    const listed = await onB.request("tasks/list");
    expect((listed.tasks as TaskState[]).map((t) => t.taskId)).toEqual([taskId]);

    const result = await onB.request("tasks/result", { taskId });
    expect(result.content).toEqual([{ type: "text", text: "counted 5" }]);
    expect((result._meta as JsonObject)[RELATED_TASK_META]).toEqual({ taskId });
    expect(await onA.request("tasks/result", { taskId })).toEqual(result);
    const done = await onB.get(taskId);
    expect(done).toMatchObject({ taskId, status: "completed", statusMessage: "step 5 of 5" });
    expect(done).toEqual(await onA.get(taskId));
    // Each step recorded a state, but only the latest is kept, next to the final answer.
    expect(await b.tasks.store.readAfter(tokenKey(taskId), 0)).toHaveLength(2);
  });

  it("an elicitation of a task on node A reaches the requestor through tasks/result on node B, and so does its progress", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const asked: JsonObject[] = [];
    onB.handlers.set("elicitation/create", (params) => {
      asked.push(params);
      return { action: "accept", content: { city: "Lyon" } };
    });
    const taskId = await onA.startTask("ask", {}, { progressToken: "p1" });
    await eventually(async () => (await onB.get(taskId)).status === "input_required");
    const result = await onB.request("tasks/result", { taskId });
    expect(result.content).toEqual([{ type: "text", text: "city: Lyon" }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ message: "Which city?", _meta: { [RELATED_TASK_META]: { taskId } } });
    const progress = onB.notifications.filter((n) => n.method === "notifications/progress");
    expect(progress.map((n) => n.params)).toEqual([
      { progressToken: "p1", progress: 1, total: 1, message: "answered" },
    ]);
    expect(onA.notifications.filter((n) => n.method === "notifications/progress")).toEqual([]);
    expect((await onA.get(taskId)).status).toBe("completed");
  });

  it("two tasks/result calls on other nodes wait on a task that asks: the user is asked once, both get the result", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b, c] = [await nodeHere(prefix), await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const asked: string[] = [];
    const waiting: Promise<JsonObject>[] = [];
    const taskId = await onA.startTask("ask");
    for (const [name, node] of [
      ["b", b],
      ["c", c],
    ] as const) {
      const client = await clientOf(node, "alice");
      client.handlers.set("elicitation/create", () => {
        asked.push(name);
        return { action: "accept", content: { city: name } };
      });
      await eventually(async () => (await client.get(taskId)).status === "input_required");
      waiting.push(client.request("tasks/result", { taskId }));
    }
    const [fromB, fromC] = await Promise.all(waiting);
    expect(asked).toHaveLength(1);
    expect(fromB).toEqual(fromC);
    expect(fromB.content).toEqual([{ type: "text", text: `city: ${asked[0]}` }]);
  });

  it("tasks/list called again and again still starts from the newest task (listing takes no index slots)", async () => {
    const prefix = `tasks${prefixes++}:`;
    const a = await nodeHere(prefix, { pageSize: 2 });
    const onA = await clientOf(a, "alice");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await onA.startTask("count", { steps: 1, delayMs: 1 }));
    // More lists than one page scans slots (10 x pageSize).
    for (let i = 0; i < 25; i++) await onA.request("tasks/list");
    const first = await onA.request("tasks/list");
    expect((first.tasks as TaskState[]).map((t) => t.taskId)).toEqual([ids[2], ids[1]]);
    const second = await onA.request("tasks/list", { cursor: first.nextCursor as string });
    expect((second.tasks as TaskState[]).map((t) => t.taskId)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("tasks/list on any node pages through one principal's tasks from every node, and nobody else's", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const [aliceA, aliceB, bobB] = [await clientOf(a, "alice"), await clientOf(b, "alice"), await clientOf(b, "bob")];
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      ids.add(await aliceA.startTask("count", { steps: 1, delayMs: 1 }));
      ids.add(await aliceB.startTask("count", { steps: 1, delayMs: 1 }));
    }
    const bobs = await bobB.startTask("count", { steps: 1, delayMs: 1 });
    for (const client of [aliceA, aliceB]) {
      const listed: string[] = [];
      let cursor: string | undefined = undefined;
      let pages = 0;
      do {
        const page: JsonObject = await client.request("tasks/list", cursor === undefined ? {} : { cursor });
        listed.push(...(page.tasks as TaskState[]).map((t) => t.taskId));
        cursor = page.nextCursor as string | undefined;
        pages++;
      } while (cursor !== undefined && pages < 100);
      expect(new Set(listed)).toEqual(ids);
      expect(listed).toHaveLength(ids.size);
    }
    expect(((await bobB.request("tasks/list")).tasks as TaskState[]).map((t) => t.taskId)).toEqual([bobs]);
    const bad = await failure(aliceB.request("tasks/list", { cursor: "not-a-cursor" }));
    expect(bad.code).toBe(-32602);
  });

  it("another principal's task id gets the same error as an unknown one, on the node running it and on another", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const alice = await clientOf(a, "alice");
    const taskId = await alice.startTask("hang");
    for (const node of [a, b]) {
      const bob = await clientOf(node, "bob");
      for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
        const theirs = await failure(bob.request(method, { taskId }));
        const unknown = await failure(bob.request(method, { taskId: `${taskId.slice(0, -1)}x` }));
        expect({ code: theirs.code, message: theirs.message }).toEqual({
          code: unknown.code,
          message: unknown.message,
        });
        expect(theirs.code).toBe(-32602);
      }
    }
    expect((await alice.get(taskId)).status).toBe("working");
  });

  it("tasks/cancel on node B stops the handler on node A; the task reads cancelled everywhere, and cancelling again is refused", async () => {
    const prefix = `tasks${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const taskId = await onA.startTask("hang");
    await eventually(async () => (await onB.get(taskId)).statusMessage === "running");
    const waiting = failure(onB.request("tasks/result", { taskId }));
    const cancelled = (await onB.request("tasks/cancel", { taskId })) as unknown as TaskState;
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    expect((await onA.get(taskId)).status).toBe("cancelled");
    expect((await onB.get(taskId)).status).toBe("cancelled");
    const error = await waiting;
    expect(error).toEqual(await failure(onA.request("tasks/result", { taskId })));
    const again = await failure(onB.request("tasks/cancel", { taskId }));
    expect(again.code).toBe(-32602);
    expect(again).toEqual(await failure(onA.request("tasks/cancel", { taskId })));
    expect(a.tasks.stats.cancelled).toBe(1);
  });
});

describe("a node killed mid-task (SIGKILL)", () => {
  const nodes = childNodes(redis);

  async function childNode(prefix: string): Promise<{ client: RawClient; pid: number }> {
    const transport = nodes.spawn(prefix);
    const client = await RawClient.connect(transport);
    return { client, pid: transport.pid! };
  }

  it("tasks/result waiting on node B answers failed within the lease; get, list and cancel on B agree", async () => {
    const prefix = `killed${prefixes++}:`;
    const a = await childNode(prefix);
    const b = await nodeHere(prefix);
    const onB = await clientOf(b, "alice");
    const taskId = await a.client.startTask("hang");
    const other = await a.client.startTask("hang");
    await eventually(async () => (await onB.get(taskId)).statusMessage === "running", 20_000);
    const waiting = onB.request("tasks/result", { taskId }).then(
      () => new Error("the task of a killed node completed"),
      (error: unknown) => ({ error, at: Date.now() }),
    );
    const killedAt = Date.now();
    process.kill(a.pid, "SIGKILL");
    const { error, at } = (await waiting) as { error: unknown; at: number };
    console.log(
      `[tasks on redis] node killed: tasks/result on another node failed ${at - killedAt} ms after (lease ${LEASE_MS} ms)`,
    );
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).message).toMatch(/node running it stopped/);

    const state = await onB.get(taskId);
    expect(state).toMatchObject({ taskId, status: "failed", statusMessage: NODE_LOST_STATUS });
    expect(await failure(onB.request("tasks/result", { taskId }))).toEqual(error);
    expect((await failure(onB.request("tasks/cancel", { taskId }))).code).toBe(-32602);
    const listed = (await onB.request("tasks/list")).tasks as TaskState[];
    expect(listed.map((t) => [t.taskId, t.status]).sort()).toEqual(
      [
        [other, "failed"],
        [taskId, "failed"],
      ].sort(),
    );
  });

  it("tasks/cancel on node B right after node A died: the task ends cancelled, not failed", async () => {
    const prefix = `killed${prefixes++}:`;
    const a = await childNode(prefix);
    const b = await nodeHere(prefix);
    const onB = await clientOf(b, "alice");
    const taskId = await a.client.startTask("hang");
    await eventually(async () => (await onB.get(taskId)).statusMessage === "running", 20_000);
    process.kill(a.pid, "SIGKILL");
    const cancelled = (await onB.request("tasks/cancel", { taskId })) as unknown as TaskState;
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    expect((await onB.get(taskId)).status).toBe("cancelled");
    const error = await failure(onB.request("tasks/result", { taskId }));
    expect(error.message).toMatch(/cancel/i);
  });

  it("the node relaying a task's elicitation dies: the elicitation goes out again through the next tasks/result", async () => {
    const prefix = `killed${prefixes++}:`;
    const a = await nodeHere(prefix);
    const onA = await clientOf(a, "alice");
    const b = await childNode(prefix);
    const askedOnB: JsonObject[] = [];
    b.client.handlers.set("elicitation/create", (params) => void askedOnB.push(params));
    const taskId = await onA.startTask("ask");
    await eventually(async () => (await b.client.get(taskId)).status === "input_required", 20_000);
    void b.client.request("tasks/result", { taskId }).catch(() => undefined);
    await eventually(async () => askedOnB.length === 1, 20_000);
    process.kill(b.pid, "SIGKILL");
    const askedOnA: JsonObject[] = [];
    onA.handlers.set("elicitation/create", (params) => {
      askedOnA.push(params);
      return { action: "accept", content: { city: "Oslo" } };
    });
    const result = await onA.request("tasks/result", { taskId });
    expect(result.content).toEqual([{ type: "text", text: "city: Oslo" }]);
    expect(askedOnA).toEqual(askedOnB);
  });
});
