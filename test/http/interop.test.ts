// Interop with the official SDK (1.x): its client against our server, our client against its server.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListToolsRequestSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { initializeMessage, startServer, type RunningServer } from "./helpers.js";
import { listen } from "../kit/net.js";
import { sleep, until } from "../kit/timing.js";
import { closeAfterEach } from "../kit/cleanup.js";

const cleanup = closeAfterEach();

async function ourServer(options: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const s = await startServer(options);
  cleanup(() => s.stop());
  return s;
}

// The SDK's loose result schema keeps unknown members, so custom methods can be called with it.
const DoneResult = ResultSchema;

describe("SDK client -> our server", () => {
  it("connects, pings, receives progress, and terminates the session on close", async () => {
    const server = await ourServer();
    const client = new Client({ name: "sdk", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    expect(transport.sessionId).toBe(server.responder.transports[0].sessionId);
    await client.ping();
    const seen: number[] = [];
    const result = await client.request({ method: "progress", params: { count: 3 } }, DoneResult, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect((result as { done?: unknown }).done).toBe(3);
    expect(seen).toEqual([1, 2, 3]);
    await transport.terminateSession();
    await client.close();
    await until(() => server.responder.closed.length === 1);
  });

  it("survives SEP-1699 polling: the server closes every connection and the SDK client resumes", async () => {
    const server = await ourServer({ closeSseAfterMs: 40, retryMs: 10 });
    const client = new Client({ name: "sdk", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    cleanup(() => client.close());
    const pending = client.request({ method: "wait", params: { gate: "sdk", before: 1, after: 1 } }, DoneResult);
    await sleep(150);
    server.responder.open("sdk");
    expect(((await pending) as { done?: unknown }).done).toBe(2);
  });
});

describe("our client -> SDK server", () => {
  it("initializes, lists tools, opens the standalone stream and DELETEs on close", async () => {
    const transports = new Map<string, StreamableHTTPServerTransport>();
    let closedSessions = 0;
    const http = createServer(async (req, res) => {
      const sid = req.headers["mcp-session-id"];
      let transport = typeof sid === "string" ? transports.get(sid) : undefined;
      if (!transport) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, fresh),
        });
        fresh.onclose = () => closedSessions++;
        const server = new Server({ name: "sdk-server", version: "1" }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, async () => ({
          tools: [{ name: "t", inputSchema: { type: "object" } }],
        }));
        await server.connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res);
    });
    const listening = await listen(http);
    cleanup(async () => {
      for (const t of transports.values()) await t.close();
      await listening.close();
    });
    const url = `${listening.origin}/mcp`;

    const client = new StreamableHttpClientTransport({ url });
    const messages: JsonObject[] = [];
    const errors: Error[] = [];
    client.onmessage = (m) => messages.push(m as JsonObject);
    client.onerror = (e) => errors.push(e);
    await client.send(initializeMessage(1));
    await until(() => messages.some((m) => m.id === 1));
    expect(messages[0]).toMatchObject({ result: { serverInfo: { name: "sdk-server" } } });
    expect(client.sessionId).toBeDefined();
    expect(client.protocolVersion).toBe((messages[0].result as { protocolVersion: string }).protocolVersion);
    await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await client.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    await until(() => messages.some((m) => m.id === 2));
    expect(messages.find((m) => m.id === 2)).toMatchObject({ result: { tools: [{ name: "t" }] } });
    await client.close();
    await until(() => closedSessions === 1);
    expect(errors).toEqual([]);
  });
});
