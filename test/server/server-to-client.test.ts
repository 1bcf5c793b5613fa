// From inside a tool handler: sampling, elicitation and roots requests to the client, and logging, list_changed and resource-updated notifications.
import { afterEach, describe, expect, it } from "vitest";
import { Server } from "../../generated/server.js";
import type { LoggingMessageNotificationParams } from "../../generated/types.js";
import { CapabilityError } from "../../runtime/rpc/errors.js";
import { LoggingDisabledError } from "../../runtime/server/context.js";
import { connect, makeServer, type Connected } from "./helpers.js";
import { until } from "../kit/timing.js";

const open: Connected[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const allClientCapabilities = { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } };

describe("server-to-client requests from a tool", () => {
  it("samples through the client (sampling/createMessage)", async () => {
    const server = makeServer();
    server.tool(
      "ask",
      { inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
      async ({ q }, ctx) => {
        const answer = await ctx.createMessage({
          messages: [{ role: "user", content: { type: "text", text: q } }],
          maxTokens: 50,
        });
        const content = answer.content as { type: string; text?: string };
        return `${answer.model} said ${content.text}`;
      },
    );
    const c = await connect(server, allClientCapabilities);
    open.push(c);
    const seen: unknown[] = [];
    c.client.onCreateMessage((params) => {
      seen.push(params.messages);
      return { role: "assistant", model: "echo-1", content: { type: "text", text: "pong" } };
    });
    const result = await c.client.callTool({ name: "ask", arguments: { q: "ping?" } });
    expect(result.content).toEqual([{ type: "text", text: "echo-1 said pong" }]);
    expect(seen).toEqual([[{ role: "user", content: { type: "text", text: "ping?" } }]]);
  });

  it("elicits input from the user (elicitation/create)", async () => {
    const server = makeServer();
    server.tool("confirm", {}, async (_args, ctx) => {
      const r = await ctx.elicit({
        message: "Proceed?",
        requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
      });
      return `${r.action}:${String(r.content?.ok)}`;
    });
    const c = await connect(server, allClientCapabilities);
    open.push(c);
    c.client.onElicit((params) => {
      expect(params.message).toBe("Proceed?");
      return { action: "accept", content: { ok: true } };
    });
    expect((await c.client.callTool({ name: "confirm" })).content).toEqual([{ type: "text", text: "accept:true" }]);
  });

  it("lists the client's roots (roots/list), also through the typed generated Server over ctx.peer", async () => {
    const server = makeServer();
    server.tool("roots", {}, async (_args, ctx) => {
      const plain = await ctx.listRoots();
      const typed = await new Server(ctx.peer).listRoots();
      return [...plain.roots, ...typed.roots].map((r) => r.uri).join(" ");
    });
    const c = await connect(server, allClientCapabilities);
    open.push(c);
    c.client.onListRoots(() => ({ roots: [{ uri: "file:///work", name: "work" }] }));
    expect((await c.client.callTool({ name: "roots" })).content).toEqual([
      { type: "text", text: "file:///work file:///work" },
    ]);
  });

  it("refuses a request the client did not advertise, before it reaches the wire", async () => {
    const server = makeServer();
    let refusal: unknown;
    server.tool("ask", {}, async (_args, ctx) => {
      refusal = await ctx.createMessage({ messages: [], maxTokens: 1 }).catch((e: unknown) => e);
      return "done";
    });
    const c = await connect(server, { capabilities: {} });
    open.push(c);
    let asked = false;
    c.client.onCreateMessage(() => {
      asked = true;
      return { role: "assistant", model: "m", content: { type: "text", text: "" } };
    });
    expect((await c.client.callTool({ name: "ask" })).content).toEqual([{ type: "text", text: "done" }]);
    expect(refusal).toBeInstanceOf(CapabilityError);
    expect(asked).toBe(false);
  });
});

describe("notifications from a tool", () => {
  it("logs through ctx.log, honouring the level the client set", async () => {
    const server = makeServer({ logging: true });
    server.tool("work", {}, async (_args, ctx) => {
      await ctx.log("debug", "noise");
      await ctx.log("warning", { disk: "low" }, "storage");
      await ctx.log("error", "failed once");
      return "ok";
    });
    const c = await connect(server);
    open.push(c);
    const logs: LoggingMessageNotificationParams[] = [];
    c.client.onLoggingMessage((p) => void logs.push(p));
    await c.client.setLevel({ level: "warning" });
    await c.client.callTool({ name: "work" });
    await until(() => logs.length === 2);
    expect(logs).toEqual([
      { level: "warning", logger: "storage", data: { disk: "low" } },
      { level: "error", data: "failed once" },
    ]);
  });

  it("rejects ctx.log when logging was not enabled (so an undeclared capability is never used)", async () => {
    const server = makeServer();
    let error: unknown;
    server.tool("work", {}, async (_args, ctx) => {
      error = await ctx.log("info", "x").catch((e: unknown) => e);
      return "ok";
    });
    const c = await connect(server);
    open.push(c);
    await c.client.callTool({ name: "work" });
    expect(error).toBeInstanceOf(LoggingDisabledError);
  });

  it.each(["legacy", "auto"] as const)(
    "announces tools registered and removed by a tool with one tools/list_changed per change (era %s)",
    async (era) => {
      const server = makeServer();
      server.tool("grow", {}, () => {
        const reg = server.tool("extra", {}, () => "extra ran");
        server.prompt("p", {}, () => "prompt");
        setTimeout(() => reg.remove(), 20);
        return "grown";
      });
      const c = await connect(server, { era });
      open.push(c);
      expect(c.client.peer.serverCapabilities).toEqual({ tools: { listChanged: true } });
      let toolChanges = 0;
      let promptChanges = 0;
      c.client.onToolListChanged(() => void toolChanges++);
      c.client.onPromptListChanged(() => void promptChanges++);
      await c.client.peer.subscriptionsReady();
      await c.client.callTool({ name: "grow" });
      await until(() => toolChanges === 1);
      expect((await c.client.callTool({ name: "extra" })).content).toEqual([{ type: "text", text: "extra ran" }]);
      await until(() => toolChanges === 2);
      expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(["grow"]);
      // prompts were not advertised to this client, so it hears nothing about them.
      expect(promptChanges).toBe(0);
    },
  );

  it.each(["legacy", "auto"] as const)(
    "notifies subscribers of a resource update made inside a tool (era %s)",
    async (era) => {
      const server = makeServer({ subscriptions: true });
      let value = "v1";
      server.resource("memo://value", { name: "value" }, () => value);
      server.tool(
        "set",
        { inputSchema: { type: "object", properties: { v: { type: "string" } }, required: ["v"] } },
        async ({ v }) => {
          value = v;
          await server.resourceUpdated("memo://value");
          return "set";
        },
      );
      const subscribed = await connect(server, { era });
      const other = await connect(server, { era });
      open.push(subscribed, other);
      expect(subscribed.client.peer.serverCapabilities?.resources).toEqual({ subscribe: true, listChanged: true });
      const updates: string[] = [];
      const otherUpdates: string[] = [];
      subscribed.client.onResourceUpdated((p) => void updates.push(p.uri));
      other.client.onResourceUpdated((p) => void otherUpdates.push(p.uri));
      await subscribed.client.subscribe({ uri: "memo://value" });
      await other.client.callTool({ name: "set", arguments: { v: "v2" } });
      await until(() => updates.length === 1);
      expect(updates).toEqual(["memo://value"]);
      expect((await subscribed.client.readResource({ uri: "memo://value" })).contents).toEqual([
        { uri: "memo://value", text: "v2" },
      ]);
      await subscribed.client.unsubscribe({ uri: "memo://value" });
      await other.client.callTool({ name: "set", arguments: { v: "v3" } });
      await other.client.ping();
      await subscribed.client.ping();
      expect(updates).toHaveLength(1);
      expect(otherUpdates).toEqual([]);
    },
  );
});
