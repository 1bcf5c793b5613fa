// Interop with the official SDK 2.x client against the example servers as users run them: it negotiates MCP 2026-07-28 (auto, pinned) or stays on 2025-11-25 (legacy), over stdio and Streamable HTTP.
import { fileURLToPath } from "node:url";
import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ElicitRequest,
  type VersionNegotiationMode,
} from "@modelcontextprotocol/client";
import {
  StdioClientTransport,
  getDefaultEnvironment,
  type StdioServerParameters,
} from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtExample, spawnServer, type SpawnedServer } from "../conformance/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { PROGRESS_SPACING_MS, expectProgressPrefix } from "./progress.js";
import {
  postedMessages,
  requestMethods,
  stdioTapDir,
  tappingFetch,
  type HttpExchange,
  type StdioTap,
  type WireMessage,
} from "./wire-taps.js";

const cleanup = closeAfterEach();
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/** The built stdio example, run unchanged behind a tap that notes each process start and its stdio. */
const tappedExample = fileURLToPath(new URL("./fixtures/tapped-example-server.mjs", import.meta.url));

/** What the example's greet tool asks (its one elicitation). */
const GREET_ASK = {
  message: "What is your name?",
  requestedSchema: {
    type: "object",
    properties: { name: { type: "string", description: "Your name" } },
    required: ["name"],
  },
};
const ANSWER = { action: "accept", content: { name: "Ada" } } as const;

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
}

/** A 2.x client that answers elicitations with ANSWER and records what it was asked. */
function v2Client(mode: VersionNegotiationMode) {
  const client = new Client(
    { name: "sdk-v2-interop", version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
  );
  const asked: ElicitRequest["params"][] = [];
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params);
    return ANSWER;
  });
  cleanup(() => client.close());
  return { client, asked };
}

/**
 * Lists the tools, calls slow_count with progress and greet (one elicitation, then progress). Over stdio the client
 * may drop progress that arrives with the response (see expectProgressPrefix), so greet's progress, sent back to back,
 * is checked over HTTP only.
 */
async function drive(client: Client, asked: ElicitRequest["params"][], over: "stdio" | "http"): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(["add", "greet", "slow_count"]);

  const counted: number[] = [];
  const count = await client.callTool(
    { name: "slow_count", arguments: { count: 3, delayMs: PROGRESS_SPACING_MS } },
    { onprogress: (p) => counted.push(p.progress) },
  );
  expect(textOf(count)).toBe("done 3");
  if (over === "stdio") expectProgressPrefix(counted, 3);
  else expect(counted).toEqual([1, 2, 3]);

  // The client reports its own input rounds as progress too (no total): only the tool's steps are compared.
  const greeted: number[] = [];
  const greeting = await client.callTool(
    { name: "greet", arguments: { steps: 3 } },
    { onprogress: (p) => p.message?.startsWith("greeting") && greeted.push(p.progress) },
  );
  expect(textOf(greeting)).toBe("hello Ada");
  expect(asked).toEqual([GREET_ASK]);
  if (over === "http") expect(greeted).toEqual([1, 2, 3]);
}

function expectModern(client: Client): void {
  expect(client.getProtocolEra()).toBe("modern");
  expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
}

function expectLegacy(client: Client): void {
  expect(client.getProtocolEra()).toBe("legacy");
  expect(client.getNegotiatedProtocolVersion()).toBe(LEGACY);
}

/** The tools/call requests of greet and the reply to each, in order. */
function greetCalls(rounds: { sent: WireMessage[]; replies: WireMessage[] }[]) {
  return rounds.filter(({ sent }) => sent[0]?.method === "tools/call" && sent[0].params?.name === "greet");
}

/**
 * On 2026-07-28 greet's ask is an input_required round: the first call is answered with the ask and a requestState,
 * the client calls again with its answer and that state, and the server never sends a request of its own.
 */
function expectInputRound(calls: { sent: WireMessage; reply: WireMessage }[]): void {
  expect(calls).toHaveLength(2);
  const [ask, answered] = calls;
  expect(ask.reply.result).toMatchObject({
    resultType: "input_required",
    inputRequests: { q0: { method: "elicitation/create", params: GREET_ASK } },
  });
  const state = ask.reply.result?.requestState;
  expect(typeof state).toBe("string");
  expect(answered.sent.params).toMatchObject({ inputResponses: { q0: ANSWER }, requestState: state });
  expect(answered.reply.result).toMatchObject({
    resultType: "complete",
    content: [{ type: "text", text: "hello Ada" }],
  });
}

describe("official SDK 2.x client -> the stdio example (node dist/examples/stdio-server.js)", () => {
  beforeAll(() => void builtExample("stdio-server"));

  /**
   * How the client starts the tapped example, with a tap directory of this test's own: its files are the processes
   * the client started, each with the lines it read and wrote.
   */
  function tappedServer(): { params: StdioServerParameters; processes: () => StdioTap[] } {
    const taps = stdioTapDir();
    cleanup(() => taps.remove());
    const env = { ...getDefaultEnvironment(), MCPGEN_TAP_DIR: taps.dir };
    return { params: { command: process.execPath, args: [tappedExample], env }, processes: taps.taps };
  }

  /** The 2026 session process: never asked to initialize, every request enveloped, no request of its own. */
  function expectModernSession(session: StdioTap): void {
    const requests = session.received.filter((m) => m.method !== undefined && m.id !== undefined);
    expect(requestMethods(requests)).not.toContain("initialize");
    for (const request of requests) expect(request.params?._meta?.[PROTOCOL_VERSION_KEY]).toBe(MODERN);
    expect(requestMethods(session.sent)).toEqual([]);
    const byId = (id: unknown) => session.sent.find((m) => m.id === id && m.method === undefined)!;
    const greets = requests.filter((m) => m.method === "tools/call" && m.params?.name === "greet");
    expectInputRound(greets.map((sent) => ({ sent, reply: byId(sent.id) })));
  }

  /** The probe process the client starts to learn the era: one server/discover, answered with 2026-07-28. */
  function expectProbe(probe: StdioTap): void {
    expect(probe.received.map((m) => m.method)).toEqual(["server/discover"]);
    expect(probe.sent).toHaveLength(1);
    expect(probe.sent[0].result).toMatchObject({ supportedVersions: expect.arrayContaining([MODERN]) });
  }

  for (const [label, mode] of [
    ["auto", "auto"],
    [`pinned to ${MODERN}`, { pin: MODERN }],
  ] as const) {
    it(`${label}: reaches ${MODERN} (a probe process, then one session process), lists, progress, one elicitation round`, async () => {
      const { params, processes } = tappedServer();
      const { client, asked } = v2Client(mode);
      await client.connect(new StdioClientTransport(params));
      expectModern(client);
      expect(client.getServerVersion()).toEqual({ name: "mcpgen-example", version: "1.0.0" });
      await drive(client, asked, "stdio");

      // The SDK's own stdio transport probes on a throwaway process and then starts the session's process once.
      const started = processes();
      expect(started).toHaveLength(2);
      const probe = started.find((p) => p.received.some((m) => m.method === "server/discover"))!;
      expectProbe(probe);
      expectModernSession(started.find((p) => p !== probe)!);
    });
  }

  it(`auto, probing in place: one process answers server/discover and then serves ${MODERN}`, async () => {
    const { params, processes } = tappedServer();
    // Any subclass of the SDK's transport probes on the connection itself instead of a sibling process.
    class InPlaceStdioClientTransport extends StdioClientTransport {}
    const { client, asked } = v2Client("auto");
    await client.connect(new InPlaceStdioClientTransport(params));
    expectModern(client);
    await drive(client, asked, "stdio");

    const started = processes();
    expect(started).toHaveLength(1);
    const [only] = started;
    expect(only.received[0].method).toBe("server/discover");
    expect(requestMethods(only.received).filter((m) => m === "server/discover")).toHaveLength(1);
    expectModernSession(only);
  });

  it("legacy: initialize on one process, and greet asks with a real elicitation/create request", async () => {
    const { params, processes } = tappedServer();
    const { client, asked } = v2Client("legacy");
    await client.connect(new StdioClientTransport(params));
    expectLegacy(client);
    await drive(client, asked, "stdio");

    const started = processes();
    expect(started).toHaveLength(1);
    const [only] = started;
    expect(requestMethods(only.received)[0]).toBe("initialize");
    const elicit = only.sent.filter((m) => m.method === "elicitation/create" && m.id !== undefined);
    expect(elicit.map((m) => m.params)).toEqual([GREET_ASK]);
    expect(only.received.find((m) => m.id === elicit[0].id && m.method === undefined)?.result).toEqual(ANSWER);
    expect(JSON.stringify(only.sent)).not.toContain("input_required");
  });
});

describe("official SDK 2.x client -> the HTTP example (node dist/examples/http-server.js)", () => {
  let example: SpawnedServer;
  beforeAll(async () => {
    example = await spawnServer(builtExample("http-server"), /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  });
  afterAll(() => example?.stop());

  async function connect(mode: VersionNegotiationMode) {
    const tap = tappingFetch();
    const { client, asked } = v2Client(mode);
    await client.connect(new StreamableHTTPClientTransport(new URL(example.url), { fetch: tap.fetch }));
    /** The POSTs so far, once their replies have ended. */
    const posts = async () => {
      const posted = tap.exchanges.filter((e: HttpExchange) => e.method === "POST");
      await Promise.all(posted.map((e) => e.done));
      return postedMessages(posted);
    };
    return { client, asked, exchanges: tap.exchanges, posts };
  }

  for (const [label, mode] of [
    ["auto", "auto"],
    [`pinned to ${MODERN}`, { pin: MODERN }],
  ] as const) {
    it(`${label}: reaches ${MODERN} without a session, lists, progress, one elicitation round`, async () => {
      const { client, asked, exchanges, posts } = await connect(mode);
      expectModern(client);
      expect(client.getServerVersion()).toEqual({ name: "mcpgen-example-http", version: "1.0.0" });
      await drive(client, asked, "http");

      const rounds = await posts();
      expect(rounds[0].sent.map((m) => m.method)).toEqual(["server/discover"]);
      expect(rounds.flatMap((r) => r.sent).map((m) => m.method)).not.toContain("initialize");
      // Per-request lane: no session id either way, and nothing but POSTs.
      expect(exchanges.map((e) => e.method).filter((m) => m !== "POST")).toEqual([]);
      expect(exchanges.filter((e) => e.headers["mcp-session-id"] ?? e.replyHeaders?.["mcp-session-id"])).toEqual([]);
      expect(rounds.flatMap((r) => requestMethods(r.replies))).toEqual([]);
      expectInputRound(greetCalls(rounds).map(({ sent, replies }) => ({ sent: sent[0], reply: replies.at(-1)! })));
    });
  }

  it("legacy: a session, and greet asks with a real elicitation/create request on the call's stream", async () => {
    const { client, asked, exchanges, posts } = await connect("legacy");
    expectLegacy(client);
    await drive(client, asked, "http");

    const rounds = await posts();
    expect(rounds[0].sent.map((m) => m.method)).toEqual(["initialize"]);
    const session = exchanges[0].replyHeaders?.["mcp-session-id"];
    expect(session).toBeDefined();
    expect(exchanges.slice(1).every((e) => e.headers["mcp-session-id"] === session)).toBe(true);
    const [greet] = greetCalls(rounds);
    const elicit = greet.replies.filter((m) => m.method === "elicitation/create" && m.id !== undefined);
    expect(elicit.map((m) => m.params)).toEqual([GREET_ASK]);
    const answer = rounds.flatMap((r) => r.sent).find((m) => m.id === elicit[0].id && m.method === undefined);
    expect(answer?.result).toEqual(ANSWER);
    expect(greet.replies.at(-1)?.result).toEqual({ content: [{ type: "text", text: "hello Ada" }] });
  });
});
