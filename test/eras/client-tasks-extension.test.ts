// Our client against our McpServer on MCP 2026-07-28's Tasks extension, in memory, over stdio and Streamable HTTP: the task made, polled, answered through tasks/update, cancelled, failed; a plain call's final result; the extension turned off.
import { describe, expect, it } from "vitest";
import { Client, type ClientOptions } from "../../generated/client.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import type { SendOptions, Transport } from "../../runtime/rpc/transport.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import { listenHttp } from "../../runtime/transports/http/server/listen.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { TaskCancelledError, attachTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import type { TaskState } from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { bundledForNode } from "../kit/bundle.js";
import { tasksServer } from "./fixtures/tasks-extension-server.js";

const cleanup = closeAfterEach();
const TASKS = "io.modelcontextprotocol/tasks";
const FAST = { minPollIntervalMs: 1 };
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

interface Sent {
  readonly method: string;
  readonly params: JsonObject;
  readonly headers: Readonly<Record<string, string>>;
}

/** The transport as is (every member the session may look for), with each request it sends recorded. */
function recorded(inner: Transport, sent: Sent[]): Transport {
  return new Proxy(inner, {
    get(target, key) {
      if (key === "send")
        return (message: JsonRpcMessage, options?: SendOptions) => {
          const m = message as { method?: string; params?: JsonObject; id?: unknown };
          if (m.method !== undefined && m.id !== undefined)
            sent.push({ method: m.method, params: m.params ?? {}, headers: { ...(options?.headers ?? {}) } });
          return target.send(message, options);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** What the HTTP server saw of each POST: the routing headers an intermediary reads. */
interface Routed {
  readonly method: string | undefined;
  readonly name: string | undefined;
}

interface Harness {
  readonly name: string;
  /** A transport to a fresh connection to the server; `routed` fills with the HTTP POSTs' headers (HTTP only). */
  open(): Promise<{ transport: Transport; routed: Routed[] | undefined }>;
}

const bundle = bundledForNode("test/eras/fixtures/tasks-extension-child.ts", "tasks-extension-child");

const inMemory: Harness = {
  name: "in memory",
  async open() {
    const server = tasksServer();
    const [clientEnd, serverEnd] = createInMemoryPair();
    await server.connect(serverEnd);
    cleanup(() => server.close());
    return { transport: clientEnd, routed: undefined };
  },
};

const stdio: Harness = {
  name: "stdio",
  async open() {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bundle()], stderr: "ignore" });
    return { transport, routed: undefined };
  },
};

const http: Harness = {
  name: "Streamable HTTP",
  async open() {
    const server = tasksServer();
    const routed: Routed[] = [];
    const mcp = createStreamableHttpServer({ onSession: (t) => server.connect(t).then(() => undefined) });
    const listening = await listenHttp(
      (req, res) => {
        if (req.method === "POST")
          routed.push({
            method: req.headers["mcp-method"] as string | undefined,
            name: req.headers["mcp-name"] as string | undefined,
          });
        mcp.nodeListener(req, res);
      },
      { host: "127.0.0.1", port: 0 },
    );
    cleanup(async () => {
      await mcp.close();
      await listening.close();
      await server.close();
    });
    return { transport: new StreamableHttpClientTransport({ url: `${listening.origin}/mcp` }), routed };
  },
};

type ToolResult = { content: { type: string; text: string }[] };

describe.each([inMemory, stdio, http])("the Tasks extension, client and server, $name", (harness) => {
  async function connected(options: Partial<ClientOptions> = {}) {
    const { transport, routed } = await harness.open();
    const sent: Sent[] = [];
    const client = await Client.connect(recorded(transport, sent), {
      clientInfo: { name: "tasks-client", version: "1.0.0" },
      capabilities: { elicitation: {} },
      ...options,
    });
    cleanup(() => client.peer.close());
    expect(client.peer.era).toBe("modern");
    const of = (method: string) => sent.filter((m) => m.method === method);
    return { client, sent, of, routed };
  }

  it("discover names the extension; a plain callTool becomes a task the client follows to its final result", async () => {
    const { client, of } = await connected();
    expect(client.peer.serverCapabilities?.extensions).toMatchObject({ [TASKS]: {} });
    const result = await client.callTool({ name: "steps", arguments: { n: 2 } }, FAST);
    expect(result).toEqual({ content: [{ type: "text", text: "done 2 steps" }] });
    expect((of("tools/call")[0]!.params._meta as JsonObject)[CAPABILITIES_KEY]).toMatchObject({
      extensions: { [TASKS]: {} },
    });
    expect(of("tasks/get").length).toBeGreaterThan(0);
    expect(of("tasks/result")).toEqual([]);
  });

  it("callTool(params, { task }): a handle, polled at the server's pace, with status events and the result", async () => {
    const { client, of } = await connected();
    const handle = await client.callTool({ name: "steps", arguments: { n: 3 } }, { task: {}, ...FAST });
    expect(handle.taskId).not.toBe("");
    expect(handle.state).toMatchObject({ taskId: handle.taskId, status: "working", pollInterval: 10 });
    expect(typeof handle.state.ttl).toBe("number");
    expect(handle.pollInterval).toBe(10);
    const seen: TaskState[] = [];
    handle.onstatus((state) => seen.push(state));
    const result = await handle.result();
    expect(result.content).toEqual([{ type: "text", text: "done 3 steps" }]);
    expect(seen.some((s) => s.status === "working" && /^step \d of 3$/.test(s.statusMessage ?? ""))).toBe(true);
    expect(seen.at(-1)?.status).toBe("completed");
    expect(handle.status).toBe("completed");
    for (const get of of("tasks/get")) expect(get.params.taskId).toBe(handle.taskId);
  });

  it("an elicitation inside the task is answered through onElicit and sent with tasks/update", async () => {
    const { client, of } = await connected();
    const asked: string[] = [];
    client.onElicit((params) => {
      asked.push(params.message);
      return { action: "accept", content: { name: "Ada" } };
    });
    const result = await client.callTool({ name: "greet" }, FAST);
    expect(result.content).toEqual([{ type: "text", text: "hello Ada" }]);
    expect(asked).toEqual(["What is your name?"]);
    const updates = of("tasks/update");
    expect(updates).toHaveLength(1);
    const responses = updates[0]!.params.inputResponses as JsonObject;
    expect(Object.values(responses)).toEqual([{ action: "accept", content: { name: "Ada" } }]);
  });

  it("an elicitation without a handler: the task is cancelled and the call fails with -32601 naming the method", async () => {
    const { client, of } = await connected();
    await expect(client.callTool({ name: "greet" }, FAST)).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("elicitation/create"),
    });
    expect(of("tasks/cancel")).toHaveLength(1);
    expect(of("tasks/update")).toEqual([]);
  });

  it("cancel(): tasks/cancel, the handle settles cancelled, and the server shows the task cancelled", async () => {
    const { client, of } = await connected();
    const handle = await client.callTool({ name: "forever" }, { task: {}, ...FAST });
    const state = await handle.cancel();
    expect(state.status).toBe("cancelled");
    expect(of("tasks/cancel").map((m) => m.params.taskId)).toEqual([handle.taskId]);
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
    // The server's own account of it, from a handle picked up by id.
    const again = await attachTask(client.peer, handle.taskId, FAST);
    expect(again.status).toBe("cancelled");
    await expect(again.result()).rejects.toBeInstanceOf(TaskCancelledError);
  });

  it("a failed task: the JSON-RPC error the handler threw, from the plain call and from the handle", async () => {
    const { client } = await connected();
    const plain = await client.callTool({ name: "crash" }, FAST).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(RpcError);
    expect(plain).toMatchObject({ code: -32050, message: "quota exceeded", data: { left: 0 } });
    const handle = await client.callTool({ name: "crash" }, { task: {}, ...FAST });
    await expect(handle.result()).rejects.toMatchObject({ code: -32050, message: "quota exceeded" });
    expect(handle.status).toBe("failed");
  });

  it("attachTask on 2026-07-28 follows a task by its id to its result", async () => {
    const { client } = await connected();
    const handle = await client.callTool({ name: "steps", arguments: { n: 1 } }, { task: {}, ...FAST });
    const attached = await attachTask<ToolResult>(client.peer, handle.taskId, FAST);
    expect((await attached.result()).content).toEqual([{ type: "text", text: "done 1 steps" }]);
  });

  it("tasksExtension: false: no declaration, the same tool answers synchronously, a required one is refused -32021", async () => {
    const { client, of } = await connected({ tasksExtension: false });
    const result = await client.callTool({ name: "steps", arguments: { n: 1 } });
    expect(result.content).toEqual([{ type: "text", text: "done 1 steps" }]);
    const declared = (of("tools/call")[0]!.params._meta as JsonObject)[CAPABILITIES_KEY] as JsonObject;
    expect(declared.extensions).toBeUndefined();
    expect(of("tasks/get")).toEqual([]);
    const handle = await client.callTool({ name: "steps", arguments: { n: 1 } }, { task: {} });
    expect(handle.status).toBe("completed");
    expect((await handle.result()).content).toEqual([{ type: "text", text: "done 1 steps" }]);
    await expect(client.callTool({ name: "required" })).rejects.toMatchObject({ code: -32021 });
  });

  it("tasks/get, tasks/update and tasks/cancel carry Mcp-Method and Mcp-Name: <taskId> (the HTTP server sees them)", async () => {
    const { client, of, routed } = await connected();
    client.onElicit(() => ({ action: "decline" }));
    const handle = await client.callTool({ name: "greet" }, { task: {}, ...FAST });
    expect((await handle.result()).content).toEqual([{ type: "text", text: "no name (decline)" }]);
    const stopped = await client.callTool({ name: "forever" }, { task: {}, ...FAST });
    await stopped.cancel();
    const tasks = [...of("tasks/get"), ...of("tasks/update"), ...of("tasks/cancel")];
    expect(new Set(tasks.map((m) => m.method))).toEqual(new Set(["tasks/get", "tasks/update", "tasks/cancel"]));
    for (const m of tasks)
      expect(m.headers).toMatchObject({ "mcp-method": m.method, "mcp-name": m.params.taskId as string });
    if (harness !== http) return;
    const seen = routed!.filter((r) => r.method?.startsWith("tasks/") === true);
    expect(seen).toHaveLength(tasks.length);
    expect(seen.filter((r) => r.method === "tasks/update")).toEqual([{ method: "tasks/update", name: handle.taskId }]);
    expect(seen.filter((r) => r.method === "tasks/cancel")).toEqual([{ method: "tasks/cancel", name: stopped.taskId }]);
    for (const r of seen) expect([handle.taskId, stopped.taskId]).toContain(r.name);
  });
});
