// Capabilities: the server advertises exactly what it has handlers for, and the client refuses what was not advertised without sending.
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../generated/client.js";
import { Server } from "../../generated/server.js";
import { CapabilityError } from "../../runtime/rpc/errors.js";
import { McpServer } from "../../runtime/server/mcp-server.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { connect, makeServer, type Connected } from "./helpers.js";
import { sleep } from "../kit/timing.js";

const open: Connected[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe("advertised capabilities", () => {
  it("advertises nothing for an empty server, and answers only ping", async () => {
    const c = await connect(makeServer());
    open.push(c);
    expect(c.client.peer.serverCapabilities).toEqual({});
    await expect(c.client.ping()).resolves.toEqual({});
  });

  it("advertises exactly the categories that have registrations", async () => {
    const toolsOnly = makeServer();
    toolsOnly.tool("t", {}, () => "");
    expect(toolsOnly.capabilities).toEqual({ tools: { listChanged: true } });

    const everything = makeServer({ logging: true, subscriptions: true, listChanged: false });
    everything.tool("t", {}, () => "");
    everything.resourceTemplate("x://{id}", { name: "x" }, () => "");
    everything.prompt("p", {}, () => "");
    expect(everything.capabilities).toEqual({ tools: {}, resources: { subscribe: true }, prompts: {}, logging: {} });

    const c = await connect(everything);
    open.push(c);
    expect(c.client.peer.serverCapabilities).toEqual({
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      logging: {},
    });
  });

  it("serves a declared but empty category, so later registrations can be announced", async () => {
    const server = makeServer({ capabilities: { tools: {}, experimental: { x: {} } } });
    const c = await connect(server);
    open.push(c);
    expect(c.client.peer.serverCapabilities).toEqual({ tools: { listChanged: true }, experimental: { x: {} } });
    expect(await c.client.listTools()).toEqual({ tools: [] });
  });

  it("has no handlers for a category it does not advertise (-32601 on the wire)", async () => {
    const server = makeServer();
    server.tool("t", {}, () => "");
    // No client-side check in the way: write the requests to the wire ourselves.
    const answers: unknown[] = [];
    const [probeEnd, serverEnd] = createInMemoryPair();
    await server.connect(serverEnd);
    probeEnd.onmessage = (m) => answers.push(m);
    await probeEnd.start();
    await probeEnd.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "p", version: "1" } },
    });
    await probeEnd.send({ jsonrpc: "2.0", id: 2, method: "prompts/list" });
    await probeEnd.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    await sleep(10);
    expect(answers[1]).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32601, message: "Method not found: prompts/list" },
    });
    expect(answers[2]).toMatchObject({ id: 3, result: { tools: [{ name: "t" }] } });
    await probeEnd.close();
  });

  it("picks up a category registered after connect but before initialize", async () => {
    const server = makeServer();
    const [clientEnd, serverEnd] = createInMemoryPair();
    await server.connect(serverEnd);
    server.prompt("late", {}, () => "late prompt");
    const client = await Client.connect(clientEnd, { clientInfo: { name: "c", version: "1" } });
    open.push({ client, session: server.sessions[0], clientSent: [], close: () => client.peer.close() });
    expect(client.peer.serverCapabilities).toEqual({ prompts: { listChanged: true } });
    expect((await client.getPrompt({ name: "late" })).messages).toHaveLength(1);
  });
});

describe("client refusal of unadvertised methods", () => {
  it("rejects with CapabilityError and sends nothing", async () => {
    const server = makeServer();
    server.tool("t", {}, () => "");
    const c = await connect(server, { era: "legacy" });
    open.push(c);
    const before = c.clientSent.length;
    expect(c.clientSent.map((m) => ("method" in m ? m.method : "response"))).toEqual([
      "initialize",
      "notifications/initialized",
    ]);
    const calls = [
      c.client.listPrompts(),
      c.client.getPrompt({ name: "x" }),
      c.client.listResources(),
      c.client.readResource({ uri: "x://y" }),
      c.client.subscribe({ uri: "x://y" }),
      c.client.setLevel({ level: "info" }),
      c.client.complete({ ref: { type: "ref/prompt", name: "x" }, argument: { name: "a", value: "" } }),
    ];
    for (const call of calls) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CapabilityError);
      expect((error as CapabilityError).message).toMatch(/does not support/);
    }
    expect(c.clientSent.length).toBe(before);
    // An advertised method goes out.
    await c.client.listTools();
    expect(c.clientSent.length).toBe(before + 1);
  });
});

describe("construction", () => {
  it("accepts the generated Server.create as the session factory", async () => {
    const server = new McpServer({
      serverInfo: { name: "f", version: "1" },
      createSession: (settings) => Server.create(settings).peer,
    });
    server.tool("t", {}, () => "from factory");
    const c = await connect(server);
    open.push(c);
    expect((await c.client.callTool({ name: "t" })).content).toEqual([{ type: "text", text: "from factory" }]);
    expect(c.client.peer.serverInfo).toEqual({ name: "f", version: "1" });
  });

  it("refuses options without tables or factory", () => {
    expect(() => new McpServer({ serverInfo: { name: "x", version: "1" } } as never)).toThrow(/method tables/);
  });

  it("refuses a second tool, resource or prompt with the same name", () => {
    const server = makeServer();
    server.tool("t", {}, () => "");
    server.resource("x://1", { name: "x" }, () => "");
    server.prompt("p", {}, () => "");
    expect(() => server.tool("t", {}, () => "")).toThrow(/already registered/);
    expect(() => server.resource("x://1", { name: "x" }, () => "")).toThrow(/already registered/);
    expect(() => server.prompt("p", {}, () => "")).toThrow(/already registered/);
  });
});
