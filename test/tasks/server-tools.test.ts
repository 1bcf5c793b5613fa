// TaskServer tools as tasks: execution.taskSupport, its enforcement, capabilities, ctx.task, input_required, failures.
import { describe, expect, it } from "vitest";
import { RpcError, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import {
  MODEL_IMMEDIATE_RESPONSE_META,
  RELATED_TASK_META,
  TASK_STATUS_NOTIFICATION,
} from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { CapabilityError } from "../../runtime/rpc/errors.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { sessionKit } from "../kit/sessions.js";
import { McpServer } from "../../runtime/server/mcp-server.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { connectClient, gate, makeServer, textOf, type TaskServer } from "./helpers.js";
import type { TaskSupport } from "../../runtime/eras/2025-11-25/tasks/tools.js";

const cleanup = closeAfterEach();

function serverWith(
  supports: Record<string, TaskSupport | undefined>,
  extra: Partial<Parameters<typeof makeServer>[0]> = {},
): TaskServer {
  const server = makeServer(extra);
  for (const [name, taskSupport] of Object.entries(supports)) {
    server.tool(name, { taskSupport }, () => `ran ${name}`);
  }
  cleanup(() => server.close());
  cleanup(() => server.tasks.close());
  return server;
}

async function client(server: TaskServer, options: Parameters<typeof connectClient>[1] = {}) {
  const pair = await connectClient(server, options);
  cleanup(() => pair.client.close());
  return pair;
}

async function rpcError(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

describe("taskSupport in tools/list and capabilities", () => {
  it("lists execution.taskSupport as registered and advertises tasks only when a tool allows them", async () => {
    const server = serverWith({ plain: undefined, never: "forbidden", maybe: "optional", always: "required" });
    const { client: c } = await client(server);
    const { tools } = await c.request("tools/list", {});
    expect((tools as JsonObject[]).map((t) => [t.name, t.execution])).toEqual([
      ["plain", undefined],
      ["never", { taskSupport: "forbidden" }],
      ["maybe", { taskSupport: "optional" }],
      ["always", { taskSupport: "required" }],
    ]);
    expect(c.serverCapabilities?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

    const none = serverWith({ plain: undefined, never: "forbidden" });
    const { client: d } = await client(none);
    expect(d.serverCapabilities?.tasks).toBeUndefined();
    // Without the capability the receiver ignores `task` and runs the call as usual.
    const result = await d.request("tools/call", { name: "never", arguments: {}, task: { ttl: 1000 } });
    expect(textOf(result)).toBe("ran never");
    // Our client does not send tasks/get to a server that advertised no tasks; one that does gets -32601.
    await expect(d.request("tasks/get", { taskId: "x" })).rejects.toBeInstanceOf(CapabilityError);
    const ungated = sessionKit({
      clientToServer: { ...clientToServer, "tasks/get": { ...clientToServer["tasks/get"]!, capability: undefined } },
      serverToClient,
      isMessage,
    });
    const [clientEnd, serverEnd] = createInMemoryPair();
    await none.connect(serverEnd);
    const e = ungated.clientSession();
    cleanup(() => e.close());
    await e.connect(clientEnd);
    await expect(e.request("tasks/get", { taskId: "x" })).rejects.toMatchObject({ code: -32601 });
  });

  it("advertises tasks with advertiseTasks even when no tool allows them", async () => {
    const server = serverWith({ plain: undefined }, { advertiseTasks: true });
    const { client: c } = await client(server);
    expect(c.serverCapabilities?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  it.each([
    { support: undefined, asTask: true, outcome: -32601 },
    { support: "forbidden", asTask: true, outcome: -32601 },
    { support: "forbidden", asTask: false, outcome: "plain" },
    { support: "optional", asTask: true, outcome: "task" },
    { support: "optional", asTask: false, outcome: "plain" },
    { support: "required", asTask: true, outcome: "task" },
    { support: "required", asTask: false, outcome: -32601 },
  ] as const)("taskSupport $support, called as task: $asTask -> $outcome", async ({ support, asTask, outcome }) => {
    const server = serverWith({ tool: support, other: "optional" });
    const { client: c } = await client(server);
    const params: JsonObject = { name: "tool", arguments: {} };
    if (asTask) params.task = { ttl: 60_000 };
    const call = c.request("tools/call", params);
    if (typeof outcome === "number") {
      expect((await rpcError(call)).code).toBe(outcome);
      expect(server.tasks.size).toBe(0);
    } else if (outcome === "plain") {
      expect(textOf(await call)).toBe("ran tool");
    } else {
      const created = (await call) as { task: { taskId: string; status: string } };
      expect(created.task.status).toBe("working");
      const result = await c.request("tasks/result", { taskId: created.task.taskId });
      expect(textOf(result)).toBe("ran tool");
    }
  });
});

describe("a server without a task receiver", () => {
  it.each(["optional", "required"] as const)("refuses a tool with taskSupport %s, clearly", (taskSupport) => {
    const server = new McpServer({ serverInfo: { name: "s", version: "1" }, inbound: clientToServer });
    expect(() => server.tool("t", { taskSupport }, () => "x")).toThrow(/tasks: new TaskReceiver\(\)/);
    expect(() => server.tool("f", { taskSupport: "forbidden" }, () => "x")).not.toThrow();
    expect(server.capabilities.tasks).toBeUndefined();
  });
});

describe("a tool called as a task", () => {
  it("answers CreateTaskResult at once, then tasks/get and tasks/result with the related-task _meta", async () => {
    const release = gate();
    const server = serverWith({});
    server.tool("slow", { taskSupport: "optional" }, async () => {
      await release.promise;
      return { content: [{ type: "text", text: "slow done" }], _meta: { mine: 1 } };
    });
    const { client: c } = await client(server);
    const before = Date.now();
    const created = (await c.request("tools/call", { name: "slow", arguments: {}, task: { ttl: 30_000 } })) as {
      task: JsonObject;
    };
    const task = created.task;
    expect(task).toMatchObject({ status: "working", ttl: 30_000, pollInterval: 1000 });
    expect(typeof task.taskId).toBe("string");
    expect((task.taskId as string).length).toBeGreaterThanOrEqual(32);
    expect(Date.parse(task.createdAt as string)).toBeGreaterThanOrEqual(before - 1000);
    expect(task.lastUpdatedAt).toBe(task.createdAt);
    expect(await c.request("tasks/get", { taskId: task.taskId })).toMatchObject({ status: "working" });
    const pending = c.request("tasks/result", { taskId: task.taskId });
    release.open();
    const result = await pending;
    expect(result).toEqual({
      content: [{ type: "text", text: "slow done" }],
      _meta: { mine: 1, [RELATED_TASK_META]: { taskId: task.taskId } },
    });
    expect(await c.request("tasks/get", { taskId: task.taskId })).toMatchObject({ status: "completed" });
    // tasks/result of a terminal task answers at once, again.
    expect(await c.request("tasks/result", { taskId: task.taskId })).toEqual(result);
  });

  it("caps the ttl at maxTtlMs and uses the default when none is asked for", async () => {
    const server = serverWith(
      { t: "optional" },
      { tasks: { maxTtlMs: 5000, defaultTtlMs: 2000, pollIntervalMs: 250 } },
    );
    const { client: c } = await client(server);
    const asked = (await c.request("tools/call", { name: "t", task: { ttl: 999_999 } })) as { task: JsonObject };
    expect(asked.task).toMatchObject({ ttl: 5000, pollInterval: 250 });
    const none = (await c.request("tools/call", { name: "t", task: {} })) as { task: JsonObject };
    expect(none.task.ttl).toBe(2000);
  });

  it("gives the model-immediate-response _meta when the registration has one", async () => {
    const server = serverWith({});
    server.tool(
      "research",
      {
        taskSupport: "required",
        inputSchema: { type: "object", properties: { topic: { type: "string" } } },
        immediateResponse: ({ topic }) => `Researching ${String(topic)}; the answer follows.`,
      },
      () => "found",
    );
    const { client: c } = await client(server);
    const created = await c.request("tools/call", { name: "research", arguments: { topic: "tides" }, task: {} });
    expect(created._meta).toEqual({ [MODEL_IMMEDIATE_RESPONSE_META]: "Researching tides; the answer follows." });
  });

  it.each([
    ["throws", () => Promise.reject(new Error("rate limit exceeded"))],
    ["returns isError", () => ({ content: [{ type: "text" as const, text: "rate limit exceeded" }], isError: true })],
  ])("fails when the handler %s, with the error result as the task's result", async (_, handler) => {
    const server = serverWith({});
    server.tool("flaky", { taskSupport: "optional" }, handler);
    const { client: c } = await client(server);
    const { task } = (await c.request("tools/call", { name: "flaky", task: {} })) as { task: JsonObject };
    const result = await c.request("tasks/result", { taskId: task.taskId });
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "rate limit exceeded" }] });
    expect(await c.request("tasks/get", { taskId: task.taskId })).toMatchObject({
      status: "failed",
      statusMessage: "rate limit exceeded",
    });
  });

  it("returns the handler's JSON-RPC error from tasks/result when the tool breaks its outputSchema", async () => {
    const server = serverWith({});
    server.tool(
      "typed",
      { taskSupport: "optional", outputSchema: { type: "object", properties: { n: { type: "number" } } } },
      () => ({ content: [{ type: "text", text: "no structured content" }] }),
    );
    const { client: c } = await client(server);
    const { task } = (await c.request("tools/call", { name: "typed", task: {} })) as { task: JsonObject };
    const error = await rpcError(c.request("tasks/result", { taskId: task.taskId }));
    expect(error.code).toBe(-32603);
    expect(error.message).toContain("outputSchema");
    expect(await c.request("tasks/get", { taskId: task.taskId })).toMatchObject({ status: "failed" });
  });

  it("ctx.task.status sets statusMessage and notifies; ctx.task is undefined on a plain call", async () => {
    const release = gate();
    const seen: (string | undefined)[] = [];
    const server = serverWith({});
    server.tool("report", { taskSupport: "optional" }, async (_args, ctx) => {
      seen.push(ctx.task?.taskId);
      if (ctx.task === undefined) return "reported";
      ctx.task.status("half way");
      await release.promise;
      return "reported";
    });
    const { client: c } = await client(server);
    const statuses: JsonObject[] = [];
    c.onNotification(TASK_STATUS_NOTIFICATION, (params) => void statuses.push(params!));
    expect(textOf(await c.request("tools/call", { name: "report" }))).toBe("reported");
    const { task } = (await c.request("tools/call", { name: "report", task: {} })) as { task: JsonObject };
    await until(() => statuses.length === 1);
    expect(statuses[0]).toMatchObject({ taskId: task.taskId, status: "working", statusMessage: "half way" });
    expect(await c.request("tasks/get", { taskId: task.taskId })).toMatchObject({ statusMessage: "half way" });
    release.open();
    await c.request("tasks/result", { taskId: task.taskId });
    await until(() => statuses.length === 2);
    expect(statuses[1]).toMatchObject({ taskId: task.taskId, status: "completed" });
    expect(statuses.every((s) => (s._meta as JsonObject | undefined)?.[RELATED_TASK_META] === undefined)).toBe(true);
    expect(seen).toEqual([undefined, task.taskId]);
  });

  it("keeps the progress token of the creating request for the task's life", async () => {
    const steps = [gate(), gate()];
    const server = serverWith({});
    server.tool("count", { taskSupport: "optional" }, async (_args, ctx) => {
      for (let i = 0; i < steps.length; i++) {
        await steps[i].promise;
        await ctx.progress(i + 1, steps.length);
      }
      return "counted";
    });
    const { client: c } = await client(server);
    const progress: JsonObject[] = [];
    c.onNotification("notifications/progress", (params) => void progress.push(params!));
    const { task } = (await c.request("tools/call", {
      name: "count",
      task: {},
      _meta: { progressToken: "tok-1" },
    })) as { task: JsonObject };
    steps[0].open();
    await until(() => progress.length === 1);
    const result = c.request("tasks/result", { taskId: task.taskId });
    steps[1].open();
    await result;
    expect(progress).toEqual([
      { progressToken: "tok-1", progress: 1, total: 2 },
      { progressToken: "tok-1", progress: 2, total: 2 },
    ]);
  });
});

describe("input_required", () => {
  it("an elicitation inside a task moves it to input_required and travels through tasks/result", async () => {
    const server = serverWith({});
    server.tool("ask", { taskSupport: "optional" }, async (_args, ctx) => {
      const answer = await ctx.elicit({
        message: "Which city?",
        requestedSchema: { type: "object", properties: { city: { type: "string" } } },
      });
      return `city: ${String((answer.content as JsonObject | undefined)?.city)}`;
    });
    const { client: c } = await client(server, { capabilities: { elicitation: {} } });
    const asked: JsonObject[] = [];
    const answer = gate();
    c.onRequest("elicitation/create", async (params) => {
      asked.push(params!);
      await answer.promise;
      return { action: "accept", content: { city: "Lyon" } };
    });
    const { task } = (await c.request("tools/call", { name: "ask", task: {} })) as { task: JsonObject };
    const taskId = task.taskId as string;
    await until(() => server.tasks.size === 1);
    // Nothing is sent before the requestor opens tasks/result.
    let status: JsonObject = {};
    await until(() => {
      void c.request("tasks/get", { taskId }).then((s) => (status = s));
      return status.status === "input_required";
    });
    expect(asked).toEqual([]);
    const result = c.request("tasks/result", { taskId });
    await until(() => asked.length === 1);
    expect(asked[0]._meta).toEqual({ [RELATED_TASK_META]: { taskId } });
    expect(await c.request("tasks/get", { taskId })).toMatchObject({ status: "input_required" });
    answer.open();
    expect(textOf(await result)).toBe("city: Lyon");
    expect(await c.request("tasks/get", { taskId })).toMatchObject({ status: "completed" });
  });
});

describe("status notifications", () => {
  it.each([
    [true, ["working", "completed"]],
    [false, []],
  ] as const)("statusNotifications %s", async (statusNotifications, expected) => {
    const server = serverWith({}, { tasks: { statusNotifications } });
    server.tool("note", { taskSupport: "optional" }, (_args, ctx) => {
      ctx.task?.status("noted");
      return "done";
    });
    const { client: c } = await client(server);
    const heard: string[] = [];
    c.onNotification(TASK_STATUS_NOTIFICATION, (params) => void heard.push(params!.status as string));
    const { task } = (await c.request("tools/call", { name: "note", task: {} })) as { task: JsonObject };
    await c.request("tasks/result", { taskId: task.taskId });
    // A request after the result: any notification sent before it has arrived.
    await c.request("tasks/get", { taskId: task.taskId });
    expect(heard).toEqual(expected);
  });
});
