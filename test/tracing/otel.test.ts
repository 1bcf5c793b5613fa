// OpenTelemetry spans through the `telemetry` option: one trace across client and server, and the handler's asks of the client under its span, on both eras.
import * as otel from "@opentelemetry/api";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeEach, describe, expect, it } from "vitest";
import { Client, type ClientOptions } from "../../generated/client.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { McpServer } from "../../runtime/server/mcp-server.js";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import { listenHttp } from "../../runtime/transports/http/server/listen.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { Telemetry } from "../../runtime/mcp/telemetry.js";
import { connect, makeServer } from "../server/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { inMemoryTracing, parentOf } from "../kit/otel.js";

const cleanup = closeAfterEach();
const tracing = inMemoryTracing();
beforeEach(() => tracing.exporter.reset());

const ERAS = [
  ["2025-11-25", { era: "legacy" }],
  ["2026-07-28", {}],
] as const satisfies ReadonlyArray<readonly [string, Partial<ClientOptions>]>;

const SAMPLED = { role: "assistant", content: { type: "text", text: "sampled" }, model: "m" } as const;

function tracedServer(): McpServer {
  const server = makeServer({ telemetry: otel });
  server.tool("weather", {}, () => "sunny");
  server.tool("sample", {}, async (_args, ctx) => {
    const answer = await ctx.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "hi" } }],
      maxTokens: 10,
    });
    return (answer.content as { text?: string }).text ?? "?";
  });
  server.tool("broken", {}, () => {
    throw new Error("no luck");
  });
  return server;
}

/** Runs `work` inside an app span, as the app's own instrumentation would; returns the app span's ids. */
async function inAppSpan<T>(work: () => Promise<T>): Promise<{ result: T; traceId: string; spanId: string }> {
  const tracer = otel.trace.getTracer("app");
  return tracer.startActiveSpan("app", async (span) => {
    try {
      const result = await work();
      return { result, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
    } finally {
      span.end();
    }
  });
}

const byKind = (name: string, kind: SpanKind): ReadableSpan[] =>
  tracing.spans().filter((s) => s.name === name && s.kind === kind);
const ids = (span: ReadableSpan) => span.spanContext();

describe.each(ERAS)("OpenTelemetry on %s, in memory", (version, options) => {
  it("one trace: app span -> client span -> server handler span, with the MCP attributes", async () => {
    const c = await connect(tracedServer(), { ...options, telemetry: otel });
    cleanup(() => c.close());
    const { result, traceId, spanId } = await inAppSpan(() => c.client.callTool({ name: "weather", arguments: {} }));
    expect(result.content).toEqual([{ type: "text", text: "sunny" }]);
    const [client] = byKind("tools/call weather", SpanKind.CLIENT);
    const [server] = byKind("tools/call weather", SpanKind.SERVER);
    expect(client).toBeDefined();
    expect(server).toBeDefined();
    expect(ids(client!).traceId).toBe(traceId);
    expect(parentOf(client!)).toBe(spanId);
    expect(ids(server!).traceId).toBe(traceId);
    expect(parentOf(server!)).toBe(ids(client!).spanId);
    expect(server!.parentSpanContext?.isRemote).toBe(true);
    expect(server!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "weather",
      "gen_ai.operation.name": "execute_tool",
      "mcp.protocol.version": version,
    });
    expect(server!.attributes["jsonrpc.request.id"]).toEqual(expect.any(String));
    expect(client!.attributes).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "weather" });
    // What went on the wire is the client span's context.
    const call = c.clientSent.find((m) => "method" in m && m.method === "tools/call") as JsonRpcMessage & {
      params: { _meta: JsonObject };
    };
    expect(call.params._meta.traceparent).toBe(`00-${traceId}-${ids(client!).spanId}-01`);
  });

  it("the handler's sampling request is a child of the handler's span, and the client's handler runs under it", async () => {
    const c = await connect(tracedServer(), { ...options, capabilities: { sampling: {} }, telemetry: otel });
    cleanup(() => c.close());
    let handlerSpan: string | undefined;
    c.client.onCreateMessage(() => {
      handlerSpan = otel.trace.getActiveSpan()?.spanContext().spanId;
      return SAMPLED;
    });
    const { result, traceId } = await inAppSpan(() => c.client.callTool({ name: "sample", arguments: {} }));
    expect(result.content).toEqual([{ type: "text", text: "sampled" }]);
    const [client] = byKind("tools/call sample", SpanKind.CLIENT);
    const runs = byKind("tools/call sample", SpanKind.SERVER);
    // 2026-07-28 runs the handler once per round: both runs are children of the one client span.
    expect(runs).toHaveLength(version === "2026-07-28" ? 2 : 1);
    for (const run of runs) {
      expect(ids(run).traceId).toBe(traceId);
      expect(parentOf(run)).toBe(ids(client!).spanId);
    }
    const asking = runs[0]!;
    const [answered] = byKind("sampling/createMessage", SpanKind.SERVER);
    expect(answered).toBeDefined();
    expect(ids(answered!).traceId).toBe(traceId);
    expect(handlerSpan).toBe(ids(answered!).spanId);
    if (version === "2025-11-25") {
      // A real request: the server's client span for it sits between the handler and the client's handler.
      const [asked] = byKind("sampling/createMessage", SpanKind.CLIENT);
      expect(parentOf(asked!)).toBe(ids(asking).spanId);
      expect(parentOf(answered!)).toBe(ids(asked!).spanId);
    } else {
      // An input round: the input request carried the asking run's span.
      expect(parentOf(answered!)).toBe(ids(asking).spanId);
    }
  });

  it("a tool that fails marks its span (error.type tool_error)", async () => {
    const c = await connect(tracedServer(), { ...options, telemetry: otel });
    cleanup(() => c.close());
    const result = await c.client.callTool({ name: "broken", arguments: {} });
    expect(result.isError).toBe(true);
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const [span] = byKind("tools/call broken", kind);
      expect(span!.attributes["error.type"]).toBe("tool_error");
      expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    }
  });
});

describe("OpenTelemetry over Streamable HTTP", () => {
  it.each(ERAS)("%s: the server span is the client span's child across HTTP", async (version, options) => {
    const server = tracedServer();
    const mcp = createStreamableHttpServer({ onSession: (t) => server.connect(t).then(() => undefined) });
    const listening = await listenHttp(mcp.nodeListener, { host: "127.0.0.1", port: 0 });
    cleanup(async () => {
      await mcp.close();
      await listening.close();
    });
    const client = await Client.connect(new StreamableHttpClientTransport({ url: `${listening.origin}/mcp` }), {
      clientInfo: { name: "c", version: "1" },
      capabilities: { sampling: {} },
      telemetry: otel,
      ...options,
    });
    cleanup(() => client.peer.close());
    client.onCreateMessage(() => SAMPLED);
    expect(client.peer.protocolVersion).toBe(version);
    const { traceId } = await inAppSpan(() => client.callTool({ name: "sample", arguments: {} }));
    const [call] = byKind("tools/call sample", SpanKind.CLIENT);
    const runs = byKind("tools/call sample", SpanKind.SERVER);
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(ids(run).traceId).toBe(traceId);
      expect(parentOf(run)).toBe(ids(call!).spanId);
    }
    const [answered] = byKind("sampling/createMessage", SpanKind.SERVER);
    expect(ids(answered!).traceId).toBe(traceId);
    if (version === "2025-11-25") expect(runs[0]!.attributes["mcp.session.id"]).toEqual(expect.any(String));
  });
});

describe("a trace context the caller gives", () => {
  it("is the parent of the client span when the caller put one in _meta", async () => {
    const c = await connect(tracedServer(), { telemetry: otel });
    cleanup(() => c.close());
    await c.client.callTool({
      name: "weather",
      arguments: {},
      _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    });
    const [client] = byKind("tools/call weather", SpanKind.CLIENT);
    const [server] = byKind("tools/call weather", SpanKind.SERVER);
    expect(ids(client!).traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(parentOf(client!)).toBe("b7ad6b7169203331");
    expect(parentOf(server!)).toBe(ids(client!).spanId);
  });

  it("a server span without one starts a trace of its own, whatever context was active where the request arrived", async () => {
    const server = makeServer({ telemetry: otel });
    server.tool("weather", {}, () => "sunny");
    // A client without telemetry sends no trace context, in the same process as the app's active span.
    const c = await connect(server, {});
    cleanup(() => c.close());
    const { traceId } = await inAppSpan(() => c.client.callTool({ name: "weather", arguments: {} }));
    const [span] = byKind("tools/call weather", SpanKind.SERVER);
    expect(ids(span!).traceId).not.toBe(traceId);
    expect(parentOf(span!)).toBeUndefined();
  });
});

describe("baggage and tracestate", () => {
  it("the active baggage and trace state travel to the handler's context", async () => {
    let seen: string | undefined;
    let state: string | undefined;
    const server = makeServer({ telemetry: otel });
    server.tool("look", {}, () => {
      seen = otel.propagation.getBaggage(otel.context.active())?.getEntry("user")?.value;
      state = otel.trace.getActiveSpan()?.spanContext().traceState?.serialize();
      return "ok";
    });
    const d = await connect(server, { telemetry: otel });
    cleanup(() => d.close());
    const parent = otel.trace.setSpanContext(otel.ROOT_CONTEXT, {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 1,
      isRemote: true,
      traceState: otel.createTraceState("vendor=abc"),
    });
    const withBaggage = otel.propagation.setBaggage(
      parent,
      otel.propagation.createBaggage({ user: { value: "a lice" } }),
    );
    await otel.context.with(withBaggage, () => d.client.callTool({ name: "look", arguments: {} }));
    expect(seen).toBe("a lice");
    expect(state).toBe("vendor=abc");
    const [span] = byKind("tools/call look", SpanKind.SERVER);
    expect(ids(span!).traceId).toBe("0af7651916cd43dd8448eb211c80319c");
  });
});

describe("the telemetry option", () => {
  it("refuses what is not the API or options with it", () => {
    expect(() => new Telemetry("otel" as never)).toThrow(TypeError);
    expect(() => new Telemetry({ api: {} as never })).toThrow(/telemetry.api/);
    expect(() => new Telemetry({ maxBaggageBytes: -1 })).toThrow(RangeError);
    expect(new Telemetry({ maxBaggageBytes: 100 }).spans).toBeUndefined();
    expect(new Telemetry(otel).spans).toBeDefined();
  });
});
