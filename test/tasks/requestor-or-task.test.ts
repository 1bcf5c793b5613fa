// requestOrTask: a plain request unless the server requires a task for the tool; what the client learns from tools/list.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import { Session } from "../../runtime/rpc/session/session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { requestOrTask, watchToolTaskSupport } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { ScriptedReceiver, clientWiring, connectToReceiver, type ToolEntry } from "./requestor-harness.js";

const onClose = closeAfterEach();

const TOOLS: ToolEntry[] = [
  { name: "needs-task", taskSupport: "required" },
  { name: "may-task", taskSupport: "optional" },
  { name: "no-task", taskSupport: "forbidden" },
  { name: "says-nothing" },
];

async function setup(options: { capabilities?: JsonObject; tools?: ToolEntry[]; pageSize?: number } = {}) {
  const receiver = new ScriptedReceiver();
  receiver.tools = options.tools ?? TOOLS;
  receiver.pageSize = options.pageSize ?? 100;
  // Tasks finish on their first poll unless a test says otherwise.
  receiver.onGet = (task) => receiver.complete(task, { content: [{ type: "text", text: `task ${task.params.name}` }] });
  const pair = await connectToReceiver(receiver, options.capabilities === undefined ? {} : options);
  onClose(() => pair.server.close());
  onClose(() => pair.client.close());
  return { receiver, ...pair };
}

type CallResult = { content: { type: string; text: string }[] };
const FAST = { minPollIntervalMs: 1 };

describe("requestOrTask", () => {
  const cases: { tool: string; asTask: boolean }[] = [
    { tool: "needs-task", asTask: true },
    { tool: "may-task", asTask: false },
    { tool: "no-task", asTask: false },
    { tool: "says-nothing", asTask: false },
  ];
  for (const c of cases) {
    it(`calls ${c.tool} ${c.asTask ? "as a task" : "plainly"}`, async () => {
      const { receiver, client } = await setup();
      watchToolTaskSupport(client);
      await client.request("tools/list", undefined);
      const result = await requestOrTask<CallResult>(client, "tools/call", { name: c.tool }, FAST);
      expect(result.content[0].text).toBe(c.asTask ? `task ${c.tool}` : `plain ${c.tool}`);
      expect(receiver.calls.create).toBe(c.asTask ? 1 : 0);
      expect(receiver.calls.plain).toBe(c.asTask ? 0 : 1);
      // What the app's own tools/list said was enough: no second listing.
      expect(receiver.calls.toolsList).toBe(1);
    });
  }

  it("against a server without the tasks capability, always a plain call (and no tools/list of its own)", async () => {
    const { receiver, client } = await setup({ capabilities: { tools: {} }, tools: [{ name: "plain-only" }] });
    const result = await requestOrTask<CallResult>(client, "tools/call", { name: "plain-only" }, FAST);
    expect(result.content[0].text).toBe("plain plain-only");
    expect(receiver.calls).toMatchObject({ create: 0, plain: 1, toolsList: 0 });
  });

  it("when no list named the tool yet, reads every page once and remembers", async () => {
    const { receiver, client } = await setup({ pageSize: 1 });
    const first = await requestOrTask<CallResult>(client, "tools/call", { name: "says-nothing" }, FAST);
    expect(first.content[0].text).toBe("plain says-nothing");
    expect(receiver.calls.toolsList).toBe(TOOLS.length);
    const second = await requestOrTask<CallResult>(client, "tools/call", { name: "needs-task" }, FAST);
    expect(second.content[0].text).toBe("task needs-task");
    // A tool the whole list does not name is not looked for again.
    await requestOrTask(client, "tools/call", { name: "unknown" }, FAST);
    await requestOrTask(client, "tools/call", { name: "unknown" }, FAST);
    expect(receiver.calls.toolsList).toBe(TOOLS.length);
  });

  it("remembers at most maxTools tools; the others are called plainly", async () => {
    const { receiver, client } = await setup({
      tools: [{ name: "no-task" }, { name: "needs-task", taskSupport: "required" }],
    });
    watchToolTaskSupport(client, { maxTools: 1 });
    await client.request("tools/list", undefined);
    // Not remembered, so called plainly: this server then refuses it as the spec says.
    await expect(requestOrTask(client, "tools/call", { name: "needs-task" }, FAST)).rejects.toMatchObject({
      code: -32601,
    });
    expect(receiver.calls.create).toBe(0);
  });

  it("stops a discovery walk at maxToolListPages", async () => {
    const { receiver, client } = await setup({ pageSize: 1 });
    await requestOrTask(client, "tools/call", { name: "says-nothing" }, { ...FAST, maxToolListPages: 2 });
    expect(receiver.calls.toolsList).toBe(2);
    expect(receiver.calls.plain).toBe(1);
  });

  it("refuses a maxToolListPages that is not a whole number, whether or not a walk is needed", async () => {
    const { client } = await setup();
    await expect(requestOrTask(client, "tools/call", { name: "x" }, { maxToolListPages: 1.5 })).rejects.toThrow(
      RangeError,
    );
  });

  it("concurrent calls share one discovery walk", async () => {
    const { receiver, client } = await setup();
    await Promise.all([
      requestOrTask(client, "tools/call", { name: "needs-task" }, FAST),
      requestOrTask(client, "tools/call", { name: "needs-task" }, FAST),
    ]);
    expect(receiver.calls.toolsList).toBe(1);
    expect(receiver.calls.create).toBe(2);
  });

  it("forgets what it learnt when the server says its tools changed", async () => {
    const { receiver, client, server } = await setup();
    await requestOrTask(client, "tools/call", { name: "may-task" }, FAST);
    expect(receiver.calls.plain).toBe(1);
    receiver.tools = [{ name: "may-task", taskSupport: "required" }];
    await server.notify("notifications/tools/list_changed");
    await until(() => receiver.calls.toolsList === 1);
    const result = await requestOrTask<CallResult>(client, "tools/call", { name: "may-task" }, FAST);
    expect(result.content[0].text).toBe("task may-task");
    expect(receiver.calls.toolsList).toBe(2);
  });

  it("passes the task's JSON-RPC error on as the call's own", async () => {
    const { receiver, client } = await setup();
    receiver.onGet = (task) => receiver.fail(task, { code: -32050, message: "out of paint" });
    await expect(requestOrTask(client, "tools/call", { name: "needs-task" }, FAST)).rejects.toMatchObject({
      code: -32050,
      message: "out of paint",
    });
  });

  it("sends options.task as params.task when it runs as a task", async () => {
    const { receiver, client } = await setup();
    await requestOrTask(client, "tools/call", { name: "needs-task" }, { ...FAST, task: { ttl: 5_000 } });
    expect(receiver.only.params.task).toEqual({ ttl: 5_000 });
  });

  it("aborting a call that runs as a task cancels the task, as aborting a plain call cancels it", async () => {
    const { receiver, client } = await setup();
    receiver.onGet = undefined;
    const controller = new AbortController();
    const call = requestOrTask(client, "tools/call", { name: "needs-task" }, { ...FAST, signal: controller.signal });
    await until(() => receiver.calls.get > 0);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    await until(() => receiver.only.state.status === "cancelled");
    expect(receiver.calls.cancel).toBe(1);
  });

  it("on a peer that is not a client session, a plain request", async () => {
    const receiver = new ScriptedReceiver();
    receiver.tools = TOOLS;
    const [clientEnd, serverEnd] = createInMemoryPair();
    const server = new Session({ inbound: clientWiring.outbound, outbound: clientWiring.inbound });
    receiver.install(server);
    const client = new Session({ inbound: clientWiring.inbound, outbound: clientWiring.outbound });
    await server.connect(serverEnd);
    await client.connect(clientEnd);
    onClose(() => server.close());
    onClose(() => client.close());
    await expect(requestOrTask(client, "tools/call", { name: "may-task" })).resolves.toMatchObject({
      content: [{ text: "plain may-task" }],
    });
  });
});
