// The client's side of the Tasks extension against a scripted 2026-07-28 server: the declaration, a task answer taken only where it may come, polling, input answered through tasks/update, cancel, attach, the limits.
import { describe, expect, it } from "vitest";
import { Client, type ClientOptions } from "../../generated/client.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import { InvalidResultError, RequestCancelledError } from "../../runtime/rpc/errors.js";
import type { SendOptions } from "../../runtime/rpc/transport.js";
import { createInMemoryPair, type InMemoryTransport } from "../../runtime/transports/in-memory.js";
import { TaskCancelledError, attachTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import type { TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { TaskInputsExceededError } from "../../runtime/eras/2026-07-28/client-task.js";
import { SpyTransport } from "../server/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep, until } from "../kit/timing.js";

const cleanup = closeAfterEach();
const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
const DISCOVERED = {
  resultType: "complete",
  supportedVersions: [MODERN],
  capabilities: { tools: {}, prompts: {}, extensions: { [TASKS]: {} } },
};
const FAST = { minPollIntervalMs: 1 };

type Answer = JsonObject | { error: JsonObject } | null;
type Sent = { method: string; params: JsonObject; headers: Record<string, string> };

/** A hand-written 2026-07-28 server end: answers each request with what `answer` returns; records what came. */
async function scripted(answer: (method: string, params: JsonObject) => Answer, options: Partial<ClientOptions> = {}) {
  const [clientEnd, serverEnd] = createInMemoryPair();
  const sent: Sent[] = [];
  const spy = new (class extends SpyTransport {
    override send(message: JsonRpcMessage, sendOptions?: SendOptions): Promise<void> {
      const m = message as { method?: string; params?: JsonObject };
      if (m.method !== undefined)
        sent.push({ method: m.method, params: m.params ?? {}, headers: { ...(sendOptions?.headers ?? {}) } });
      return super.send(message, sendOptions);
    }
  })(clientEnd);
  serverEnd.onmessage = (raw) => {
    const m = raw as { id?: number; method?: string; params?: JsonObject };
    if (m.id === undefined || m.method === undefined) return;
    const out = m.method === "server/discover" ? DISCOVERED : answer(m.method, m.params ?? {});
    if (out === null) return;
    void (serverEnd as InMemoryTransport).send(
      "error" in out
        ? ({ jsonrpc: "2.0", id: m.id, error: out.error } as JsonRpcMessage)
        : ({ jsonrpc: "2.0", id: m.id, result: out } as JsonRpcMessage),
    );
  };
  await serverEnd.start();
  const client = await Client.connect(spy, { clientInfo: { name: "c", version: "1" }, ...options });
  cleanup(() => client.peer.close());
  const of = (method: string) => sent.filter((m) => m.method === method);
  return { client, sent, of };
}

let clock = Date.parse("2026-08-01T00:00:00Z");
/** A Task as the extension sends it; each one a millisecond later than the last. */
function task(id: string, status: string, extra: JsonObject = {}): JsonObject {
  clock += 1;
  return {
    taskId: id,
    status,
    createdAt: "2026-08-01T00:00:00Z",
    lastUpdatedAt: new Date(clock).toISOString(),
    ttlMs: 60_000,
    pollIntervalMs: 1,
    ...extra,
  };
}
/** A CreateTaskResult, as old as the task (the states polled afterwards are all newer). */
const created = (id: string, extra: JsonObject = {}) => ({
  resultType: "task",
  ...task(id, "working", { lastUpdatedAt: "2026-08-01T00:00:00Z", ...extra }),
});
const got = (t: JsonObject) => ({ resultType: "complete", ...t });
const text = (value: string) => ({ content: [{ type: "text", text: value }] });

/** A server whose one task runs through `states` (one per tasks/get; the last one stays). */
function through(states: JsonObject[], extra: (method: string, params: JsonObject) => Answer = () => ({})) {
  let polls = 0;
  return (method: string, params: JsonObject): Answer => {
    if (method === "tools/call") return created("t1");
    if (method === "tasks/get") return got(states[Math.min(polls++, states.length - 1)]!);
    if (method === "tasks/update" || method === "tasks/cancel")
      return extra(method, params) ?? { resultType: "complete" };
    return extra(method, params);
  };
}

describe("declaring the extension", () => {
  it("every 2026 request's envelope declares it beside the app's own extensions; tasksExtension: false leaves it out", async () => {
    const on = await scripted(() => text("x"), { capabilities: { extensions: { "example.com/x": { a: 1 } } } });
    await on.client.callTool({ name: "t" });
    expect(on.of("tools/call")[0]!.params._meta).toMatchObject({
      [CAPABILITIES_KEY]: { extensions: { "example.com/x": { a: 1 }, [TASKS]: {} } },
    });
    const off = await scripted(() => text("x"), { tasksExtension: false, capabilities: { elicitation: {} } });
    await off.client.callTool({ name: "t" });
    expect((off.of("tools/call")[0]!.params._meta as JsonObject)[CAPABILITIES_KEY]).toEqual({ elicitation: {} });
    // Nor are the extension's requests sent: the revision has no such request.
    await expect(attachTask(off.client.peer, "t1")).rejects.toMatchObject({ code: -32601 });
    expect(off.of("tasks/get")).toEqual([]);
  });

  it("a task answer is taken only when declared and only for tools/call: otherwise an InvalidResultError", async () => {
    const off = await scripted(() => created("t1"), { tasksExtension: false });
    await expect(off.client.callTool({ name: "t" })).rejects.toBeInstanceOf(InvalidResultError);
    expect(off.of("tasks/get")).toEqual([]);
    const prompt = await scripted(() => created("t1"));
    await expect(prompt.client.getPrompt({ name: "p" })).rejects.toBeInstanceOf(InvalidResultError);
    expect(prompt.of("tasks/get")).toEqual([]);
  });

  it("a malformed CreateTaskResult or tasks/get answer is an InvalidResultError naming the member", async () => {
    const bad = await scripted(() => ({ resultType: "task", taskId: "t1", status: "sleeping" }));
    const created = await bad.client.callTool({ name: "t" }).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(InvalidResultError);
    expect((created as InvalidResultError).issues[0]!.pointer).toBe("/status");
    const badGet = await scripted(through([{ ...task("t1", "completed"), result: "not an object" }]));
    const polled = await badGet.client.callTool({ name: "t" }, FAST).catch((e: unknown) => e);
    expect(polled).toBeInstanceOf(InvalidResultError);
    expect((polled as InvalidResultError).issues[0]!.pointer).toBe("/result");
    expect(badGet.of("tasks/get")).toHaveLength(1);
  });
});

describe("a plain callTool answered with a task", () => {
  it("polls tasks/get with the envelope, Mcp-Name and the taskId, and resolves with the result as a direct answer reads", async () => {
    const { client, of } = await scripted(
      through([
        task("t1", "working"),
        {
          ...task("t1", "completed"),
          result: {
            resultType: "complete",
            ...text("done"),
            ttlMs: 5,
            _meta: { [SERVER_INFO_KEY]: { name: "s", version: "1" }, kept: true },
          },
        },
      ]),
    );
    const result = await client.callTool({ name: "slow" }, FAST);
    expect(result).toEqual({ ...text("done"), _meta: { kept: true } });
    const gets = of("tasks/get");
    expect(gets).toHaveLength(2);
    for (const get of gets) {
      expect(get.params).toMatchObject({ taskId: "t1" });
      expect((get.params._meta as JsonObject)["io.modelcontextprotocol/protocolVersion"]).toBe(MODERN);
      expect(get.headers).toMatchObject({ "mcp-method": "tasks/get", "mcp-name": "t1" });
    }
  });

  it("the task's result meets the CallToolResult guard", async () => {
    const { client, of } = await scripted(through([{ ...task("t1", "completed"), result: { content: "nope" } }]));
    const error = await client.callTool({ name: "t" }, FAST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).result).toEqual({ content: "nope" });
    expect(of("tasks/get")).toHaveLength(1);
  });

  it("a failed task rejects with its JSON-RPC error; a cancelled one with TaskCancelledError", async () => {
    const failed = await scripted(
      through([{ ...task("t1", "failed"), error: { code: -32050, message: "quota", data: { left: 0 } } }]),
    );
    const error = await failed.client.callTool({ name: "t" }, FAST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32050, message: "quota", data: { left: 0 } });
    const cancelled = await scripted(through([task("t1", "cancelled", { statusMessage: "stopped" })]));
    await expect(cancelled.client.callTool({ name: "t" }, FAST)).rejects.toBeInstanceOf(TaskCancelledError);
  });

  it("input_required: each key answered once through onElicit across polls, sent with tasks/update, then polled on", async () => {
    const ask = {
      method: "elicitation/create",
      params: { mode: "form", message: "name?", requestedSchema: { type: "object", properties: {} } },
    };
    let updated = false;
    let polls = 0;
    const { client, of } = await scripted(
      (method) => {
        if (method === "tools/call") return created("t1");
        if (method === "tasks/update") {
          updated = true;
          return { resultType: "complete" };
        }
        polls++;
        // The same key listed on two polls before the answer lands (the server's snapshot), then completion.
        if (!updated || polls < 3) return got(task("t1", "input_required", { inputRequests: { name: ask } }));
        return got({ ...task("t1", "completed"), result: text("hello Ada") });
      },
      { capabilities: { elicitation: {} } },
    );
    const asked: string[] = [];
    client.onElicit((params) => {
      asked.push(params.message);
      return { action: "accept", content: { name: "Ada" } };
    });
    expect((await client.callTool({ name: "greet" }, FAST)).content).toEqual(text("hello Ada").content);
    expect(asked).toEqual(["name?"]);
    const updates = of("tasks/update");
    expect(updates).toHaveLength(1);
    expect(updates[0]!.params).toMatchObject({
      taskId: "t1",
      inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
    });
    expect(updates[0]!.headers).toMatchObject({ "mcp-method": "tasks/update", "mcp-name": "t1" });
  });

  it("an input without a handler: tasks/cancel, then the call fails with -32601 naming the method", async () => {
    const { client, of } = await scripted(
      through([task("t1", "input_required", { inputRequests: { r: { method: "roots/list", params: {} } } })]),
    );
    await expect(client.callTool({ name: "t" }, FAST)).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("roots/list"),
    });
    expect(of("tasks/cancel").map((m) => m.params.taskId)).toEqual(["t1"]);
    expect(of("tasks/cancel")[0]!.headers).toMatchObject({ "mcp-method": "tasks/cancel", "mcp-name": "t1" });
    expect(of("tasks/update")).toEqual([]);
  });

  it("an input whose params fail the method's check is not shown to the app: the task is cancelled, -32602", async () => {
    const { client, of } = await scripted(
      through([
        task("t1", "input_required", { inputRequests: { e: { method: "elicitation/create", params: { x: 1 } } } }),
      ]),
      { capabilities: { elicitation: {} } },
    );
    let shown = 0;
    client.onElicit(() => {
      shown++;
      return { action: "decline" };
    });
    await expect(client.callTool({ name: "t" }, FAST)).rejects.toMatchObject({ code: -32602 });
    expect(shown).toBe(0);
    expect(of("tasks/cancel")).toHaveLength(1);
  });

  it("more inputs than maxTaskInputs: the task is cancelled and the call fails with TaskInputsExceededError", async () => {
    let n = 0;
    const ask = () => ({
      [`k${n++}`]: {
        method: "elicitation/create",
        params: { mode: "form", message: "?", requestedSchema: { type: "object", properties: {} } },
      },
    });
    const { client, of } = await scripted(
      (method) => {
        if (method === "tools/call") return created("t1");
        if (method === "tasks/get") return got(task("t1", "input_required", { inputRequests: ask() }));
        return { resultType: "complete" };
      },
      { capabilities: { elicitation: {} }, maxTaskInputs: 2 },
    );
    client.onElicit(() => ({ action: "decline" }));
    await expect(client.callTool({ name: "t" }, FAST)).rejects.toBeInstanceOf(TaskInputsExceededError);
    expect(of("tasks/update")).toHaveLength(2);
    expect(of("tasks/cancel")).toHaveLength(1);
  });

  it("aborting the call cancels the task (tasks/cancel) and rejects with RequestCancelledError", async () => {
    const { client, of } = await scripted(through([task("t1", "working")]));
    const controller = new AbortController();
    const call = client.callTool({ name: "t" }, { ...FAST, signal: controller.signal });
    await until(() => of("tasks/get").length >= 1);
    controller.abort("enough");
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    await until(() => of("tasks/cancel").length === 1);
  });
});

describe("callTool(params, { task }) on the extension: the TaskHandle", () => {
  it("a handle on the task made: status events, the server's poll interval within the bounds, result()", async () => {
    const { client, of } = await scripted(
      through([
        task("t1", "working", { statusMessage: "reading" }),
        task("t1", "working", { statusMessage: "writing", pollIntervalMs: 0 }),
        { ...task("t1", "completed"), result: text("ok") },
      ]),
    );
    const handle = await client.callTool({ name: "t" }, { task: { ttl: 5 }, minPollIntervalMs: 3 });
    expect(of("tools/call")[0]!.params.task).toBeUndefined();
    expect(handle.taskId).toBe("t1");
    expect(handle.state).toMatchObject({ taskId: "t1", status: "working", ttl: 60_000, pollInterval: 1 });
    expect(handle.pollInterval).toBe(3);
    const seen: TaskState[] = [];
    handle.onstatus((state) => seen.push(state));
    expect(await handle.result()).toEqual(text("ok"));
    expect(seen.map((s) => [s.status, s.statusMessage])).toEqual([
      ["working", "reading"],
      ["working", "writing"],
      ["completed", undefined],
    ]);
    expect(handle.status).toBe("completed");
    // Terminal: nothing more is asked.
    const polls = of("tasks/get").length;
    expect((await handle.refresh()).status).toBe("completed");
    expect(of("tasks/get")).toHaveLength(polls);
  });

  it("an answer given at once: a handle already completed with it, no taskId, nothing polled", async () => {
    const { client, of } = await scripted(() => text("now"));
    const handle = await client.callTool({ name: "t" }, { task: {} });
    expect(handle.status).toBe("completed");
    expect(handle.taskId).toBe("");
    expect(await handle.result()).toEqual(text("now"));
    expect((await handle.cancel()).status).toBe("completed");
    expect(of("tasks/get")).toEqual([]);
    expect(of("tasks/cancel")).toEqual([]);
  });

  it("cancel(): tasks/cancel's empty ack, one look, and the handle settles cancelled", async () => {
    const { client, of } = await scripted(through([task("t1", "working")]));
    const handle = await client.callTool({ name: "t" }, { task: {}, ...FAST });
    const seen: string[] = [];
    handle.onstatus((s) => seen.push(s.status));
    const state = await handle.cancel();
    expect(state.status).toBe("cancelled");
    expect(of("tasks/cancel").map((m) => m.params.taskId)).toEqual(["t1"]);
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
    expect(seen.at(-1)).toBe("cancelled");
  });

  it("cancel() of a task that ended otherwise first keeps that end", async () => {
    let cancelled = false;
    const { client } = await scripted((method) => {
      if (method === "tools/call") return created("t1");
      if (method === "tasks/cancel") {
        cancelled = true;
        return { resultType: "complete" };
      }
      return got(cancelled ? { ...task("t1", "completed"), result: text("finished first") } : task("t1", "working"));
    });
    const handle = await client.callTool({ name: "t" }, { task: {}, ...FAST });
    expect((await handle.cancel()).status).toBe("completed");
    expect(await handle.result()).toEqual(text("finished first"));
  });

  it("a CreateTaskResult that already says completed is looked at at once for its result", async () => {
    const { client, of } = await scripted((method) =>
      method === "tools/call"
        ? { resultType: "task", ...task("t1", "completed", { pollIntervalMs: 60_000 }) }
        : got({ ...task("t1", "completed"), result: text("fast") }),
    );
    const started = Date.now();
    expect(await client.callTool({ name: "t" })).toEqual(text("fast"));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(of("tasks/get")).toHaveLength(1);
  });

  it("attachTask picks a task up by id with tasks/get; the server's error for an unknown id passes through", async () => {
    const { client, of } = await scripted((method, params) => {
      if (params.taskId !== "t1") return { error: { code: -32602, message: "Task not found" } };
      return of("tasks/get").length < 2
        ? got(task("t1", "working"))
        : got({ ...task("t1", "completed"), result: text("later") });
    });
    const handle = await attachTask<{ content: unknown }>(client.peer, "t1", FAST);
    expect(handle.status).toBe("working");
    expect(await handle.result()).toEqual(text("later"));
    await expect(attachTask(client.peer, "nope")).rejects.toMatchObject({ code: -32602 });
  });

  it("a poll's failure fails the handle with it", async () => {
    let polls = 0;
    const { client } = await scripted((method) => {
      if (method === "tools/call") return created("t1");
      return polls++ === 0 ? got(task("t1", "working")) : { error: { code: -32602, message: "Task has expired" } };
    });
    const handle = await client.callTool({ name: "t" }, { task: {}, ...FAST });
    await expect(handle.result()).rejects.toMatchObject({ code: -32602, message: "Task has expired" });
  });

  it("nothing is polled while no one waits", async () => {
    const { client, of } = await scripted(through([task("t1", "working")]));
    await client.callTool({ name: "t" }, { task: {}, ...FAST });
    await sleep(30);
    expect(of("tasks/get")).toEqual([]);
  });
});
