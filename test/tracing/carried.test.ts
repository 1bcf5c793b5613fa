// Trace context in `_meta` without OpenTelemetry: what the caller gives goes out, what arrived is `ctx.trace`, both ways, on both eras.
import { describe, expect, it } from "vitest";
import type { ClientOptions } from "../../generated/client.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext, TraceContext } from "../../runtime/rpc/peer.js";
import type { McpServer } from "../../runtime/server/mcp-server.js";
import { TaskReceiver } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { connect, makeServer, type Connected } from "../server/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";

const cleanup = closeAfterEach();

const TRACE: TraceContext = {
  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
  baggage: "userId=alice,isProduction=false;ttl=60",
};
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const ERAS = [
  ["2025-11-25", { era: "legacy" }],
  ["2026-07-28", {}],
] as const satisfies ReadonlyArray<readonly [string, Partial<ClientOptions>]>;

const metaOf = (m: JsonRpcMessage) => ((m as { params?: { _meta?: JsonObject } }).params?._meta ?? {}) as JsonObject;

/** A server whose tools record the trace context each run saw, one of them after asking the client for sampling. */
function recordingServer(): { server: McpServer; seen: Array<TraceContext | undefined> } {
  const seen: Array<TraceContext | undefined> = [];
  const server = makeServer();
  server.tool("echo", {}, (_args, ctx) => {
    seen.push(ctx.trace);
    return "ok";
  });
  server.tool("sample", {}, async (_args, ctx) => {
    seen.push(ctx.trace);
    // The handler hands what it received back to the client, as an app without OpenTelemetry keeps one trace.
    const answer = await ctx.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "hi" } }],
      maxTokens: 10,
      _meta: { ...ctx.trace },
    });
    return (answer.content as { text?: string }).text ?? "?";
  });
  return { server, seen };
}

async function connected(server: McpServer, options: Partial<ClientOptions>): Promise<Connected> {
  const c = await connect(server, { capabilities: { sampling: {} }, ...options });
  cleanup(() => c.close());
  return c;
}

describe.each(ERAS)("trace context on %s without OpenTelemetry", (version, options) => {
  it("the caller's _meta keys reach the handler as ctx.trace, beside the envelope", async () => {
    const { server, seen } = recordingServer();
    const c = await connected(server, options);
    expect(c.client.peer.protocolVersion).toBe(version);
    await c.client.callTool({ name: "echo", arguments: {}, _meta: { ...TRACE } });
    expect(seen).toEqual([TRACE]);
    const call = c.clientSent.find((m) => "method" in m && m.method === "tools/call")!;
    expect(metaOf(call)).toMatchObject(TRACE);
    // The envelope's keys sit beside the trace keys on 2026-07-28, and neither is taken for the other.
    if (version === "2026-07-28") expect(metaOf(call)[VERSION_KEY]).toBe(version);
    else expect(metaOf(call)[VERSION_KEY]).toBeUndefined();
  });

  it("a request without trace context gives ctx.trace undefined", async () => {
    const { server, seen } = recordingServer();
    const c = await connected(server, options);
    await c.client.callTool({ name: "echo", arguments: {} });
    expect(seen).toEqual([undefined]);
  });

  it("a malformed traceparent is ignored with its tracestate, not refused; a good baggage stays", async () => {
    const { server, seen } = recordingServer();
    const c = await connected(server, options);
    const result = await c.client.callTool({
      name: "echo",
      arguments: {},
      _meta: {
        traceparent: "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        tracestate: "a=b",
        baggage: "k=v",
      },
    });
    expect(result.content).toEqual([{ type: "text", text: "ok" }]);
    expect(seen).toEqual([{ baggage: "k=v" }]);
  });

  it("server to client: the handler's request carries the context back, and the client's handler reads it", async () => {
    const { server, seen } = recordingServer();
    const c = await connected(server, options);
    const heard: Array<TraceContext | undefined> = [];
    c.client.onCreateMessage((_params, ctx: RequestContext) => {
      heard.push(ctx.trace);
      return { role: "assistant", content: { type: "text", text: "sampled" }, model: "m" };
    });
    const result = await c.client.callTool({ name: "sample", arguments: {}, _meta: { ...TRACE } });
    expect(result.content).toEqual([{ type: "text", text: "sampled" }]);
    expect(heard).toEqual([TRACE]);
    // 2026-07-28 runs the handler again on the retry: the trace keys came with every round, so each run saw them.
    expect(seen).toEqual(version === "2026-07-28" ? [TRACE, TRACE] : [TRACE]);
    if (version === "2026-07-28") {
      const rounds = c.clientSent.filter((m) => "method" in m && m.method === "tools/call");
      expect(rounds).toHaveLength(2);
      for (const round of rounds) expect(metaOf(round)).toMatchObject({ ...TRACE, [VERSION_KEY]: version });
      expect((rounds[1] as { params: JsonObject }).params.requestState).toEqual(expect.any(String));
    }
  });
});

describe("trace context of a call that runs as a task", () => {
  it("the handler of a task-augmented call reads the trace context the call carried", async () => {
    const tasks = new TaskReceiver();
    cleanup(() => tasks.close());
    const seen: Array<TraceContext | undefined> = [];
    const server = makeServer({ tasks });
    server.tool("long", { taskSupport: "optional" }, (_args, ctx) => {
      seen.push(ctx.task === undefined ? undefined : ctx.trace);
      return "done";
    });
    const c = await connected(server, { era: "legacy" });
    const handle = await c.client.callTool(
      { name: "long", arguments: {}, _meta: { ...TRACE } },
      { task: { ttl: 30_000 } },
    );
    const result = await handle.result();
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    expect(seen).toEqual([TRACE]);
  });
});
