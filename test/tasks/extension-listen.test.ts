// notifications/tasks on subscriptions/listen (the Tasks extension): the acknowledged taskIds, each change as tasks/get describes it, the -32021 without the extension.
import { afterEach, describe, expect, it } from "vitest";
import {
  McpServer,
  TaskReceiver,
  clientToServer,
  createInMemoryPair,
  isMessage,
  revisionTables,
  serverToClient,
} from "../../generated/sdk.js";

const EXTENSION = "io.modelcontextprotocol/tasks";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: any; error?: any };

/** A bare 2026-07-28 client on an in-memory link: every request enveloped, with or without the extension. */
async function rawClient(server: McpServer) {
  const [clientEnd, serverEnd] = createInMemoryPair();
  await server.connect(serverEnd);
  const received: Message[] = [];
  const waiting = new Map<number, (m: Message) => void>();
  clientEnd.onmessage = (raw) => {
    const m = raw as Message;
    if (m.id !== undefined && m.method === undefined) waiting.get(m.id)?.(m);
    else received.push(m);
  };
  await clientEnd.start();
  let next = 0;
  const send = (method: string, params: Record<string, unknown>, extension = true) => {
    const id = ++next;
    const capabilities = extension ? { elicitation: {}, extensions: { [EXTENSION]: {} } } : { elicitation: {} };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": capabilities,
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    };
    const answered = new Promise<Message>((resolve) => waiting.set(id, resolve));
    void clientEnd.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
    return { id, answered };
  };
  const request = async (method: string, params: Record<string, unknown>, extension = true) =>
    (await send(method, params, extension).answered) as Message;
  return { send, request, received, close: () => clientEnd.close() };
}

async function until<T>(read: () => T | undefined, what: string, ms = 3000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

let servers: McpServer[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
});

/** The tool waits for the test to open its gate, so the listen is acknowledged before the task changes. */
let openGate: () => void = () => undefined;

function makeServer() {
  const tasks = new TaskReceiver();
  const server = new McpServer({
    serverInfo: { name: "listen-tasks", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    revisions: revisionTables,
    tasks,
  });
  server.tool("confirm", { taskSupport: "optional" }, async (_args, ctx) => {
    await new Promise<void>((resolve) => (openGate = resolve));
    const answer = await ctx.elicit({
      message: "Sure?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
    });
    return `ok=${String(answer.content?.ok)}`;
  });
  servers.push(server);
  return server;
}

describe("notifications/tasks on subscriptions/listen", () => {
  it("acknowledges the tasks the listener may follow and sends each change as tasks/get describes it", async () => {
    const c = await rawClient(makeServer());
    const created = await c.request("tools/call", { name: "confirm", arguments: {} });
    expect(created.result.resultType).toBe("task");
    const taskId = created.result.taskId as string;
    const listen = c.send("subscriptions/listen", { notifications: { taskIds: [taskId, "not-a-task"] } });
    const ack = await until(
      () => c.received.find((m) => m.method === "notifications/subscriptions/acknowledged"),
      "the acknowledgement",
    );
    expect(ack.params?.notifications).toEqual({ taskIds: [taskId] });
    openGate();
    const parked = await until(
      () => c.received.find((m) => m.method === "notifications/tasks" && m.params?.status === "input_required"),
      "the input_required notification",
    );
    const got = await c.request("tasks/get", { taskId });
    const { _meta: _notified, ...notified } = parked.params!;
    const { resultType: _rt, _meta: _got, ...polled } = got.result;
    expect(notified).toEqual(polled);
    const key = Object.keys(got.result.inputRequests)[0]!;
    await c.request("tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { ok: true } } } });
    const done = await until(
      () => c.received.find((m) => m.method === "notifications/tasks" && m.params?.status === "completed"),
      "the completed notification",
    );
    expect(done.params).toMatchObject({
      taskId,
      status: "completed",
      result: { content: [{ type: "text", text: "ok=true" }] },
      _meta: { [SUBSCRIPTION_ID]: listen.id },
    });
    expect(typeof done.params?.ttlMs).toBe("number");
    await c.close();
  });

  it("refuses taskIds with -32021 when the listen does not declare the extension", async () => {
    const c = await rawClient(makeServer());
    const refused = await c.request("subscriptions/listen", { notifications: { taskIds: ["x"] } }, false);
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data).toEqual({ requiredCapabilities: { extensions: { [EXTENSION]: {} } } });
    await c.close();
  });

  it("another principal's task is not acknowledged", async () => {
    const server = makeServer();
    const [clientEnd, serverEnd] = createInMemoryPair({ serverInfo: { principal: "alice" } });
    await server.connect(serverEnd);
    const replies = new Map<number, Message>();
    const notes: Message[] = [];
    clientEnd.onmessage = (raw) => {
      const m = raw as Message;
      if (m.id !== undefined && m.method === undefined) replies.set(m.id, m);
      else notes.push(m);
    };
    await clientEnd.start();
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { [EXTENSION]: {} } },
    };
    void clientEnd.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "confirm", arguments: {}, _meta: meta },
    });
    const created = await until(() => replies.get(1), "the task");
    const taskId = created.result.taskId as string;
    // Bob, on another link, listens for Alice's task: it is not his to follow.
    const bob = await rawClient(server);
    bob.send("subscriptions/listen", { notifications: { taskIds: [taskId] } });
    const ack = await until(
      () => bob.received.find((m) => m.method === "notifications/subscriptions/acknowledged"),
      "the acknowledgement",
    );
    expect(ack.params?.notifications).toEqual({ taskIds: [] });
    await bob.close();
    await clientEnd.close();
  });
});
