// Streamable HTTP interop with the official SDK (1.x), end to end through the generated SDK: its client on our server, our client on its server.
import { createServer, type Server as HttpServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server as SdkServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport, type EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { createExampleServer } from "../../examples/http-server.js";
import {
  Client,
  StreamableHttpClientTransport,
  createStreamableHttpServer,
  type StreamableHttpServer,
} from "../../generated/sdk.js";
import { builtExample, spawnServer } from "../conformance/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { listen } from "../kit/net.js";
import { sleep, until } from "../kit/timing.js";

const cleanup = closeAfterEach();

/** `http` listening on loopback until the test ends; its MCP endpoint's URL. */
async function mcpUrl(http: HttpServer): Promise<string> {
  const listening = await listen(http);
  cleanup(listening.close);
  return `${listening.origin}/mcp`;
}

/** The example server (McpServer with add and slow_count) behind our Streamable HTTP transport. */
async function ourServer(): Promise<{ url: string; mcp: StreamableHttpServer }> {
  const server = createExampleServer();
  const mcp = createStreamableHttpServer({
    path: "/mcp",
    onSession: (transport) => server.connect(transport).then(() => undefined),
  });
  const url = await mcpUrl(createServer(mcp.nodeListener));
  cleanup(async () => {
    await mcp.close();
    await server.close();
  });
  return { url, mcp };
}

function textOf(result: unknown): string {
  const first = ((result as { content?: unknown }).content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

function sdkClient(): SdkClient {
  const client = new SdkClient({ name: "official-sdk-client", version: "1.0.0" });
  cleanup(() => client.close());
  return client;
}

describe("official SDK client -> our server (McpServer over createStreamableHttpServer)", () => {
  it("initializes with a session, negotiates 2025-11-25 and lists the example tools", async () => {
    const { url, mcp } = await ourServer();
    const client = sdkClient();
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    expect(client.getServerVersion()).toMatchObject({ name: "mcpgen-example-http" });
    expect(transport.protocolVersion).toBe("2025-11-25");
    expect(transport.sessionId).toBeDefined();
    expect([...mcp.sessions.keys()]).toEqual([transport.sessionId]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "greet", "slow_count"]);
    expect(textOf(await client.callTool({ name: "add", arguments: { a: 2, b: 40 } }))).toBe("42");
  });

  it("calls a tool with progress", async () => {
    const { url } = await ourServer();
    const client = sdkClient();
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const seen: { progress: number; total?: number }[] = [];
    const result = await client.callTool(
      { name: "slow_count", arguments: { count: 3, delayMs: 5 } },
      CallToolResultSchema,
      {
        onprogress: (p) => seen.push({ progress: p.progress, total: p.total }),
      },
    );
    expect(textOf(result)).toBe("done 3");
    expect(seen).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
  });

  it("resumes a call whose stream dropped mid-call with resumeStream and the last resumption token", async () => {
    const { url, mcp } = await ourServer();
    // A fetch whose tools/call POST can be cut, as a network failure would; the SDK must not retry by itself.
    let cut: (() => void) | undefined;
    const cuttable: typeof fetch = (input, init) => {
      if (init?.method !== "POST" || !String(init.body).includes('"tools/call"')) return fetch(input, init);
      const controller = new AbortController();
      init.signal?.addEventListener("abort", () => controller.abort(init.signal?.reason), { once: true });
      cut = () => controller.abort(new Error("connection cut by the test"));
      return fetch(input, { ...init, signal: controller.signal });
    };
    const client = sdkClient();
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: cuttable,
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1,
        maxReconnectionDelay: 1,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const errors: Error[] = [];
    await client.connect(transport);
    transport.onerror = (error) => errors.push(error);

    const seen: number[] = [];
    let token: string | undefined;
    const call = client.callTool({ name: "slow_count", arguments: { count: 6, delayMs: 40 } }, CallToolResultSchema, {
      onprogress: (p) => {
        seen.push(p.progress);
        if (p.progress === 2) cut!();
      },
      onresumptiontoken: (t) => (token = t),
      timeout: 10_000,
    });
    await until(() => errors.some((e) => /disconnected/.test(e.message)));
    // With no retries allowed the SDK gave up on its own: only resumeStream below can bring the result.
    await until(() => errors.some((e) => /Maximum reconnection attempts/.test(e.message)));
    // The server lost the connection but keeps the request: its events wait in the event store.
    expect(mcp.sessions.get(transport.sessionId!)!.pendingRequestCount).toBe(1);
    const tokenAtCut = token!;
    expect(tokenAtCut).toBeDefined();

    await transport.resumeStream(tokenAtCut, { onresumptiontoken: (t) => (token = t) });
    const result = await call;
    expect(textOf(result)).toBe("done 6");
    // Nothing lost, nothing repeated across the drop.
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(token).not.toBe(tokenAtCut);
  });

  it("terminates the session with DELETE; the old session id then gets 404", async () => {
    const { url, mcp } = await ourServer();
    const client = sdkClient();
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    const closed = new Promise<void>((resolve) => {
      const session = mcp.sessions.get(sessionId)!;
      const previous = session.onclose;
      session.onclose = () => {
        previous?.();
        resolve();
      };
    });
    await transport.terminateSession();
    await closed;
    expect(transport.sessionId).toBeUndefined();
    expect(mcp.sessions.size).toBe(0);
    const late = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(late.status).toBe(404);
  });

  it("works against the example entry point (npm run example:http-server) on 127.0.0.1", async () => {
    const example = await spawnServer(builtExample("http-server"), /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    cleanup(() => example.stop());
    const client = sdkClient();
    await client.connect(new StreamableHTTPClientTransport(new URL(example.url)));
    expect(textOf(await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }))).toBe("3");
  });
});

/** A small event store for the official server transport: per-stream ordered events, ids `<stream>_<n>`. */
class TestEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${this.events.length}`;
    this.events.push({ id, streamId, message });
    return id;
  }
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastEventId);
    if (at < 0) return "";
    const streamId = this.events[at].streamId;
    for (const e of this.events.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }
}

interface SdkServerOptions {
  json?: boolean;
}

/** A stateful server built with the official SDK: tool `count` (progress, optional mid-call close), tool `ask` (elicitation). */
async function officialServer(
  options: SdkServerOptions = {},
): Promise<{ url: string; closed: string[]; sessions: Map<string, StreamableHTTPServerTransport> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const closed: string[] = [];
  const http = createServer(async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? sessions.get(sid) : undefined;
    if (!transport) {
      const fresh: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, fresh),
        onsessionclosed: (id) => void closed.push(id),
        enableJsonResponse: options.json === true,
        eventStore: new TestEventStore(),
        retryInterval: 20,
      });
      const server = new SdkServer({ name: "official-sdk-server", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: "count",
            inputSchema: { type: "object", properties: { n: { type: "number" }, closeAt: { type: "number" } } },
          },
          { name: "ask", inputSchema: { type: "object" } },
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        if (request.params.name === "ask") {
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                message: "Your name?",
                requestedSchema: { type: "object", properties: { name: { type: "string" } } },
              },
            },
            ElicitResultSchema,
          );
          return { content: [{ type: "text", text: `hello ${String(answer.content?.name)}` }] };
        }
        const args = (request.params.arguments ?? {}) as { n?: number; closeAt?: number };
        const n = args.n ?? 3;
        const token = request.params._meta?.progressToken;
        for (let i = 1; i <= n; i++) {
          if (token !== undefined)
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: i, total: n },
            });
          // SEP-1699: the official server lets go of the POST stream; the client must come back with Last-Event-ID.
          if (args.closeAt === i) extra.closeSSEStream?.();
          await sleep(10);
        }
        return { content: [{ type: "text", text: `counted ${n}` }] };
      });
      await server.connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  });
  const url = await mcpUrl(http);
  cleanup(async () => {
    for (const t of sessions.values()) await t.close();
  });
  return { url, closed, sessions };
}

async function ourClient(url: string, capabilities: { elicitation?: object } = {}) {
  const transport = new StreamableHttpClientTransport({ url, reconnect: { initialDelayMs: 20, maxDelayMs: 50 } });
  const errors: Error[] = [];
  const client = await Client.connect(transport, {
    clientInfo: { name: "mcpgen-client", version: "0.1.0" },
    capabilities,
    onerror: (error) => errors.push(error),
  });
  cleanup(() => client.peer.close());
  return { client, transport, errors };
}

describe("our client (generated Client + StreamableHttpClientTransport) -> official SDK server", () => {
  it("initializes, lists tools and calls one with progress over SSE", async () => {
    const { url, sessions } = await officialServer();
    const { client, transport, errors } = await ourClient(url);
    expect(client.peer.serverInfo).toMatchObject({ name: "official-sdk-server" });
    expect(client.peer.protocolVersion).toBe("2025-11-25");
    expect([...sessions.keys()]).toEqual([transport.sessionId]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["count", "ask"]);
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "count", arguments: { n: 3 } },
      { onProgress: (p) => seen.push(p.progress) },
    );
    expect(textOf(result)).toBe("counted 3");
    expect(seen).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
  });

  it("takes JSON responses when the official server answers with JSON", async () => {
    const { url } = await officialServer({ json: true });
    const { client, errors } = await ourClient(url);
    expect(textOf(await client.callTool({ name: "count", arguments: { n: 2 } }))).toBe("counted 2");
    expect(errors).toEqual([]);
  });

  it("resumes with Last-Event-ID when the official server closes the stream mid-call", async () => {
    const { url } = await officialServer();
    const { client, errors } = await ourClient(url);
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "count", arguments: { n: 5, closeAt: 2 } },
      { onProgress: (p) => seen.push(p.progress) },
    );
    expect(textOf(result)).toBe("counted 5");
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(errors).toEqual([]);
  });

  it("answers the official server's elicitation sent during a tool call", async () => {
    const { url } = await officialServer();
    const { client } = await ourClient(url, { elicitation: {} });
    client.onElicit(() => ({ action: "accept", content: { name: "Ada" } }));
    expect(textOf(await client.callTool({ name: "ask", arguments: {} }))).toBe("hello Ada");
  });

  it("DELETEs the session on close; the official server ends it", async () => {
    const { url, closed } = await officialServer();
    const { client, transport } = await ourClient(url);
    const sessionId = transport.sessionId!;
    await client.peer.close();
    await until(() => closed.includes(sessionId));
    expect(transport.sessionId).toBeUndefined();
  });
});
