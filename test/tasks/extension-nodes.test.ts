// The Tasks extension on several nodes sharing one Redis: any node answers tasks/get|update|cancel for a task another runs; a killed node's task reads failed.
import { describe, expect, it } from "vitest";
import { RpcError, isPlainObject, type JsonObject, type RequestId } from "../../runtime/rpc/jsonrpc.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { DURABLE_FAILED_CODE } from "../../runtime/durable/errors.js";
import { NODE_LOST_STATUS } from "../../runtime/eras/2025-11-25/tasks/remote.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { eventually } from "../kit/timing.js";
import { redisForTests } from "../store/redis-server.js";
import { LEASE_MS, childNodes, nodesHere, rpcFailure } from "./nodes-kit.js";
import type { TaskNode } from "./redis-nodes-node.js";

const EXTENSION = "io.modelcontextprotocol/tasks";
const redis = redisForTests();
const cleanup = closeAfterEach();
let prefixes = 0;

/** A bare 2026-07-28 client: every request carries the envelope declaring the extension; replies read as they come. */
class ModernClient {
  private nextId = 1;
  private readonly pending = new Map<RequestId, { resolve: (r: JsonObject) => void; reject: (e: unknown) => void }>();

  constructor(private readonly transport: Transport) {
    transport.onmessage = (raw) => {
      if (!isPlainObject(raw) || raw.method !== undefined) return;
      const waiter = this.pending.get(raw.id as RequestId);
      if (waiter === undefined) return;
      this.pending.delete(raw.id as RequestId);
      if (isPlainObject(raw.error)) {
        const e = raw.error as { code: number; message: string; data?: unknown };
        waiter.reject(new RpcError(e.code, e.message, e.data));
      } else waiter.resolve(raw.result as JsonObject);
    };
    transport.onclose = () => {
      for (const w of this.pending.values()) w.reject(new Error("connection closed"));
      this.pending.clear();
    };
  }

  static async connect(transport: Transport): Promise<ModernClient> {
    const client = new ModernClient(transport);
    await transport.start();
    return client;
  }

  request(method: string, params: JsonObject): Promise<JsonObject> {
    const id = this.nextId++;
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { [EXTENSION]: {} } },
    };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta } }).catch(reject);
    });
  }

  /** Calls `tool`, which must answer with a task; resolves with its id. */
  async startTask(tool: string, args: JsonObject = {}): Promise<string> {
    const created = await this.request("tools/call", { name: tool, arguments: args });
    expect(created.resultType).toBe("task");
    return created.taskId as string;
  }

  get(taskId: string): Promise<JsonObject> {
    return this.request("tasks/get", { taskId });
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

const here = nodesHere(redis, cleanup);
const nodeHere = here.node;

async function clientOf(node: TaskNode, principal: string): Promise<ModernClient> {
  const client = await ModernClient.connect(await here.link(node, principal));
  cleanup(() => client.close());
  return client;
}

const failure = rpcFailure;

describe("Tasks extension across nodes (Redis)", () => {
  it("a task created on node A: node B's tasks/get follows it to completed with the result inline, as A's does", async () => {
    const prefix = `ext${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const taskId = await onA.startTask("count", { steps: 3, delayMs: 30 });
    const seen = await onB.get(taskId);
    expect(seen).toMatchObject({ resultType: "complete", taskId, status: "working" });
    expect(Number.isInteger(seen.ttlMs)).toBe(true);
    await eventually(async () => (await onB.get(taskId)).status === "completed");
    const done = await onB.get(taskId);
    expect(done).toMatchObject({
      taskId,
      status: "completed",
      result: { content: [{ type: "text", text: "counted 3" }] },
    });
    const { _meta: _b, ...onBView } = done;
    const { _meta: _a, ...onAView } = await onA.get(taskId);
    expect(onBView).toEqual(onAView);
    // Node B ran nothing: it answered from the store.
    expect(b.tasks.stats.created).toBe(0);
  });

  it("an input request of a task on node A is listed by node B's tasks/get and answered by node B's tasks/update", async () => {
    const prefix = `ext${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const taskId = await onA.startTask("ask");
    await eventually(async () => (await onB.get(taskId)).status === "input_required");
    const parked = await onB.get(taskId);
    expect(parked.inputRequests).toEqual({
      "input-0": {
        method: "elicitation/create",
        params: {
          message: "Which city?",
          requestedSchema: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    });
    const ack = await onB.request("tasks/update", {
      taskId,
      inputResponses: { "input-0": { action: "accept", content: { city: "Lyon" } } },
    });
    expect(ack).toMatchObject({ resultType: "complete" });
    expect(Object.keys(ack).filter((k) => k !== "_meta" && k !== "resultType")).toEqual([]);
    await eventually(async () => (await onB.get(taskId)).status === "completed");
    expect((await onB.get(taskId)).result).toEqual({ content: [{ type: "text", text: "city: Lyon" }] });
    expect((await onA.get(taskId)).status).toBe("completed");
  });

  it("tasks/cancel on node B is acknowledged and stops the handler on node A; another principal's id is unknown everywhere", async () => {
    const prefix = `ext${prefixes++}:`;
    const [a, b] = [await nodeHere(prefix), await nodeHere(prefix)];
    const onA = await clientOf(a, "alice");
    const onB = await clientOf(b, "alice");
    const bobOnB = await clientOf(b, "bob");
    const taskId = await onA.startTask("hang");
    await eventually(async () => (await onB.get(taskId)).statusMessage === "running");
    for (const method of ["tasks/get", "tasks/cancel"]) {
      expect((await failure(bobOnB.request(method, { taskId }))).code).toBe(-32602);
    }
    expect((await failure(bobOnB.request("tasks/update", { taskId, inputResponses: {} }))).code).toBe(-32602);
    const ack = await onB.request("tasks/cancel", { taskId });
    expect(ack).toMatchObject({ resultType: "complete" });
    await eventually(async () => (await onA.get(taskId)).status === "cancelled");
    expect((await onB.get(taskId)).status).toBe("cancelled");
    expect(a.tasks.stats.cancelled).toBe(1);
    // Cancelling a finished task is acknowledged the same way, on either node.
    expect(await onB.request("tasks/cancel", { taskId })).toMatchObject({ resultType: "complete" });
  });
});

describe("a node killed mid-task (SIGKILL), Tasks extension", () => {
  const nodes = childNodes(redis);

  it("node B's tasks/get reads the task failed within the lease, with the error inline; cancel is then acknowledged", async () => {
    const prefix = `extkilled${prefixes++}:`;
    const transport = nodes.spawn(prefix);
    const onA = await ModernClient.connect(transport);
    const b = await nodeHere(prefix);
    const onB = await clientOf(b, "alice");
    const taskId = await onA.startTask("hang");
    await eventually(async () => (await onB.get(taskId)).statusMessage === "running", 20_000);
    const killedAt = Date.now();
    process.kill(transport.pid!, "SIGKILL");
    await eventually(async () => (await onB.get(taskId)).status === "failed", 10_000);
    const failedAfter = Date.now() - killedAt;
    console.log(
      `[tasks extension on redis] node killed: tasks/get on another node read failed ${failedAfter} ms after (lease ${LEASE_MS} ms)`,
    );
    expect(failedAfter).toBeLessThan(LEASE_MS * 4);
    const failed = await onB.get(taskId);
    expect(failed).toMatchObject({
      taskId,
      status: "failed",
      statusMessage: NODE_LOST_STATUS,
      error: { code: DURABLE_FAILED_CODE },
    });
    expect(failed.result).toBeUndefined();
    expect(await onB.request("tasks/cancel", { taskId })).toMatchObject({ resultType: "complete" });
    expect((await onB.get(taskId)).status).toBe("failed");
  });
});
