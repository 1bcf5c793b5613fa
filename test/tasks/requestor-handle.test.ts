// The task handle against a scripted receiver: creation, polling at the receiver's pace, results and errors, input.
import { describe, expect, it } from "vitest";
import { ErrorCode, RpcError, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import {
  CapabilityError,
  ConnectionClosedError,
  LocalErrorCode,
  RequestCancelledError,
} from "../../runtime/rpc/errors.js";
import { Session } from "../../runtime/rpc/session/session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import {
  TaskCancelledError,
  attachTask,
  requestAsTask,
  type TaskHandle,
} from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { RELATED_TASK_META, type TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep, until } from "../kit/timing.js";
import { ScriptedReceiver, clientWiring, connectToReceiver } from "./requestor-harness.js";

const onClose = closeAfterEach();

async function setup(options: Parameters<typeof connectToReceiver>[1] = {}) {
  const receiver = new ScriptedReceiver();
  const pair = await connectToReceiver(receiver, options);
  onClose(() => pair.server.close());
  onClose(() => pair.client.close());
  return { receiver, ...pair };
}

type CallResult = { content: { type: string; text: string }[]; isError?: boolean; _meta?: JsonObject };

const FAST = { minPollIntervalMs: 1 };

describe("requestAsTask", () => {
  it("sends params.task and returns a handle built from the CreateTaskResult", async () => {
    const { receiver, client } = await setup();
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow", arguments: { n: 1 } },
      { task: { ttl: 12_345 } },
    );
    expect(receiver.received[0]).toEqual({ name: "slow", arguments: { n: 1 }, task: { ttl: 12_345 } });
    expect(handle.taskId).toBe(receiver.only.state.taskId);
    expect(handle.created.task).toEqual(receiver.only.state);
    expect(handle.status).toBe("working");
    expect(handle.state.ttl).toBe(12_345);
  });

  it("is refused locally when the receiver did not declare tasks.requests.<method>", async () => {
    const { receiver, client } = await setup({ capabilities: { tools: {}, tasks: { list: {} } } });
    const refusal = requestAsTask(client, "tools/call", { name: "slow" }, { task: {} });
    await expect(refusal).rejects.toBeInstanceOf(CapabilityError);
    await expect(refusal).rejects.toThrow(/tasks\.requests\.tools\.call/);
    expect(receiver.received).toEqual([]);
  });
});

describe("TaskHandle.result", () => {
  it("polls until the task completed, then fetches tasks/result once and resolves with the original result", async () => {
    const { receiver, client } = await setup();
    receiver.onGet = (task) => {
      if (receiver.calls.get === 3) receiver.complete(task, { content: [{ type: "text", text: "done" }] });
    };
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    const result = await handle.result();
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    expect(result._meta?.[RELATED_TASK_META]).toEqual({ taskId: handle.taskId });
    expect(receiver.calls).toMatchObject({ get: 3, result: 1 });
    expect(handle.status).toBe("completed");
    // The spec: taskId in the params is the source of truth; no related-task _meta on these requests.
    for (const params of receiver.taskRequests) expect(params).toEqual({ taskId: handle.taskId });
    // The same outcome on every call, without asking again.
    expect(await handle.result()).toBe(result);
    expect(receiver.calls.result).toBe(1);
  });

  it("rejects with the original JSON-RPC error of a failed task", async () => {
    const { receiver, client } = await setup();
    receiver.onGet = (task) => receiver.fail(task, { code: -32042, message: "quota exhausted", data: { left: 0 } });
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32042, message: "quota exhausted", data: { left: 0 } });
    expect(handle.status).toBe("failed");
  });

  it("resolves with a tool result that has isError (the task is failed, the call itself answered)", async () => {
    const { receiver, client } = await setup();
    receiver.onGet = (task) => receiver.complete(task, { content: [], isError: true }, "failed");
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    expect((await handle.result()).isError).toBe(true);
  });

  it("calls tasks/result as soon as the task needs input, and answers the receiver's request made on it", async () => {
    const { receiver, client } = await setup({ client: { capabilities: { elicitation: {} } } });
    const asked: JsonObject[] = [];
    client.onRequest("elicitation/create", (params) => {
      asked.push(params ?? {});
      return { action: "accept", content: { colour: "green" } };
    });
    let statusAtResult: string | undefined;
    receiver.onGet = (task) => {
      if (task.state.status === "working" && receiver.calls.get === 2)
        receiver.move(task, "input_required", "Which colour?");
    };
    receiver.onResult = async (task, context) => {
      statusAtResult = task.state.status;
      if (task.state.status !== "input_required") return;
      const answer = await context.request("elicitation/create", {
        message: "Which colour?",
        requestedSchema: { type: "object", properties: { colour: { type: "string" } } },
        _meta: { [RELATED_TASK_META]: { taskId: task.state.taskId } },
      });
      receiver.move(task, "working");
      receiver.complete(task, {
        content: [{ type: "text", text: `painted ${String((answer.content as JsonObject).colour)}` }],
      });
    };
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "paint" }, { task: {}, ...FAST });
    const seen: string[] = [];
    handle.onstatus((state) => seen.push(state.status));
    const result = await handle.result();
    expect(result.content[0].text).toBe("painted green");
    expect(statusAtResult).toBe("input_required");
    expect(asked[0]._meta).toEqual({ [RELATED_TASK_META]: { taskId: handle.taskId } });
    expect(receiver.calls.result).toBe(1);
    expect(seen[0]).toBe("input_required");
    expect(seen.at(-1)).toBe("completed");
  });

  it("reacts to a status notification without waiting for the next poll", async () => {
    const { receiver, client } = await setup();
    receiver.notify = true;
    receiver.pollInterval = 3_600_000;
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow" },
      { task: {}, maxPollIntervalMs: 3_600_000 },
    );
    const result = handle.result();
    receiver.complete(receiver.only, { content: [{ type: "text", text: "pushed" }] });
    expect((await result).content[0].text).toBe("pushed");
    expect(receiver.calls.get).toBe(0);
  });

  it("asking for the result while listeners' poll pause runs acts at once on a task that needs input", async () => {
    const { receiver, client } = await setup();
    receiver.notify = true;
    receiver.pollInterval = 3_600_000;
    receiver.onResult = (task) => receiver.complete(task, { content: [{ type: "text", text: "answered" }] });
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow" },
      { task: {}, maxPollIntervalMs: 3_600_000 },
    );
    const seen: string[] = [];
    handle.onstatus((state) => seen.push(state.status));
    receiver.move(receiver.only, "input_required");
    await until(() => seen.includes("input_required"));
    expect((await handle.result()).content[0].text).toBe("answered");
    expect(receiver.calls.get).toBe(0);
  });

  it("reports each new status and status message to its listeners, in order", async () => {
    const { receiver, client } = await setup();
    const script: [string, string | undefined][] = [
      ["working", "Gathering"],
      ["working", "Analyzing"],
      ["input_required", "Need a hand"],
      ["working", "Back at it"],
    ];
    receiver.onGet = (task) => {
      const step = script[receiver.calls.get - 1];
      if (step === undefined) receiver.complete(task, { content: [] });
      else receiver.move(task, step[0] as TaskState["status"], step[1]);
    };
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    const seen: string[] = [];
    handle.onstatus((state) => seen.push(`${state.status}:${state.statusMessage ?? ""}`));
    await until(() => handle.status === "completed");
    expect(seen).toEqual([
      "working:Gathering",
      "working:Analyzing",
      "input_required:Need a hand",
      "working:Back at it",
      "completed:",
    ]);
    // Nobody asked for the result: tasks/result was never called.
    expect(receiver.calls.result).toBe(0);
  });

  it("fails (does not hang) when the connection closes while it waits", async () => {
    const { receiver, client } = await setup();
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    const result = handle.result();
    await until(() => receiver.calls.get > 0);
    await client.close();
    await expect(result).rejects.toBeInstanceOf(ConnectionClosedError);
  });
});

describe("polling pace", () => {
  // Counting polls over a task that lasts a known while: a requestor ignoring the interval polls far more often.
  const LASTS_MS = 300;
  const cases: { name: string; receiverSays: number | undefined; options: JsonObject; interval: number }[] = [
    { name: "the receiver's pollInterval", receiverSays: 60, options: { minPollIntervalMs: 1 }, interval: 60 },
    {
      name: "pollIntervalMs when the receiver suggests none",
      receiverSays: undefined,
      options: { pollIntervalMs: 60, minPollIntervalMs: 1 },
      interval: 60,
    },
    {
      name: "the floor under a receiver that says 0",
      receiverSays: 0,
      options: { minPollIntervalMs: 60 },
      interval: 60,
    },
  ];
  for (const c of cases) {
    it(`honours ${c.name}`, async () => {
      const { receiver, client } = await setup();
      receiver.pollInterval = c.receiverSays;
      receiver.onCreate = (task) => {
        setTimeout(() => receiver.complete(task, { content: [] }), LASTS_MS);
      };
      const handle = await requestAsTask<CallResult>(
        client,
        "tools/call",
        { name: "slow" },
        { task: {}, ...c.options },
      );
      expect(handle.pollInterval).toBe(c.interval);
      await handle.result();
      expect(receiver.calls.get).toBeGreaterThan(0);
      expect(receiver.calls.get).toBeLessThanOrEqual(Math.ceil(LASTS_MS / c.interval) + 1);
    });
  }

  it("caps a huge suggested interval at maxPollIntervalMs", async () => {
    const { receiver, client } = await setup();
    receiver.pollInterval = 3_600_000;
    const handle = await requestAsTask(client, "tools/call", { name: "slow" }, { task: {}, maxPollIntervalMs: 250 });
    expect(handle.pollInterval).toBe(250);
  });

  it("refuses a poll interval option that is not a whole number of milliseconds", async () => {
    const { client } = await setup();
    await expect(
      requestAsTask(client, "tools/call", { name: "slow" }, { task: {}, pollIntervalMs: -1 }),
    ).rejects.toThrow(RangeError);
  });
});

describe("cancel and abort", () => {
  it("cancel() sends tasks/cancel; result() then rejects with TaskCancelledError", async () => {
    const { receiver, client } = await setup();
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    const result = handle.result();
    const state = await handle.cancel();
    expect(state.status).toBe("cancelled");
    expect(receiver.only.state.status).toBe("cancelled");
    await expect(result).rejects.toBeInstanceOf(TaskCancelledError);
    expect(receiver.calls.cancel).toBe(1);
  });

  it("cancel() of a finished task passes the receiver's -32602 on", async () => {
    const { receiver, client } = await setup();
    const handle = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    receiver.complete(receiver.only, { content: [] });
    await expect(handle.cancel()).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect((await handle.result()).content).toEqual([]);
  });

  it("aborting the signal stops waiting but leaves the task running", async () => {
    const { receiver, client } = await setup();
    const controller = new AbortController();
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow" },
      { task: {}, ...FAST, signal: controller.signal },
    );
    const result = handle.result();
    await until(() => receiver.calls.get > 0);
    controller.abort("user left");
    await expect(result).rejects.toBeInstanceOf(RequestCancelledError);
    const polls = receiver.calls.get;
    await sleep(30);
    expect(receiver.calls.get).toBe(polls);
    expect(receiver.calls.cancel).toBe(0);
    expect(receiver.only.state.status).toBe("working");
  });

  it("with cancelOnAbort, aborting also cancels the task", async () => {
    const { receiver, client } = await setup();
    const controller = new AbortController();
    const handle = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow" },
      { task: {}, ...FAST, signal: controller.signal, cancelOnAbort: true },
    );
    const result = handle.result();
    controller.abort();
    await expect(result).rejects.toBeInstanceOf(RequestCancelledError);
    await until(() => receiver.only.state.status === "cancelled");
    expect(receiver.calls.cancel).toBe(1);
  });
});

describe("progress", () => {
  it("keeps delivering the task's progress (same token as the creating request) until the task ends", async () => {
    const { receiver, client, server } = await setup();
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    let token: unknown;
    receiver.onCreate = (task) => {
      token = (task.params._meta as JsonObject).progressToken;
    };
    const progress: number[] = [];
    const handle: TaskHandle<CallResult> = await requestAsTask<CallResult>(
      client,
      "tools/call",
      { name: "slow" },
      { task: {}, ...FAST, onProgress: (p) => progress.push(p.progress) },
    );
    await server.notify("notifications/progress", { progressToken: token as string, progress: 1, total: 2 });
    await server.notify("notifications/progress", { progressToken: token as string, progress: 2, total: 2 });
    await until(() => progress.length === 2);
    receiver.complete(receiver.only, { content: [] });
    await handle.result();
    expect(progress).toEqual([1, 2]);
    expect(errors).toEqual([]);
  });
});

describe("attachTask", () => {
  it("picks a task up on a new connection and gets its result there", async () => {
    const { receiver, client } = await setup();
    const first = await requestAsTask<CallResult>(client, "tools/call", { name: "slow" }, { task: {}, ...FAST });
    await client.close();
    const again = await connectToReceiver(receiver);
    onClose(() => again.server.close());
    onClose(() => again.client.close());
    const handle = await attachTask<CallResult>(again.client, first.taskId, { method: "tools/call", ...FAST });
    expect(handle.status).toBe("working");
    receiver.complete(receiver.only, { content: [{ type: "text", text: "kept" }] });
    expect((await handle.result()).content[0].text).toBe("kept");
  });

  it("passes the receiver's error for an unknown task id on", async () => {
    const { client } = await setup();
    await expect(attachTask(client, "no-such-task")).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });
});

describe("a receiver that ignores params.task", () => {
  it("answering with the plain result gets a clear error, not a handle on nothing", async () => {
    const [clientEnd, serverEnd] = createInMemoryPair();
    const server = new Session({ inbound: clientWiring.outbound, outbound: clientWiring.inbound });
    server.onRequest("tools/call", () => ({ content: [{ type: "text", text: "plain anyway" }] }));
    const client = new Session({ ...clientWiring });
    await server.connect(serverEnd);
    await client.connect(clientEnd);
    onClose(() => server.close());
    onClose(() => client.close());
    const refusal = requestAsTask(client, "tools/call", { name: "slow" }, { task: {} });
    await expect(refusal).rejects.toMatchObject({ code: LocalErrorCode.InvalidResult });
    await expect(refusal).rejects.toThrow(/no task in it/);
    // The connection goes on.
    await expect(client.request("tools/call", { name: "again" })).resolves.toMatchObject({
      content: [{ text: "plain anyway" }],
    });
  });
});
