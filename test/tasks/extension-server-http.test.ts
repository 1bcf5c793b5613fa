// The server side of the Tasks extension over Streamable HTTP's per-request lane: tasks outlive the request (and session) that made them, bound to the principal when there is one; taskStart "handler" rounds; Mcp-Name is the task id.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ServerSession } from "../../runtime/mcp/lifecycle.js";
import type { TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import type { StreamableHttpServerOptions } from "../../runtime/transports/http/server/options.js";
import { listenHttp } from "../../runtime/transports/http/server/listen.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { gate, until } from "../kit/timing.js";
import {
  TASKS_EXTENSION_ID,
  errorOf,
  expectCreateTaskResult,
  heldUntil,
  modernMeta,
  pollStatus,
  resultOf,
  withoutMeta,
} from "../kit/tasks-extension.js";
import { post, readSse } from "../http/helpers.js";
import { makeServer, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

const form = (message: string) => ({
  message,
  requestedSchema: { type: "object" as const, properties: { v: { type: "string" as const } }, required: ["v"] },
});

/** What the tools saw: abort reasons and the task each handler found itself running as. */
interface Seen {
  aborted: unknown[];
  taskIds: (string | undefined)[];
}

/**
 * A task server behind the HTTP endpoint on 127.0.0.1 (listenHttp), every transport connected to it; `sessions`
 * are the sessions it opened, one per 2026-07-28 request.
 */
async function serve(tasks: TaskReceiverOptions = {}, options: Partial<StreamableHttpServerOptions> = {}) {
  const server: TaskServer = makeServer({ tasks });
  const hold = gate();
  const seen: Seen = { aborted: [], taskIds: [] };
  server.tool(
    "held",
    { taskSupport: "optional" },
    async (_args, ctx) => `held ${await heldUntil(hold.promise, ctx, seen)}`,
  );
  server.tool("ask-then-start", { taskSupport: "required", taskStart: "handler" }, async (_args, ctx) => {
    const answer = await ctx.elicit(form("name?"));
    await ctx.startTask();
    return `hello ${String(answer.content?.v)}`;
  });
  server.tool("start-then-hold", { taskSupport: "optional", taskStart: "handler" }, async (_args, ctx) => {
    await ctx.startTask();
    seen.taskIds.push(ctx.task?.taskId);
    return `held ${await heldUntil(hold.promise, ctx, seen)}`;
  });
  const sessions: ServerSession[] = [];
  const mcp = createStreamableHttpServer({
    ...options,
    path: "/mcp",
    onSession: async (transport) => {
      sessions.push(await server.connect(transport));
    },
  });
  const listening = await listenHttp(mcp.nodeListener, { host: "127.0.0.1", port: 0 });
  cleanup(async () => {
    server.tasks.close();
    await mcp.close();
    await server.close();
    await listening.close();
  });
  return { url: `${listening.origin}/mcp`, server, sessions, seen, release: hold.open };
}

let nextId = 1;

/** The Mcp-Name a 2026-07-28 client mirrors for `method`: the tool's name, or the task's id. */
function mcpName(method: string, params: JsonObject): string | undefined {
  if (method === "tools/call") return params.name as string;
  if (method.startsWith("tasks/")) return params.taskId as string;
  return undefined;
}

/** One 2026-07-28 request over HTTP with its mirrored headers; resolves with the HTTP status and the JSON-RPC reply. */
async function modern(
  url: string,
  method: string,
  params: JsonObject,
  options: { meta?: JsonObject; headers?: Record<string, string> } = {},
): Promise<{ status: number; reply: JsonObject }> {
  const headers: Record<string, string> = { "mcp-protocol-version": "2026-07-28", "mcp-method": method };
  const name = mcpName(method, params);
  if (name !== undefined) headers["mcp-name"] = name;
  const id = nextId++;
  const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: options.meta ?? modernMeta() } };
  const res = await post(url, body, { ...headers, ...options.headers });
  const reply = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? (await readSse(res)).messages.find((m) => m.id === id)
    : ((await res.json()) as JsonObject);
  expect(reply, `the reply to ${method}`).toBeDefined();
  return { status: res.status, reply: reply! };
}

/** The client's side, as `token`'s bearer when given. */
function client(url: string, token?: string) {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const result = async (method: string, params: JsonObject) =>
    resultOf((await modern(url, method, params, { headers })).reply, method);
  const get = (taskId: string) => result("tasks/get", { taskId });
  return {
    result,
    get,
    request: (method: string, params: JsonObject) => modern(url, method, params, { headers }),
    until: (taskId: string, status: string) => pollStatus(() => get(taskId), status),
  };
}

describe("the Tasks extension on the per-request lane", () => {
  it("without a principal, a task made in one request is found by later requests and outlives their sessions", async () => {
    const { url, server, sessions, release } = await serve();
    const c = client(url);
    const taskId = expectCreateTaskResult(await c.result("tools/call", { name: "held", arguments: {} }));
    expect(sessions).toHaveLength(1);
    // The request that made it is over, and its session with it.
    await until(() => !sessions[0]!.isOpen, 5000, "the creating request's session did not end");
    for (let poll = 0; poll < 3; poll++) expect(await c.get(taskId)).toMatchObject({ taskId, status: "working" });
    expect(sessions).toHaveLength(4);
    expect(new Set(sessions).size).toBe(4);
    await until(() => sessions.every((s) => !s.isOpen), 5000, "the polling requests' sessions did not end");
    expect(server.tasks.size).toBe(1);
    expect(await c.get(taskId)).toMatchObject({ taskId, status: "working" });
    release();
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "held released" }] } });
  });

  it("without a principal the limits count the client's address, not the request's session", async () => {
    const { url, release } = await serve({ maxActivePerRequestor: 1 });
    const c = client(url);
    const taskId = expectCreateTaskResult(await c.result("tools/call", { name: "held", arguments: {} }));
    const refused = await c.request("tools/call", { name: "held", arguments: {} });
    expect(errorOf(refused.reply)).toMatchObject({ code: -32000, data: { maxActivePerRequestor: 1 } });
    release();
    await c.until(taskId, "completed");
    expectCreateTaskResult(await c.result("tools/call", { name: "held", arguments: {} }));
  });

  it("without the opt-in, tasks/get is -32021 under 400; tasks/result is -32601 under 404", async () => {
    const { url, release } = await serve();
    const c = client(url);
    const taskId = expectCreateTaskResult(await c.result("tools/call", { name: "held", arguments: {} }));
    const gated = await modern(url, "tasks/get", { taskId }, { meta: modernMeta({ extension: false }) });
    expect(gated.status).toBe(400);
    expect(errorOf(gated.reply)).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
    });
    const dropped = await c.request("tasks/result", { taskId });
    expect(dropped.status).toBe(404);
    expect(errorOf(dropped.reply).code).toBe(-32601);
    release();
  });

  it("Mcp-Name of tasks/get must be the task's id: another value is refused with -32020", async () => {
    const { url, release } = await serve();
    const c = client(url);
    const taskId = expectCreateTaskResult(await c.result("tools/call", { name: "held", arguments: {} }));
    const mismatched = await modern(url, "tasks/get", { taskId }, { headers: { "mcp-name": "another-task" } });
    expect(mismatched.status).toBe(400);
    expect(errorOf(mismatched.reply).code).toBe(-32020);
    expect((await c.get(taskId)).status).toBe("working");
    release();
  });
});

describe("ownership over HTTP with authentication", () => {
  const authenticate = (request: { headers: Readonly<Record<string, string | undefined>> }) => {
    const auth = request.headers["authorization"];
    return auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
  };

  it("another principal's tasks/get, tasks/update and tasks/cancel of the id are -32602; the owner's later requests are served", async () => {
    const { url, release } = await serve({}, { authenticate });
    const alice = client(url, "alice");
    const bob = client(url, "bob");
    const taskId = expectCreateTaskResult(await alice.result("tools/call", { name: "held", arguments: {} }));
    const cases: [string, JsonObject][] = [
      ["tasks/get", { taskId }],
      ["tasks/update", { taskId, inputResponses: {} }],
      ["tasks/cancel", { taskId }],
    ];
    const unknown = errorOf((await bob.request("tasks/get", { taskId: "no-such-task" })).reply);
    for (const [method, params] of cases) {
      const refused = await bob.request(method, params);
      expect(refused.status).toBe(400);
      expect(errorOf(refused.reply, method)).toEqual(unknown);
    }
    expect(await alice.get(taskId)).toMatchObject({ taskId, status: "working" });
    release();
    expect((await alice.until(taskId, "completed")).status).toBe("completed");
  });
});

describe('taskStart: "handler" over HTTP', () => {
  it("a round of the call first, then the retry answers with a task that completes with the answer", async () => {
    const { url, server } = await serve();
    const c = client(url);
    const round = await c.result("tools/call", { name: "ask-then-start", arguments: {} });
    expect(round.resultType).toBe("input_required");
    expect(round).not.toHaveProperty("taskId");
    const [key] = Object.keys(round.inputRequests as JsonObject);
    expect(server.tasks.size).toBe(0);
    const created = await c.result("tools/call", {
      name: "ask-then-start",
      arguments: {},
      inputResponses: { [key!]: { action: "accept", content: { v: "ada" } } },
      requestState: round.requestState as string,
    });
    const taskId = expectCreateTaskResult(created);
    const done = await c.until(taskId, "completed");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "hello ada" }] } });
  });

  it("after ctx.startTask the handler runs on the task's signal: the request's end does not abort it, tasks/cancel does", async () => {
    const { url, sessions, seen } = await serve();
    const c = client(url);
    const taskId = expectCreateTaskResult(await c.result("tools/call", { name: "start-then-hold", arguments: {} }));
    expect(seen.taskIds).toEqual([taskId]);
    await until(() => !sessions[0]!.isOpen, 5000, "the creating request's session did not end");
    expect((await c.get(taskId)).status).toBe("working");
    expect(seen.aborted).toEqual([]);
    const ack = await c.result("tasks/cancel", { taskId });
    expect(withoutMeta(ack)).toEqual({ resultType: "complete" });
    expect((await c.until(taskId, "cancelled")).status).toBe("cancelled");
    expect(seen.aborted).toHaveLength(1);
  });
});
