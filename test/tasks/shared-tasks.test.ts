// SharedTasks on Redis for a task another node runs: its detailed state and answer, input answers passed to the
// running node, and a cancel acknowledged without waiting for it.
import { describe, expect, it } from "vitest";
import { DurableEngine } from "../../runtime/durable/engine.js";
import { DURABLE_FAILED_CODE } from "../../runtime/durable/errors.js";
import { RpcError, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { TaskReceiver } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { tokenKey } from "../../runtime/store/key.js";
import type { TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import {
  CANCELLED_AFTER_LOSS_STATUS,
  NODE_LOST_STATUS,
  SharedTasks,
  type TaskOperation,
} from "../../runtime/eras/2025-11-25/tasks/remote.js";
import { until } from "../kit/timing.js";
import { connectClient, makeServer } from "./helpers.js";
import { redisForTests } from "../store/redis-server.js";

const redis = redisForTests();
let prefixes = 0;
const OWNER = "p:alice";

/** What every refused task id gets, whoever's it is. */
const UNKNOWN = { code: -32602, message: "Failed to retrieve task: Task not found" };
const unknownTask = () => new RpcError(UNKNOWN.code, UNKNOWN.message);

/** One node: SharedTasks over an engine on its own Redis store, recording what it is asked to do for its tasks. */
async function node(prefix: string) {
  const store = redis.store({ prefix, leaseMs: 600 });
  await store.ready();
  const cancels: [string, string][] = [];
  const inputs: [string, JsonObject][] = [];
  const errors: unknown[] = [];
  let shared: SharedTasks | undefined = undefined;
  const engine = new DurableEngine<TaskOperation>(
    store,
    (error) => errors.push(error),
    (task, signal) => shared?.signalled(task, signal),
  );
  shared = SharedTasks.over(engine, {
    unknown: unknownTask,
    cancel: (key, reason) => void cancels.push([key, reason]),
    attach: () => undefined,
    inputs: (key, responses) => void inputs.push([key, responses]),
    report: (error) => errors.push(error),
    relayCheckMs: 100,
  })!;
  const tasks = shared;
  redis.closeAfter({
    close: () => {
      tasks.close();
      engine.close();
    },
  });
  /** Starts recording a task (as its receiver would) and resolves once other nodes find it. */
  const open = async (state: TaskState): Promise<string> => {
    const key = tokenKey(state.taskId);
    const task: TaskOperation = { key, keptToken: "", principal: OWNER, freed: false, wire: "extension" };
    engine.add(task);
    await tasks.open(task, 42, state);
    return key;
  };
  return { store, tasks, open, cancels, inputs, errors };
}

async function twoNodes() {
  const prefix = `shared-tasks${prefixes++}:`;
  return [await node(prefix), await node(prefix)] as const;
}

let ids = 0;
function working(extra: JsonObject = {}): TaskState {
  const now = new Date().toISOString();
  return { taskId: `task-${ids++}`, status: "working", createdAt: now, lastUpdatedAt: now, ttl: 60_000, ...extra };
}

describe("SharedTasks.detailed", () => {
  it("reads the latest state as recorded (every field kept) and the final answer once there is one", async () => {
    const [a, b] = await twoNodes();
    const inputRequests = { "elicit-1": { method: "elicitation/create", params: { message: "Which city?" } } };
    const first = working({ statusMessage: "asking", inputRequests });
    const key = await a.open(first);
    expect(await b.tasks.detailed(key, OWNER, "extension")).toEqual({ state: first, outcome: undefined });

    const done: TaskState = { ...first, status: "completed", statusMessage: "done" };
    a.tasks.record(key, done, { result: { content: [{ type: "text", text: "Lyon" }] } });
    await expect.poll(async () => (await b.tasks.detailed(key, OWNER, "extension")).outcome).toBeDefined();
    expect(await b.tasks.detailed(key, OWNER, "extension")).toEqual({
      state: done,
      outcome: { result: { content: [{ type: "text", text: "Lyon" }] } },
    });
    // A task of the extension is not one of core Tasks: tasks/get of the 2025 wire does not find it.
    await expect(b.tasks.get(key, OWNER)).rejects.toMatchObject(UNKNOWN);
  });

  it("answers another owner's task and an unknown one with the same unknown error", async () => {
    const [a, b] = await twoNodes();
    const key = await a.open(working());
    await expect(b.tasks.detailed(key, "p:bob", "extension")).rejects.toMatchObject(UNKNOWN);
    await expect(b.tasks.detailed(tokenKey("no-such-task"), OWNER, "extension")).rejects.toMatchObject(UNKNOWN);
  });

  it("takes over a task whose node stopped as failed, and every later read says the same", async () => {
    const [a, b] = await twoNodes();
    const state = working({ statusMessage: "running" });
    const key = await a.open(state);
    await a.store.close();
    const taken = await b.tasks.detailed(key, OWNER, "extension");
    expect(taken.state).toMatchObject({ taskId: state.taskId, status: "failed", statusMessage: NODE_LOST_STATUS });
    expect(taken.outcome).toMatchObject({ error: { code: DURABLE_FAILED_CODE } });
    expect(await b.tasks.detailed(key, OWNER, "extension")).toEqual(taken);
  });
});

describe("SharedTasks.answerInputs", () => {
  it("passes the requestor's answers to the node running the task, as they were given", async () => {
    const [a, b] = await twoNodes();
    const key = await a.open(working({ status: "input_required" }));
    const responses = { "elicit-1": { action: "accept", content: { city: "Lyon" } } };
    await b.tasks.answerInputs(key, OWNER, responses);
    await until(() => a.inputs.length > 0);
    expect(a.inputs).toEqual([[key, responses]]);
    expect(a.cancels).toEqual([]);
  });

  it("refuses another owner's or an unknown task with the unknown error, and tells no node", async () => {
    const [a, b] = await twoNodes();
    const key = await a.open(working({ status: "input_required" }));
    await expect(b.tasks.answerInputs(key, "p:bob", { k: {} })).rejects.toMatchObject(UNKNOWN);
    await expect(b.tasks.answerInputs(tokenKey("nothing"), OWNER, { k: {} })).rejects.toMatchObject(UNKNOWN);
    // Signals from one node arrive in order: once this one is heard, the refused ones would have been.
    await b.tasks.answerInputs(key, OWNER, { last: {} });
    await until(() => a.inputs.length > 0);
    expect(a.inputs).toEqual([[key, { last: {} }]]);
  });
});

describe("SharedTasks.requestCancel", () => {
  it("tells the running node and returns without waiting for the cancellation to be recorded", async () => {
    const [a, b] = await twoNodes();
    const state = working();
    const key = await a.open(state);
    // Node A never records the cancellation: a cancel that waited for it would not return.
    await b.tasks.requestCancel(key, OWNER);
    await until(() => a.cancels.length > 0);
    expect(a.cancels).toEqual([[key, "Cancelled by request"]]);
    expect((await b.tasks.detailed(key, OWNER, "extension")).state).toEqual(state);
  });

  it("leaves a terminal task as it is, without an error and without telling its node", async () => {
    const [a, b] = await twoNodes();
    const first = working();
    const key = await a.open(first);
    const done: TaskState = { ...first, status: "completed" };
    a.tasks.record(key, done, { result: {} });
    await expect.poll(async () => (await b.tasks.detailed(key, OWNER, "extension")).state.status).toBe("completed");
    await b.tasks.requestCancel(key, OWNER);
    // Signals from one node arrive in order: once this one is heard, a cancel would have been.
    const other = await a.open(working());
    await b.tasks.answerInputs(other, OWNER, { after: {} });
    await until(() => a.inputs.length > 0);
    expect(a.cancels).toEqual([]);
    expect((await b.tasks.detailed(key, OWNER, "extension")).state).toEqual(done);
  });

  it("takes over a task whose node stopped as cancelled", async () => {
    const [a, b] = await twoNodes();
    const key = await a.open(working());
    await a.store.close();
    await b.tasks.requestCancel(key, OWNER);
    const after = await b.tasks.detailed(key, OWNER, "extension");
    expect(after.state).toMatchObject({ status: "cancelled", statusMessage: CANCELLED_AFTER_LOSS_STATUS });
    expect(after.outcome).toMatchObject({ error: { code: DURABLE_FAILED_CODE, data: { status: "cancelled" } } });
  });

  it("refuses another owner's task with the unknown error", async () => {
    const [a, b] = await twoNodes();
    const key = await a.open(working());
    await expect(b.tasks.requestCancel(key, "p:bob")).rejects.toMatchObject(UNKNOWN);
  });
});

describe("TaskReceiver over SharedTasks", () => {
  it("hands a task the answers to its input requests that its requestor gave on another node", async () => {
    const prefix = `shared-tasks${prefixes++}:`;
    const store = redis.store({ prefix, leaseMs: 600 });
    await store.ready();
    const receiver = redis.closeAfter(new TaskReceiver({ store }));
    const b = await node(prefix);
    const { session } = await connectClient(makeServer({ tasks: receiver }));
    const origin: RequestContext = {
      requestId: 1,
      method: "tools/call",
      principal: "alice",
      signal: new AbortController().signal,
      peerIdentity: { protocolVersion: "2026-07-28", capabilities: { elicitation: {} } },
      progress: () => Promise.resolve(),
      request: () => Promise.reject(new Error("the task asks through its state")),
      notify: () => Promise.resolve(),
    };
    const created = await receiver.create(
      session,
      "tools/call",
      { name: "ask" },
      origin,
      async (ctx) => {
        const answer = await ctx.request("elicitation/create", { message: "Which city?" });
        return { content: [{ type: "text", text: `city: ${JSON.stringify(answer.content)}` }] };
      },
      { wire: "extension" },
    );
    const taskId = String(created.taskId);
    const key = tokenKey(taskId);
    await expect
      .poll(async () => (await b.tasks.detailed(key, OWNER, "extension")).state.status)
      .toBe("input_required");
    await b.tasks.answerInputs(key, OWNER, { "input-0": { action: "accept", content: { city: "Lyon" } } });
    await expect.poll(async () => (await b.tasks.detailed(key, OWNER, "extension")).outcome).toBeDefined();
    expect(await b.tasks.detailed(key, OWNER, "extension")).toMatchObject({
      state: { taskId, status: "completed" },
      outcome: { result: { content: [{ type: "text", text: 'city: {"city":"Lyon"}' }] } },
    });
  });
});
