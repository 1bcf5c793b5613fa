// End to end: the runtime's ClientSession and ServerSession talking over the Streamable HTTP transports.
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { DispatchTable, MethodSpec } from "../../runtime/rpc/dispatch.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ServerSession } from "../../runtime/mcp/lifecycle.js";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import {
  createStreamableHttpServer,
  type HttpServerTransport,
  type StreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { listen } from "../kit/net.js";
import { until } from "../kit/timing.js";
import { serverSession, clientSession } from "../kit/mcp-sessions.js";

/** Accepts any params: these tests are about the transport, not validation. */
function open(kind: "request" | "notification"): MethodSpec {
  return {
    kind,
    paramsType: "Params",
    resultType: kind === "request" ? "Result" : undefined,
    isParams: () => true,
    explainParams: () => [],
  };
}

const clientToServer: DispatchTable = {
  initialize: open("request"),
  ping: open("request"),
  "tools/call": open("request"),
  "notifications/initialized": open("notification"),
  "notifications/cancelled": open("notification"),
  "notifications/progress": open("notification"),
};
const serverToClient: DispatchTable = {
  ping: open("request"),
  "sampling/createMessage": open("request"),
  "notifications/progress": open("notification"),
  "notifications/message": open("notification"),
  "notifications/cancelled": open("notification"),
};

interface Running {
  url: string;
  mcp: StreamableHttpServer;
  sessions: { server: ServerSession; transport: HttpServerTransport }[];
  http: Server;
}

let running: Running | undefined;
const clients: ClientSession[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  if (running) {
    await running.mcp.close();
    running.http.closeAllConnections();
    await new Promise<void>((r) => running!.http.close(() => r()));
    running = undefined;
  }
});

async function start(options: Partial<StreamableHttpServerOptions> = {}): Promise<Running> {
  const sessions: Running["sessions"] = [];
  const mcp = createStreamableHttpServer({
    ...options,
    onSession: async (transport) => {
      const server = serverSession({
        serverInfo: { name: "e2e", version: "1" },
        capabilities: { tools: {}, logging: {} },
        progressInterval: 0,
      });
      server.onRequest("tools/call", async (params, context) => {
        const args = (params?.arguments ?? {}) as { steps?: number; dropAfter?: number; ask?: boolean };
        const steps = args.steps ?? 0;
        for (let i = 1; i <= steps; i++) {
          await context.progress(i, steps);
          // The server lets go of the connection mid-request (SEP-1699); the client must poll back.
          if (args.dropAfter === i) await transport.closeSseStream(context.requestId);
        }
        if (args.ask) {
          const answer = await context.request("sampling/createMessage", { messages: [], maxTokens: 1 });
          return { content: [{ type: "text", text: JSON.stringify(answer) }] };
        }
        await context.notify("notifications/message", {
          level: "info",
          data: `done by ${context.principal ?? "anonymous"}`,
        });
        return { content: [{ type: "text", text: `steps=${steps}` }] };
      });
      await server.connect(transport);
      sessions.push({ server, transport });
    },
  });
  const http = createServer(mcp.nodeListener);
  running = { url: `${(await listen(http)).origin}/mcp`, mcp, sessions, http };
  return running;
}

async function connectClient(
  url: string,
): Promise<{ client: ClientSession; transport: StreamableHttpClientTransport; messages: JsonObject[] }> {
  const client = clientSession({
    clientInfo: { name: "e2e-client", version: "1" },
    capabilities: { sampling: {} },
    progressInterval: 0,
  });
  clients.push(client);
  const messages: JsonObject[] = [];
  client.onNotification("notifications/message", (params) => void messages.push(params ?? {}));
  client.onRequest("sampling/createMessage", async () => ({
    role: "assistant",
    content: { type: "text", text: "hi" },
    model: "m",
  }));
  const transport = new StreamableHttpClientTransport({ url });
  await client.connect(transport);
  return { client, transport, messages };
}

describe("ClientSession <-> ServerSession over Streamable HTTP", () => {
  it("handshakes, negotiates the version header, and calls a tool with progress", async () => {
    const { url, sessions } = await start();
    const { client, transport } = await connectClient(url);
    expect(client.protocolVersion).toBe("2025-11-25");
    expect(transport.protocolVersion).toBe("2025-11-25");
    expect(transport.sessionId).toBe(sessions[0].transport.sessionId);
    const seen: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "t", arguments: { steps: 3 } },
      { onProgress: (p) => seen.push(p.progress) },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "steps=3" }] });
    expect(seen).toEqual([1, 2, 3]);
    await until(() => sessions[0].server.initialized);
  });

  it("completes a tool call after the server drops the connection mid-request", async () => {
    const { url } = await start({ retryMs: 20 });
    const { client, messages } = await connectClient(url);
    const seen: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "t", arguments: { steps: 4, dropAfter: 2 } },
      { onProgress: (p) => seen.push(p.progress) },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "steps=4" }] });
    expect(seen).toEqual([1, 2, 3, 4]);
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ data: "done by anonymous" });
  });

  it("carries a server-to-client request made while serving a tool call", async () => {
    const { url } = await start({ responseMode: "json" });
    const { client } = await connectClient(url);
    const result = await client.request("tools/call", { name: "t", arguments: { ask: true } });
    expect(JSON.parse((result.content as { text: string }[])[0].text)).toMatchObject({ model: "m" });
  });

  it("a session the server forgot while nothing was in flight is opened again before the next request", async () => {
    const { url, sessions } = await start();
    const transport = new StreamableHttpClientTransport({ url, reconnect: { maxAttempts: 2, initialDelayMs: 10 } });
    const client = clientSession({
      clientInfo: { name: "e2e-client", version: "1" },
      progressInterval: 0,
      reconnect: async () => new StreamableHttpClientTransport({ url }),
    });
    clients.push(client);
    const expired: Error[] = [];
    transport.onsessionexpired = (error) => void expired.push(error); // the app's own callback still runs
    await client.connect(transport);
    const oldId = transport.sessionId;
    await until(() => sessions.length === 1 && sessions[0].server.initialized);
    // The server ends the session: only the standalone GET stream notices (its reconnect gets 404).
    await sessions[0].transport.close();
    await until(() => expired.length === 1);
    await client.whenConnected();
    expect(transport.sessionId).toBeDefined();
    expect(transport.sessionId).not.toBe(oldId);
    const result = await client.request("tools/call", { name: "t", arguments: { steps: 0 } });
    expect(result).toEqual({ content: [{ type: "text", text: "steps=0" }] });
    expect(sessions).toHaveLength(2);
  });

  it("closing the client ends the server session", async () => {
    const { url, sessions, mcp } = await start();
    const { client } = await connectClient(url);
    let closed = false;
    sessions[0].server.onclose = () => (closed = true);
    await client.close();
    await until(() => closed);
    expect(mcp.sessions.size).toBe(0);
  });
});
