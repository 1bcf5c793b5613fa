// The client on MCP 2026-07-28: settling on the era, the envelope on every request, input-required rounds, results as either era shows them.
import { describe, expect, it } from "vitest";
import { Client, type ClientOptions } from "../../generated/client.js";
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import { InvalidResultError } from "../../runtime/rpc/errors.js";
import { InputRoundsExceededError } from "../../runtime/eras/2026-07-28/client-wire.js";
import { McpServer } from "../../runtime/server/mcp-server.js";
import type { SendOptions } from "../../runtime/rpc/transport.js";
import { createInMemoryPair, type InMemoryTransport } from "../../runtime/transports/in-memory.js";
import { SpyTransport, connect, makeServer, type Connected } from "../server/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";

const cleanup = closeAfterEach();
const MODERN = "2026-07-28";
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const INFO_KEY = "io.modelcontextprotocol/clientInfo";
const LEVEL_KEY = "io.modelcontextprotocol/logLevel";
const CLIENT_INFO = { name: "test-client", version: "1.0.0" };

async function connected(server: McpServer, options: Partial<ClientOptions> = {}): Promise<Connected> {
  const c = await connect(server, options);
  cleanup(() => c.close());
  return c;
}

const methods = (sent: readonly JsonRpcMessage[]) => sent.map((m) => ("method" in m ? m.method : "response"));
const metaOf = (m: JsonRpcMessage) => ((m as { params?: { _meta?: JsonObject } }).params?._meta ?? {}) as JsonObject;

/** A server with an instruction, a tool and one that asks twice: the dual-era McpServer of the generated SDK. */
function server(): McpServer {
  const s = makeServer({ instructions: "be brief", logging: true });
  s.tool(
    "add",
    { inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
    (a) => String((a as { a: number }).a + (a as { b: number }).b),
  );
  s.tool("ask_twice", {}, async (_args, ctx) => {
    const first = await ctx.elicit({ message: "first?", requestedSchema: { type: "object", properties: {} } });
    const second = await ctx.elicit({ message: "second?", requestedSchema: { type: "object", properties: {} } });
    return `${first.action}/${second.action}`;
  });
  s.tool("log", {}, async (_args, ctx) => {
    await ctx.log("info", "hello");
    return "logged";
  });
  return s;
}

describe("settling on the era", () => {
  it("auto: probes server/discover and speaks 2026-07-28 with what discover told (capabilities, info, instructions)", async () => {
    const c = await connected(server());
    expect(c.client.peer.era).toBe("modern");
    expect(c.client.peer.verdict).toEqual({ era: "modern", protocolVersion: MODERN });
    expect(c.client.peer.protocolVersion).toBe(MODERN);
    expect(c.client.peer.serverInfo).toMatchObject({ name: "test-server", version: "1.0.0" });
    expect(c.client.peer.serverCapabilities).toMatchObject({ tools: {} });
    expect(c.client.peer.instructions).toBe("be brief");
    expect(methods(c.clientSent)).toEqual(["server/discover"]);
  });

  it("legacy: the initialize handshake, no probe", async () => {
    const c = await connected(server(), { era: "legacy" });
    expect(c.client.peer.era).toBe("legacy");
    expect(c.client.peer.protocolVersion).toBe("2025-11-25");
    expect(methods(c.clientSent)).toEqual(["initialize", "notifications/initialized"]);
  });

  it("a pin or a prior verdict sends nothing at connect; the first request carries the envelope", async () => {
    for (const options of [
      { era: { pin: MODERN } },
      { verdict: { era: "modern", protocolVersion: MODERN } },
    ] as const) {
      const c = await connected(server(), options);
      expect(c.client.peer.era).toBe("modern");
      expect(c.clientSent).toEqual([]);
      const result = await c.client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
      expect(result.content).toEqual([{ type: "text", text: "3" }]);
      expect(metaOf(c.clientSent[0]!)[VERSION_KEY]).toBe(MODERN);
    }
  });

  it("a 2025-only server: the probe is refused and initialize follows on the same connection", async () => {
    const legacyOnly = new McpServer({
      serverInfo: { name: "old", version: "1" },
      inbound: clientToServer,
      outbound: serverToClient,
      isMessage,
    });
    legacyOnly.tool("add", {}, () => "ok");
    const c = await connected(legacyOnly);
    expect(c.client.peer.era).toBe("legacy");
    expect(methods(c.clientSent)).toEqual(["server/discover", "initialize", "notifications/initialized"]);
    expect((await c.client.callTool({ name: "add" })).content).toEqual([{ type: "text", text: "ok" }]);
  });

  it("refuses a pin this client cannot speak", async () => {
    const [end] = createInMemoryPair();
    await expect(Client.connect(end, { clientInfo: CLIENT_INFO, era: { pin: "1999-01-01" } })).rejects.toThrow(
      /era.pin "1999-01-01" is not a revision this client speaks/,
    );
  });
});

describe("the envelope", () => {
  it("every request carries the revision, the client's capabilities and info; results read as on 2025-11-25", async () => {
    const c = await connected(server(), { capabilities: { elicitation: {} } });
    const result = await c.client.callTool({ name: "add", arguments: { a: 2, b: 2 } });
    expect(result).toEqual({ content: [{ type: "text", text: "4" }] });
    const call = c.clientSent.find((m) => "method" in m && m.method === "tools/call")!;
    expect(metaOf(call)).toEqual({
      [VERSION_KEY]: MODERN,
      // The client always takes a task answer, so it declares the Tasks extension (tasksExtension: false turns it off).
      [CAPABILITIES_KEY]: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
      [INFO_KEY]: CLIENT_INFO,
    });
  });

  it("logLevel: none until the app listens or sets one; setLevel is kept by the client and sent on each request", async () => {
    const c = await connected(server());
    const heard: unknown[] = [];
    await c.client.callTool({ name: "log" });
    expect(metaOf(c.clientSent.at(-1)!)[LEVEL_KEY]).toBeUndefined();
    c.client.onLoggingMessage((p) => void heard.push(p.data));
    await c.client.callTool({ name: "log" });
    expect(metaOf(c.clientSent.at(-1)!)[LEVEL_KEY]).toBe("debug");
    expect(heard).toEqual(["hello"]);
    expect(await c.client.setLevel({ level: "error" })).toEqual({});
    expect(methods(c.clientSent)).not.toContain("logging/setLevel");
    await c.client.callTool({ name: "log" });
    expect(metaOf(c.clientSent.at(-1)!)[LEVEL_KEY]).toBe("error");
    expect(heard).toEqual(["hello"]);
    await expect(c.client.setLevel({ level: "loud" as "error" })).rejects.toMatchObject({ code: -32602 });
  });
});

describe("input-required rounds", () => {
  it("answers each round through onElicit, with a new id, the requestState as sent and this round's answers only", async () => {
    const c = await connected(server(), { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    c.client.onElicit((params) => {
      asked.push(params.message);
      return { action: asked.length === 1 ? "accept" : "decline", content: {} };
    });
    const result = await c.client.callTool({ name: "ask_twice" });
    expect(result.content).toEqual([{ type: "text", text: "accept/decline" }]);
    expect(asked).toEqual(["first?", "second?"]);
    const calls = c.clientSent.filter((m) => "method" in m && m.method === "tools/call") as {
      id: number;
      params: JsonObject;
    }[];
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((m) => m.id)).size).toBe(3);
    expect(calls[0]!.params.inputResponses).toBeUndefined();
    expect(calls[0]!.params.requestState).toBeUndefined();
    expect(Object.keys(calls[1]!.params.inputResponses as JsonObject)).toEqual(["q0"]);
    expect(Object.keys(calls[2]!.params.inputResponses as JsonObject)).toEqual(["q1"]);
    expect(typeof calls[1]!.params.requestState).toBe("string");
  });

  it("gives up past maxInputRounds, and fails a round the app has no handler for", async () => {
    const c = await connected(server(), { capabilities: { elicitation: {} }, maxInputRounds: 1 });
    c.client.onElicit(() => ({ action: "accept", content: {} }));
    await expect(c.client.callTool({ name: "ask_twice" })).rejects.toBeInstanceOf(InputRoundsExceededError);
    const bare = await connected(server(), { capabilities: { elicitation: {} } });
    await expect(bare.client.callTool({ name: "ask_twice" })).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("elicitation/create"),
    });
  });

  it("parallel calls keep their rounds apart", async () => {
    const c = await connected(server(), { capabilities: { elicitation: {} } });
    c.client.onElicit(async (params) => ({ action: params.message === "first?" ? "accept" : "cancel" }));
    const results = await Promise.all([1, 2, 3].map(() => c.client.callTool({ name: "ask_twice" })));
    expect(results.map((r) => r.content)).toEqual(Array(3).fill([{ type: "text", text: "accept/cancel" }]));
  });
});

/** A hand-written 2026-07-28 server end: answers each request with what `answer` returns, and records headers. */
async function scripted(
  answer: (method: string, params: JsonObject, round: number) => JsonObject | { error: JsonObject } | null,
  options: Partial<ClientOptions> = {},
) {
  const [clientEnd, serverEnd] = createInMemoryPair();
  const headers: Record<string, string>[] = [];
  const spy = new (class extends SpyTransport {
    override send(message: JsonRpcMessage, sendOptions?: SendOptions): Promise<void> {
      headers.push({ ...(sendOptions?.headers ?? {}) });
      return super.send(message, sendOptions);
    }
  })(clientEnd);
  const counts = new Map<string, number>();
  serverEnd.onmessage = (raw) => {
    const m = raw as { id?: number; method?: string; params?: JsonObject };
    if (m.id === undefined || m.method === undefined) return;
    const round = counts.get(m.method) ?? 0;
    counts.set(m.method, round + 1);
    const out = answer(m.method, m.params ?? {}, round);
    if (out === null) return;
    void (serverEnd as InMemoryTransport).send(
      "error" in out
        ? ({ jsonrpc: "2.0", id: m.id, error: out.error } as JsonRpcMessage)
        : ({ jsonrpc: "2.0", id: m.id, result: out } as JsonRpcMessage),
    );
  };
  await serverEnd.start();
  const client = await Client.connect(spy, { clientInfo: CLIENT_INFO, ...options });
  cleanup(() => client.peer.close());
  return { client, sent: spy.sent, headers, serverEnd };
}

const DISCOVERED = { resultType: "complete", supportedVersions: [MODERN], capabilities: { tools: {} } };

describe("results and errors on the modern wire", () => {
  it("an absent resultType is complete (the specification's rule); an unknown one is an invalid result", async () => {
    const { client } = await scripted((method, params) =>
      method === "server/discover"
        ? DISCOVERED
        : params.name === "odd"
          ? { resultType: "someday", content: [] }
          : { content: [{ type: "text", text: "plain" }] },
    );
    expect((await client.callTool({ name: "plain" })).content).toEqual([{ type: "text", text: "plain" }]);
    await expect(client.callTool({ name: "odd" })).rejects.toBeInstanceOf(InvalidResultError);
  });

  it("-32022 naming only 2025-11-25 on a later request: initialize on the same connection, and the request again", async () => {
    const { client, sent } = await scripted((method) => {
      if (method === "server/discover") return DISCOVERED;
      if (method === "initialize")
        return { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } };
      if (method === "tools/list" && sent.every((m) => !("method" in m) || m.method !== "initialize"))
        return {
          error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2025-11-25"] } },
        };
      return { tools: [] };
    });
    expect(await client.listTools()).toEqual({ tools: [] });
    expect(client.peer.era).toBe("legacy");
    expect(methods(sent)).toEqual([
      "server/discover",
      "tools/list",
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    expect(metaOf(sent.at(-1)!)[VERSION_KEY]).toBeUndefined();
  });

  it("a probe answered -32022 with the modern revision is probed again; a -32601 means legacy", async () => {
    let probes = 0;
    const again = await scripted((method) => {
      if (method === "server/discover" && probes++ === 0)
        return { error: { code: -32022, message: "no", data: { supported: [MODERN] } } };
      return method === "server/discover" ? DISCOVERED : { tools: [] };
    });
    expect(again.client.peer.era).toBe("modern");
    expect(methods(again.sent)).toEqual(["server/discover", "server/discover"]);
    const legacy = await scripted((method) =>
      method === "server/discover"
        ? { error: { code: -32601, message: "Method not found" } }
        : { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "s", version: "1" } },
    );
    expect(legacy.client.peer.era).toBe("legacy");
  });

  it("the HTTP binding's headers: revision, method, name, and each x-mcp-header parameter; invalid tools are left out", async () => {
    const errors: Error[] = [];
    const { client, headers } = await scripted(
      (method) => {
        if (method === "server/discover") return DISCOVERED;
        if (method === "tools/list")
          return {
            tools: [
              {
                name: "q",
                inputSchema: {
                  type: "object",
                  properties: {
                    region: { type: "string", "x-mcp-header": "Region" },
                    n: { type: "integer", "x-mcp-header": "N" },
                  },
                },
              },
              {
                name: "bad",
                inputSchema: { type: "object", properties: { x: { type: "number", "x-mcp-header": "X" } } },
              },
            ],
          };
        return { content: [] };
      },
      { onerror: (e) => errors.push(e) },
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["q"]);
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('tool "bad" left out of tools/list')]);
    await client.callTool({ name: "q", arguments: { region: "Zürich", n: 7 } });
    expect(headers.at(-1)).toEqual({
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "q",
      "mcp-param-region": "=?base64?WsO8cmljaA==?=",
      "mcp-param-n": "7",
    });
  });

  it("a HeaderMismatch on a call lists the tools again and retries once", async () => {
    let calls = 0;
    const { client, sent } = await scripted((method) => {
      if (method === "server/discover") return DISCOVERED;
      if (method === "tools/list") return { tools: [] };
      return calls++ === 0 ? { error: { code: -32020, message: "Header mismatch" } } : { content: [] };
    });
    expect(await client.callTool({ name: "t" })).toEqual({ content: [] });
    expect(methods(sent)).toEqual(["server/discover", "tools/call", "tools/list", "tools/call"]);
    await expect(
      (
        await scripted((method) =>
          method === "server/discover" ? DISCOVERED : { error: { code: -32020, message: "Header mismatch" } },
        )
      ).client.callTool({ name: "t" }),
    ).rejects.toBeInstanceOf(RpcError);
  });
});

describe("the response cache", () => {
  it("serves a result within its ttlMs, drops it on the matching list_changed, never keeps an input round's answer", async () => {
    const s = makeServer({ cache: { "tools/list": { ttlMs: 60_000 }, "resources/read": { ttlMs: 60_000 } } });
    s.tool("grow", {}, () => {
      s.tool("extra", {}, () => "extra");
      return "grown";
    });
    let reads = 0;
    s.resource("memo://x", { name: "x" }, () => `read ${++reads}`);
    const c = await connected(s);
    const listed = () => c.clientSent.filter((m) => "method" in m && m.method === "tools/list").length;
    expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(["grow"]);
    const again = await c.client.listTools();
    expect(again.tools.map((t) => t.name)).toEqual(["grow"]);
    expect(listed()).toBe(1);
    // What the app is given is its own: changing it does not change the cached answer.
    again.tools.length = 0;
    expect((await c.client.listTools()).tools).toHaveLength(1);
    let changed = false;
    c.client.onToolListChanged(() => void (changed = true));
    await c.client.peer.subscriptionsReady();
    await c.client.callTool({ name: "grow" });
    // The change arrives on the listen stream: the cached list goes, and the next listTools asks the server.
    await until(() => changed);
    expect((await c.client.listTools()).tools.map((t) => t.name).sort()).toEqual(["extra", "grow"]);
    expect(listed()).toBe(2);
    expect((await c.client.readResource({ uri: "memo://x" })).contents).toEqual([{ uri: "memo://x", text: "read 1" }]);
    expect((await c.client.readResource({ uri: "memo://x" })).contents).toEqual([{ uri: "memo://x", text: "read 1" }]);
    const uncached = await connected(s, { cache: false });
    await uncached.client.listTools();
    await uncached.client.listTools();
    expect(uncached.clientSent.filter((m) => "method" in m && m.method === "tools/list")).toHaveLength(2);
  });
});

describe("what the handshake era alone has", () => {
  it("a notification the revision lacks is not sent", async () => {
    const c = await connected(server());
    await c.client.notifyRootsListChanged();
    expect(methods(c.clientSent)).toEqual(["server/discover"]);
  });

  it("a client with extensions (2025-11-25 features) asks for the handshake first", async () => {
    const { resumableClient } = await import("../../runtime/eras/2025-11-25/resumable/client.js");
    const c = await connected(server(), { extensions: [resumableClient()] });
    expect(c.client.peer.era).toBe("legacy");
    expect(methods(c.clientSent)[0]).toBe("initialize");
  });
});

describe("a request right after asking for changes", () => {
  it("waits for the listen to be acknowledged, so the change it causes is heard (as on 2025-11-25)", async () => {
    const events: string[] = [];
    const { client, serverEnd } = await scripted((method) => {
      if (method === "server/discover") return { ...DISCOVERED, capabilities: { tools: { listChanged: true } } };
      if (method === "subscriptions/listen") return null;
      events.push(method);
      return { content: [] };
    });
    // The acknowledgment comes 100 ms after the listen; the call must not reach the server before it.
    const inner = serverEnd.onmessage!;
    serverEnd.onmessage = (raw, info) => {
      const m = raw as { id?: number; method?: string };
      if (m.method === "subscriptions/listen")
        setTimeout(() => {
          events.push("acknowledged");
          void serverEnd.send({
            jsonrpc: "2.0",
            method: "notifications/subscriptions/acknowledged",
            params: {
              _meta: { "io.modelcontextprotocol/subscriptionId": m.id! },
              notifications: { toolsListChanged: true },
            },
          } as JsonRpcMessage);
        }, 100);
      inner(raw, info);
    };
    client.onToolListChanged(() => undefined);
    await client.callTool({ name: "t" });
    expect(events).toEqual(["acknowledged", "tools/call"]);
  });

  it("waits no longer than maxReadyWaitMs for a listen the server never acknowledges", async () => {
    for (const wait of [0, 300]) {
      const { client } = await scripted(
        (method) =>
          method === "server/discover"
            ? { ...DISCOVERED, capabilities: { tools: { listChanged: true } } }
            : method === "subscriptions/listen"
              ? null
              : { content: [] },
        { listen: { maxReadyWaitMs: wait } },
      );
      client.onToolListChanged(() => undefined);
      const started = performance.now();
      await client.callTool({ name: "t" });
      const took = performance.now() - started;
      if (wait === 0) expect(took).toBeLessThan(250);
      else expect(took).toBeGreaterThanOrEqual(290);
    }
  });
});

describe("review fixes", () => {
  it("ping asks the server every time, whatever the cache holds of server/discover", async () => {
    const s = makeServer({ cache: { "server/discover": { ttlMs: 60_000 } } });
    const c = await connected(s);
    await c.client.ping();
    await c.client.ping();
    expect(methods(c.clientSent)).toEqual(["server/discover", "server/discover", "server/discover"]);
  });

  it("a connection lost without recovery ends the listen: no retries, no warnings after it", async () => {
    const [clientEnd, serverEnd] = createInMemoryPair();
    const s = makeServer();
    await s.connect(serverEnd);
    const errors: Error[] = [];
    const client = await Client.connect(clientEnd, {
      clientInfo: CLIENT_INFO,
      listen: { initialDelayMs: 10, maxDelayMs: 20 },
      onerror: (e) => errors.push(e),
    });
    cleanup(() => client.peer.close());
    client.onToolListChanged(() => undefined);
    await client.peer.subscriptionsReady();
    await serverEnd.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(errors.length).toBeLessThanOrEqual(1);
  });
});
