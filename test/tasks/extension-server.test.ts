// The server side of the Tasks extension (io.modelcontextprotocol/tasks) over an in-memory link: advertising, the opt-in, CreateTaskResult, tasks/get|update|cancel, input by key, taskStart "handler", ownership and limits.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { RequestCancelledError, RequestRefusedError } from "../../runtime/rpc/errors.js";
import type { TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { eventually, gate, until } from "../kit/timing.js";
import {
  TASKS_EXTENSION_ID,
  errorOf,
  expectCreateTaskResult,
  heldUntil,
  modernMeta,
  pollStatus,
  pollTask,
  resultOf,
  withoutMeta,
} from "../kit/tasks-extension.js";
import { rawPeer } from "../server/helpers.js";
import { makeServer, textOf, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

const OPTED_IN = modernMeta();
const NOT_OPTED_IN = modernMeta({ extension: false });
const RELATED_TASK = "io.modelcontextprotocol/related-task";

const form = (message: string) => ({
  message,
  requestedSchema: { type: "object" as const, properties: { v: { type: "string" as const } }, required: ["v"] },
});
const accept = (v: string) => ({ action: "accept", content: { v } });

/** What the tools saw: runs per tool, abort reasons, the task each handler found itself running as. */
interface Seen {
  runs: { [tool: string]: number };
  aborted: unknown[];
  taskIds: (string | undefined)[];
}

/** A server whose tools run as extension tasks where the client opted in; `release` lets the held ones end. */
function extensionServer(tasks: TaskReceiverOptions = {}): { server: TaskServer; seen: Seen; release: () => void } {
  const s = makeServer({ tasks });
  cleanup(() => s.close());
  cleanup(() => s.tasks.close());
  const hold = gate();
  const seen: Seen = { runs: {}, aborted: [], taskIds: [] };
  const ran = (tool: string) => (seen.runs[tool] = (seen.runs[tool] ?? 0) + 1);
  s.tool("held", { taskSupport: "optional" }, async (_args, ctx) => {
    ran("held");
    ctx.task?.status("holding");
    return `held ${await heldUntil(hold.promise, ctx, seen)}`;
  });
  s.tool("quick", { taskSupport: "optional" }, () => {
    ran("quick");
    return "quick done";
  });
  s.tool("required", { taskSupport: "required" }, () => {
    ran("required");
    return "required done";
  });
  s.tool("throws", { taskSupport: "optional" }, () => {
    throw new Error("the tool blew up");
  });
  s.tool("refuses", { taskSupport: "optional" }, () => {
    throw new RequestRefusedError(-32603, "the job crashed", { job: 7 });
  });
  s.tool("ask", { taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit(form("name?"));
    return `hello ${String(answer.content?.v)}`;
  });
  s.tool("ask-two", { taskSupport: "optional" }, async (_args, ctx) => {
    const [a, b] = await Promise.all([ctx.elicit(form("a?")), ctx.elicit(form("b?"))]);
    return `${String(a.content?.v)}+${String(b.content?.v)}`;
  });
  s.tool("ask-in-a-row", { taskSupport: "optional" }, async (_args, ctx) => {
    const first = await ctx.elicit(form("first?"));
    const second = await ctx.elicit(form("second?"));
    return `${String(first.content?.v)}, then ${String(second.content?.v)}`;
  });
  s.tool("tagged", { taskSupport: "optional" }, () => ({
    content: [{ type: "text", text: "tagged" }],
    _meta: { [RELATED_TASK]: { taskId: "stale" }, "example.com/kept": true },
  }));
  s.tool("no-start", { taskSupport: "optional", taskStart: "handler" }, () => {
    ran("no-start");
    return "answered at once";
  });
  s.tool("ask-then-start", { taskSupport: "optional", taskStart: "handler" }, async (_args, ctx) => {
    ran("ask-then-start");
    const answer = await ctx.elicit(form("name?"));
    const task = await ctx.startTask();
    seen.taskIds.push(task?.taskId);
    return `hello ${String(answer.content?.v)} as a task: ${String(ctx.task !== undefined)}`;
  });
  s.tool("start-then-hold", { taskSupport: "optional", taskStart: "handler" }, async (_args, ctx) => {
    const task = await ctx.startTask();
    seen.taskIds.push(task?.taskId, ctx.task?.taskId);
    return `held ${await heldUntil(hold.promise, ctx, seen)}`;
  });
  s.tool("start-then-ask", { taskSupport: "optional", taskStart: "handler" }, async (_args, ctx) => {
    await ctx.startTask();
    const answer = await ctx.elicit(form("name?"));
    return `hello ${String(answer.content?.v)}`;
  });
  s.tool("maybe-start", { taskSupport: "optional", taskStart: "handler" }, async (_args, ctx) => {
    const task = await ctx.startTask();
    return task === undefined ? `plain, ctx.task ${String(ctx.task)}` : "as a task";
  });
  return { server: s, seen, release: hold.open };
}

/** A raw 2026-07-28 client on its own in-memory link (as `principal` when given): every request enveloped. */
async function modernClient(s: TaskServer, principal?: string) {
  const peer = await rawPeer(cleanup, s, principal === undefined ? undefined : { principal });
  const send = (method: string, params: JsonObject, meta: JsonObject = OPTED_IN) =>
    peer.request(method, { ...params, _meta: meta });
  const result = async (method: string, params: JsonObject, meta?: JsonObject) =>
    resultOf(await send(method, params, meta), method);
  const error = async (method: string, params: JsonObject, meta?: JsonObject) =>
    errorOf(await send(method, params, meta), method);
  const get = (taskId: string) => result("tasks/get", { taskId });
  return {
    peer,
    send,
    result,
    error,
    get,
    call: (name: string, args: JsonObject = {}, meta?: JsonObject) =>
      result("tools/call", { name, arguments: args }, meta),
    /** Calls `name`, which must answer with a CreateTaskResult; resolves with the task's id. */
    start: async (name: string, args: JsonObject = {}) =>
      expectCreateTaskResult(await result("tools/call", { name, arguments: args })),
    until: (taskId: string, status: string) => pollStatus(() => get(taskId), status),
    /** The task's state once it is terminal. */
    ended: (taskId: string) =>
      pollTask(
        () => get(taskId),
        () => false,
      ),
  };
}

/** A 2025-11-25 client on its own in-memory link (as `principal` when given), past the handshake. */
async function legacyClient(s: TaskServer, principal?: string) {
  const peer = await rawPeer(cleanup, s, principal === undefined ? undefined : { principal });
  const init = resultOf(
    await peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "legacy-client", version: "1.0.0" },
    }),
    "initialize",
  );
  await peer.notify("notifications/initialized");
  return { peer, init };
}

describe("advertising", () => {
  it("server/discover names the extension and no core tasks capability", async () => {
    const c = await modernClient(extensionServer().server);
    const discovered = await c.result("server/discover", {});
    const capabilities = discovered.capabilities as JsonObject;
    expect(capabilities.extensions).toEqual({ [TASKS_EXTENSION_ID]: {} });
    expect(capabilities).not.toHaveProperty("tasks");
  });

  it("a 2025-11-25 initialize advertises core tasks and no extension", async () => {
    const { init } = await legacyClient(extensionServer().server);
    const capabilities = init.capabilities as JsonObject;
    expect(capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(capabilities).not.toHaveProperty("extensions");
  });
});

describe("with the opt-in", () => {
  it.each([
    ["optional", "held"],
    ["required", "required"],
  ])("a taskSupport: %s tool answers a flat CreateTaskResult", async (_support, tool) => {
    const { server, release } = extensionServer({ pollIntervalMs: 250 });
    const c = await modernClient(server);
    const created = await c.call(tool);
    const taskId = expectCreateTaskResult(created);
    expect(created.pollIntervalMs).toBe(250);
    // Found at once: the task exists before its id is given out.
    expect(await c.get(taskId)).toMatchObject({ resultType: "complete", taskId });
    release();
  });

  it("tasks/get: working, then completed with the result inline and no related-task _meta", async () => {
    const { server, release } = extensionServer();
    const c = await modernClient(server);
    const taskId = await c.start("held");
    const working = await pollTask(
      () => c.get(taskId),
      (task) => task.statusMessage !== undefined,
    );
    expect(withoutMeta(working)).toMatchObject({
      resultType: "complete",
      taskId,
      status: "working",
      statusMessage: "holding",
    });
    expect(working).not.toHaveProperty("result");
    expect(working).not.toHaveProperty("inputRequests");
    expect(Number.isInteger(working.ttlMs)).toBe(true);
    release();
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({
      resultType: "complete",
      taskId,
      status: "completed",
      result: { content: [{ type: "text", text: "held released" }] },
    });
    expect(done).not.toHaveProperty("error");
    expect(done._meta as JsonObject).not.toHaveProperty(RELATED_TASK);
    expect((done.result as JsonObject)._meta ?? {}).not.toHaveProperty(RELATED_TASK);
  });

  it("a result's own related-task _meta is left out inline; the rest of its _meta stays", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("tagged");
    const done = await c.until(taskId, "completed");
    expect(done.result).toEqual({ content: [{ type: "text", text: "tagged" }], _meta: { "example.com/kept": true } });
  });

  it("a handler that throws completes the task with a tool error (isError), not failed", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("throws");
    const done = await c.ended(taskId);
    expect(done.status).toBe("completed");
    expect(done.result).toMatchObject({ isError: true });
    expect(textOf(done.result)).toContain("the tool blew up");
    expect(done).not.toHaveProperty("error");
  });

  it("a RequestRefusedError fails the task with the JSON-RPC error", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("refuses");
    const done = await c.ended(taskId);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: -32603, message: "the job crashed" });
    expect(done).not.toHaveProperty("result");
  });

  it("tasks/cancel of a running task is acknowledged; the task reads cancelled and the handler's signal aborted", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const taskId = await c.start("held");
    await c.until(taskId, "working");
    const ack = await c.result("tasks/cancel", { taskId });
    expect(withoutMeta(ack)).toEqual({ resultType: "complete" });
    const cancelled = await c.until(taskId, "cancelled");
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled).not.toHaveProperty("result");
    expect(seen.aborted).toHaveLength(1);
    expect(seen.aborted[0]).toBeInstanceOf(RequestCancelledError);
  });

  it("tasks/cancel of a task waiting for input ends it cancelled, its inputRequests gone", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask");
    await c.until(taskId, "input_required");
    await c.result("tasks/cancel", { taskId });
    const cancelled = await c.until(taskId, "cancelled");
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled).not.toHaveProperty("inputRequests");
    // A late answer to the dropped ask is acknowledged and changes nothing.
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("late") } });
    expect((await c.get(taskId)).status).toBe("cancelled");
  });

  it("tasks/cancel of a finished task gets the same acknowledgement and changes nothing", async () => {
    const { server } = extensionServer();
    const c = await modernClient(server);
    const taskId = await c.start("quick");
    const done = await c.until(taskId, "completed");
    expect(done.status).toBe("completed");
    const ack = await c.result("tasks/cancel", { taskId });
    expect(withoutMeta(ack)).toEqual({ resultType: "complete" });
    expect(await c.get(taskId)).toMatchObject({ status: "completed", result: { content: [{ text: "quick done" }] } });
  });

  it.each([
    ["tasks/get", {}],
    ["tasks/update", { inputResponses: {} }],
    ["tasks/cancel", {}],
  ])("%s of an unknown id is -32602", async (method, params) => {
    const c = await modernClient(extensionServer().server);
    const refused = await c.error(method, { taskId: "no-such-task", ...params });
    expect(refused.code).toBe(-32602);
  });
});

describe("input requests by key", () => {
  it("ctx.elicit parks the task input_required under input-0; the answer completes it", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask");
    const parked = await c.until(taskId, "input_required");
    expect(parked.status).toBe("input_required");
    expect(parked.inputRequests).toEqual({ "input-0": { method: "elicitation/create", params: form("name?") } });
    const ack = await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("ada") } });
    expect(withoutMeta(ack)).toEqual({ resultType: "complete" });
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "hello ada" }] } });
    expect(done).not.toHaveProperty("inputRequests");
  });

  it.each([
    ["a non-object answer", { "input-0": "ada" }],
    ["a null answer", { "input-0": null }],
    ["an unknown key", { "input-9": accept("eve") }],
    ["no answers", {}],
  ])("tasks/update with %s is acknowledged and changes nothing", async (_what, inputResponses) => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask");
    const parked = await c.until(taskId, "input_required");
    const ack = await c.result("tasks/update", { taskId, inputResponses });
    expect(withoutMeta(ack)).toEqual({ resultType: "complete" });
    const after = await c.get(taskId);
    expect(after.status).toBe("input_required");
    expect(after.inputRequests).toEqual(parked.inputRequests);
    // The ask is still open: its real answer is taken.
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("bob") } });
    expect(await c.until(taskId, "completed")).toMatchObject({ result: { content: [{ text: "hello bob" }] } });
  });

  it("an answer that is not a valid result of its ask's method is refused with -32602 naming the key; nothing is taken", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask");
    const parked = await c.until(taskId, "input_required");
    const refused = await c.error("tasks/update", { taskId, inputResponses: { "input-0": { action: "maybe" } } });
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('inputResponses["input-0"]');
    expect(refused.data).toEqual({ inputKey: "input-0" });
    const after = await c.get(taskId);
    expect(after.status).toBe("input_required");
    expect(after.inputRequests).toEqual(parked.inputRequests);
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("bob") } });
    expect(await c.until(taskId, "completed")).toMatchObject({ result: { content: [{ text: "hello bob" }] } });
  });

  it("two asks at once: a partial answer leaves only the other key outstanding; the last one completes the task", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask-two");
    const both = await pollTask(
      () => c.get(taskId),
      (task) => Object.keys((task.inputRequests as JsonObject | undefined) ?? {}).length === 2,
    );
    expect(both.inputRequests).toEqual({
      "input-0": { method: "elicitation/create", params: form("a?") },
      "input-1": { method: "elicitation/create", params: form("b?") },
    });
    await c.result("tasks/update", { taskId, inputResponses: { "input-1": accept("second") } });
    const partial = await pollTask(
      () => c.get(taskId),
      (task) => (task.inputRequests as JsonObject | undefined)?.["input-1"] === undefined,
    );
    expect(partial.status).toBe("input_required");
    expect(partial.inputRequests).toEqual({ "input-0": { method: "elicitation/create", params: form("a?") } });
    // Answering the answered key again changes nothing.
    await c.result("tasks/update", { taskId, inputResponses: { "input-1": accept("again") } });
    expect((await c.get(taskId)).inputRequests).toEqual(partial.inputRequests);
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("first") } });
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ text: "first+second" }] } });
  });

  it("asks in a row get keys of their own: input-0, then input-1 (a key is never used twice)", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = await c.start("ask-in-a-row");
    const first = await c.until(taskId, "input_required");
    expect(first.inputRequests).toEqual({ "input-0": { method: "elicitation/create", params: form("first?") } });
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("one") } });
    const second = await pollTask(
      () => c.get(taskId),
      (task) => (task.inputRequests as JsonObject | undefined)?.["input-1"] !== undefined,
    );
    expect(second.inputRequests).toEqual({ "input-1": { method: "elicitation/create", params: form("second?") } });
    // The first key's answer, sent again, is not taken for the second ask.
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("stale") } });
    expect((await c.get(taskId)).inputRequests).toEqual(second.inputRequests);
    await c.result("tasks/update", { taskId, inputResponses: { "input-1": accept("two") } });
    expect(await c.until(taskId, "completed")).toMatchObject({ result: { content: [{ text: "one, then two" }] } });
  });

  it("an ask the request's envelope declares no capability for fails with CapabilityError, as the tool's result says", async () => {
    const c = await modernClient(extensionServer().server);
    const created = await c.result("tools/call", { name: "ask", arguments: {} }, modernMeta({ capabilities: {} }));
    const taskId = expectCreateTaskResult(created);
    const done = await c.ended(taskId);
    expect(done.status).toBe("completed");
    expect(done.result).toMatchObject({ isError: true });
    expect(textOf(done.result)).toBe("The client does not support elicitation (required for elicitation/create)");
    expect(done).not.toHaveProperty("inputRequests");
  });
});

describe("without the opt-in on 2026-07-28", () => {
  it.each([
    ["tasks/get", {}],
    ["tasks/update", { inputResponses: {} }],
    ["tasks/cancel", {}],
  ])("%s is -32021 naming the extension in requiredCapabilities", async (method, params) => {
    const { server, release } = extensionServer();
    const c = await modernClient(server);
    // Even for a task that exists.
    const taskId = await c.start("held");
    const refused = await c.error(method, { taskId, ...params }, NOT_OPTED_IN);
    expect(refused.code).toBe(-32021);
    expect(refused.data).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
    expect((await c.get(taskId)).status).toBe("working");
    release();
  });

  it("an optional tool runs synchronously", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const answered = await c.call("quick", {}, NOT_OPTED_IN);
    expect(answered).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "quick done" }] });
    expect(answered).not.toHaveProperty("taskId");
    expect(server.tasks.size).toBe(0);
    expect(seen.runs.quick).toBe(1);
  });

  it("a required tool is -32021 before its handler runs", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const refused = await c.error("tools/call", { name: "required", arguments: {} }, NOT_OPTED_IN);
    expect(refused.code).toBe(-32021);
    expect(refused.data).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
    expect(seen.runs.required).toBeUndefined();
    expect(server.tasks.size).toBe(0);
  });

  it("the task param of a 2026-07-28 call is no opt-in", async () => {
    const { server } = extensionServer();
    const c = await modernClient(server);
    const answered = await c.result(
      "tools/call",
      { name: "quick", arguments: {}, task: { ttl: 60_000 } },
      NOT_OPTED_IN,
    );
    expect(answered).toMatchObject({ resultType: "complete", content: [{ text: "quick done" }] });
    expect(server.tasks.size).toBe(0);
  });

  it("with the opt-in, the task param of a 2026-07-28 call is ignored: its ttl is not the task's", async () => {
    const { server, release } = extensionServer({ maxTtlMs: 60_000 });
    const c = await modernClient(server);
    const created = await c.result("tools/call", { name: "held", arguments: {}, task: { ttl: 1000 } });
    expectCreateTaskResult(created);
    expect(created.ttlMs).toBe(60_000);
    release();
  });

  it.each(["tasks/result", "tasks/list"])("%s is -32601, with the opt-in too", async (method) => {
    const { server, release } = extensionServer();
    const c = await modernClient(server);
    const taskId = await c.start("held");
    const params = method === "tasks/list" ? {} : { taskId };
    for (const meta of [OPTED_IN, NOT_OPTED_IN]) expect((await c.error(method, params, meta)).code).toBe(-32601);
    release();
  });
});

describe("a 2025-11-25 connection keeps core Tasks", () => {
  it("tasks/update is -32601; tasks/get, tasks/result and tasks/cancel answer as core Tasks do", async () => {
    const { server, release } = extensionServer();
    const { peer } = await legacyClient(server);
    const update = await peer.request("tasks/update", { taskId: "x", inputResponses: {} });
    expect(errorOf(update, "tasks/update").code).toBe(-32601);

    const created = resultOf(await peer.request("tools/call", { name: "held", arguments: {}, task: { ttl: 60_000 } }));
    expect(created).not.toHaveProperty("resultType");
    const task = created.task as JsonObject;
    expect(task).toMatchObject({ status: "working", ttl: 60_000 });
    const taskId = task.taskId as string;
    const got = resultOf(await peer.request("tasks/get", { taskId }), "tasks/get");
    expect(got).toMatchObject({ taskId, status: "working", ttl: 60_000 });
    expect(got).not.toHaveProperty("ttlMs");
    expect(got).not.toHaveProperty("resultType");
    const cancelled = resultOf(await peer.request("tasks/cancel", { taskId }), "tasks/cancel");
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    // A terminal task cannot be cancelled again on the core wire.
    expect(errorOf(await peer.request("tasks/cancel", { taskId }), "tasks/cancel again").code).toBe(-32602);

    const quick = resultOf(await peer.request("tools/call", { name: "quick", arguments: {}, task: {} }));
    const quickId = (quick.task as JsonObject).taskId as string;
    const result = resultOf(await peer.request("tasks/result", { taskId: quickId }), "tasks/result");
    expect(result).toMatchObject({
      content: [{ type: "text", text: "quick done" }],
      _meta: { [RELATED_TASK]: { taskId: quickId } },
    });
    release();
  });

  it("one principal's extension task is not found or listed through the core wire, nor a core task through the extension's", async () => {
    const { server, release } = extensionServer();
    const modern = await modernClient(server, "alice");
    const extensionId = await modern.start("held");
    const { peer } = await legacyClient(server, "alice");
    expect(resultOf(await peer.request("tasks/list", {}), "tasks/list").tasks).toEqual([]);
    const core = resultOf(await peer.request("tools/call", { name: "held", arguments: {}, task: {} }));
    const coreId = (core.task as JsonObject).taskId as string;
    const listed = resultOf(await peer.request("tasks/list", {}), "tasks/list").tasks as JsonObject[];
    expect(listed.map((task) => task.taskId)).toEqual([coreId]);
    expect(errorOf(await peer.request("tasks/get", { taskId: extensionId })).code).toBe(-32602);
    expect((await modern.error("tasks/get", { taskId: coreId })).code).toBe(-32602);
    release();
  });
});

describe('taskStart: "handler"', () => {
  it("a handler that never calls ctx.startTask answers at once", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const answered = await c.call("no-start");
    expect(answered).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "answered at once" }] });
    expect(answered).not.toHaveProperty("taskId");
    expect(server.tasks.size).toBe(0);
    expect(seen.runs["no-start"]).toBe(1);
  });

  it("asks in a round of the call first, then answers the retry with a task that uses the answer", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const round = await c.call("ask-then-start");
    expect(round.resultType).toBe("input_required");
    expect(round).not.toHaveProperty("taskId");
    expect(typeof round.requestState).toBe("string");
    const requests = round.inputRequests as { [key: string]: JsonObject };
    const keys = Object.keys(requests);
    expect(keys).toHaveLength(1);
    expect(requests[keys[0]!]).toEqual({ method: "elicitation/create", params: form("name?") });
    expect(server.tasks.size).toBe(0);
    const created = await c.result("tools/call", {
      name: "ask-then-start",
      arguments: {},
      inputResponses: { [keys[0]!]: accept("ada") },
      requestState: round.requestState as string,
    });
    const taskId = expectCreateTaskResult(created);
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "hello ada as a task: true" }] },
    });
    expect(seen.taskIds).toEqual([taskId]);
    expect(seen.runs["ask-then-start"]).toBe(2);
  });

  it("after ctx.startTask, ctx.task is the task and ctx.signal is its signal: tasks/cancel aborts it", async () => {
    const { server, seen } = extensionServer();
    const c = await modernClient(server);
    const taskId = expectCreateTaskResult(await c.call("start-then-hold"));
    expect(seen.taskIds).toEqual([taskId, taskId]);
    expect((await c.get(taskId)).status).toBe("working");
    expect(seen.aborted).toEqual([]);
    await c.result("tasks/cancel", { taskId });
    expect((await c.until(taskId, "cancelled")).status).toBe("cancelled");
    expect(seen.aborted).toHaveLength(1);
  });

  it("an ask after ctx.startTask parks the task under input-0 instead of ending a round of the call", async () => {
    const c = await modernClient(extensionServer().server);
    const taskId = expectCreateTaskResult(await c.call("start-then-ask"));
    const parked = await c.until(taskId, "input_required");
    expect(parked.inputRequests).toEqual({ "input-0": { method: "elicitation/create", params: form("name?") } });
    await c.result("tasks/update", { taskId, inputResponses: { "input-0": accept("ada") } });
    expect(await c.until(taskId, "completed")).toMatchObject({ result: { content: [{ text: "hello ada" }] } });
  });

  it("a limit refusing the task at ctx.startTask answers the call with -32000 and the limit in data", async () => {
    const { server, release } = extensionServer({ maxActivePerRequestor: 1 });
    const c = await modernClient(server, "alice");
    const taskId = await c.start("held");
    const id = c.peer.send("tools/call", { name: "maybe-start", arguments: {}, _meta: OPTED_IN });
    const answered = () => c.peer.received.find((m) => m.id === id && m.method === undefined);
    await until(() => answered() !== undefined, 3000, "the call refused at ctx.startTask was never answered");
    const refused = errorOf(answered()!, "tools/call");
    expect(refused.code).toBe(-32000);
    expect(refused.data).toEqual({ maxActivePerRequestor: 1 });
    release();
    await c.until(taskId, "completed");
  });

  it("on a request without the opt-in an optional tool's ctx.startTask() resolves undefined and the call answers", async () => {
    const { server } = extensionServer();
    const c = await modernClient(server);
    const answered = await c.call("maybe-start", {}, NOT_OPTED_IN);
    expect(answered).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "plain, ctx.task undefined" }],
    });
    expect(server.tasks.size).toBe(0);
    // With the opt-in the same tool goes on as a task.
    const taskId = expectCreateTaskResult(await c.call("maybe-start"));
    expect(await c.until(taskId, "completed")).toMatchObject({ result: { content: [{ text: "as a task" }] } });
  });
});

describe("ownership and limits", () => {
  it("another principal's tasks/get, tasks/update and tasks/cancel of the id are -32602; the owner is served from any link", async () => {
    const { server, release } = extensionServer();
    const alice = await modernClient(server, "alice");
    const bob = await modernClient(server, "bob");
    const taskId = await alice.start("held");
    const cases: [string, JsonObject][] = [
      ["tasks/get", { taskId }],
      ["tasks/update", { taskId, inputResponses: {} }],
      ["tasks/cancel", { taskId }],
    ];
    for (const [method, params] of cases) expect((await bob.error(method, params)).code).toBe(-32602);
    const aliceAgain = await modernClient(server, "alice");
    expect((await aliceAgain.get(taskId)).status).toBe("working");
    release();
    expect((await aliceAgain.until(taskId, "completed")).status).toBe("completed");
  });

  it("without a principal a task is found by its id from another link, after the link that made it closed", async () => {
    const { server, release } = extensionServer();
    const [clientEnd, serverEnd] = createInMemoryPair();
    const session = await server.connect(serverEnd);
    let reply: JsonObject | undefined = undefined;
    clientEnd.onmessage = (message) => (reply = message as JsonObject);
    await clientEnd.start();
    const call = { name: "held", arguments: {}, _meta: OPTED_IN };
    await clientEnd.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: call });
    await until(() => reply !== undefined);
    const taskId = expectCreateTaskResult(resultOf(reply!, "tools/call"));
    await clientEnd.close();
    await until(() => !session.isOpen, 3000, "the link did not close");
    expect(server.tasks.size).toBe(1);
    const other = await modernClient(server);
    expect(await other.get(taskId)).toMatchObject({ taskId, status: "working" });
    release();
    expect((await other.until(taskId, "completed")).status).toBe("completed");
  });

  it("maxActivePerRequestor refuses another extension task with -32000 and the limit in data", async () => {
    const { server, seen, release } = extensionServer({ maxActivePerRequestor: 1 });
    const c = await modernClient(server, "alice");
    const taskId = await c.start("held");
    const refused = await c.error("tools/call", { name: "held", arguments: {} });
    expect(refused.code).toBe(-32000);
    expect(refused.data).toEqual({ maxActivePerRequestor: 1 });
    expect(seen.runs.held).toBe(1);
    release();
    await c.until(taskId, "completed");
    await c.start("quick");
  });

  it("maxTasksPerPrincipal refuses another extension task while the first runs, with -32000 and the limit in data", async () => {
    const { server, seen, release } = extensionServer({ maxTasksPerPrincipal: 1 });
    const c = await modernClient(server, "alice");
    const taskId = await c.start("held");
    const refused = await c.error("tools/call", { name: "held", arguments: {} });
    expect(refused.code).toBe(-32000);
    expect(refused.data).toEqual({ maxTasksPerPrincipal: 1 });
    expect(seen.runs.held).toBe(1);
    // Another principal goes on.
    await (await modernClient(server, "bob")).start("quick");
    release();
    await c.until(taskId, "completed");
    // At the limit with a finished task, a new one takes its place: the finished one is freed.
    const next = await c.start("quick");
    expect((await c.error("tasks/get", { taskId })).code).toBe(-32602);
    expect((await c.until(next, "completed")).status).toBe("completed");
  });

  it("an extension task is freed when its ttl (maxTtlMs) ends: tasks/get is then -32602", async () => {
    const { server } = extensionServer({ maxTtlMs: 500 });
    const c = await modernClient(server);
    const created = await c.call("held");
    const taskId = expectCreateTaskResult(created);
    expect(created.ttlMs).toBe(500);
    expect((await c.get(taskId)).status).toBe("working");
    await eventually(async () => (await c.send("tasks/get", { taskId })).error !== undefined);
    expect((await c.error("tasks/get", { taskId })).code).toBe(-32602);
    expect(server.tasks.size).toBe(0);
  });
});
