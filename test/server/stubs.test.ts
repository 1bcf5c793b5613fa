// The generated stubs on their own: a Server built with typed on* registrations and typed senders, driven by the generated Client.
import { describe, expect, it } from "vitest";
import { Client } from "../../generated/client.js";
import { Server } from "../../generated/server.js";
import type { LoggingMessageNotificationParams } from "../../generated/types.js";
import { requestPeer } from "../../runtime/server/context.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { until } from "../kit/timing.js";
import { closeAfterEach } from "../kit/cleanup.js";

const cleanup = closeAfterEach();

describe("generated Server and Client stubs", () => {
  it("round-trips typed handlers, and sends sampling and logging from inside a tools/call handler", async () => {
    const server = Server.create({
      serverInfo: { name: "stub", version: "1" },
      capabilities: { tools: {}, logging: {} },
    });
    server
      .onListTools(() => ({ tools: [{ name: "ask", inputSchema: { type: "object" } }] }))
      .onCallTool(async (params, ctx) => {
        // A Server over the request context: its typed senders send on behalf of this request.
        const forRequest = new Server(requestPeer(ctx));
        const answer = await forRequest.createMessage({
          messages: [{ role: "user", content: { type: "text", text: String(params.arguments?.q) } }],
          maxTokens: 5,
        });
        await server.notifyLoggingMessage({ level: "info", data: `sampled ${answer.model}` });
        return { content: [{ type: "text", text: (answer.content as { text: string }).text }] };
      });
    const [c, s] = createInMemoryPair();
    await server.peer.connect(s);
    const client = await Client.connect(c, { clientInfo: { name: "c", version: "1" }, capabilities: { sampling: {} } });
    cleanup(() => client.peer.close());
    const logs: LoggingMessageNotificationParams[] = [];
    client
      .onCreateMessage((p) => ({
        role: "assistant",
        model: "m1",
        content: { type: "text", text: `re: ${(p.messages[0].content as { text: string }).text}` },
      }))
      .onLoggingMessage((p) => void logs.push(p));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["ask"]);
    expect((await client.callTool({ name: "ask", arguments: { q: "hi" } })).content).toEqual([
      { type: "text", text: "re: hi" },
    ]);
    await until(() => logs.length === 1);
    expect(logs[0]).toEqual({ level: "info", data: "sampled m1" });
    expect(() =>
      requestPeer({ request: async () => ({}), notify: async () => {} }).onRequest("ping", () => ({})),
    ).toThrow(/cannot take handlers/);
  });

  it("rejects a result that fails the generated result guard on the client", async () => {
    const server = Server.create({ serverInfo: { name: "stub", version: "1" }, capabilities: { tools: {} } });
    // A tool without inputSchema: the client's guard refuses the result.
    server.onListTools(() => ({ tools: [{ name: "bad" }] }) as never);
    const [c, s] = createInMemoryPair();
    await server.peer.connect(s);
    const client = await Client.connect(c, { clientInfo: { name: "c", version: "1" } });
    cleanup(() => client.peer.close());
    await expect(client.listTools()).rejects.toMatchObject({ name: "InvalidResultError" });
  });
});
