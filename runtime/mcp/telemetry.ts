// Trace context on both sides of a session: what a request carried (ctx.trace), and OpenTelemetry spans through an API object the app passes in.
import { RpcError, isPlainObject, type JsonObject } from "../rpc/jsonrpc.js";
import { ReplacedAnswer } from "../rpc/errors.js";
import type { RequestContext, RequestHandler, TraceContext } from "../rpc/peer.js";
import type { HandlerContext } from "../rpc/handler-context.js";
import type { InboundOperation } from "../rpc/operations.js";
import type { SessionExtension } from "../rpc/session/extension.js";
import {
  formatBaggage,
  formatTraceparent,
  parseBaggage,
  parseTraceparent,
  readTraceContext,
  resolveTraceLimits,
  withTraceContext,
  type BaggageEntry,
  type ResolvedTraceLimits,
  type TraceContextLimits,
} from "./trace-context.js";

// The parts of `@opentelemetry/api` this module uses, declared by shape: the runtime never imports the package, so an
// app without OpenTelemetry bundles none of it, and one with it passes its own copy in.

/** An OpenTelemetry Context (immutable; values by key). */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
  deleteValue(key: symbol): OtelContext;
}

export interface OtelTraceState {
  serialize(): string;
}

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: OtelTraceState;
}

export type OtelAttributeValue = string | number | boolean;

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: OtelAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

export interface OtelTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: { [key: string]: OtelAttributeValue } },
    context?: OtelContext,
  ): OtelSpan;
}

export interface OtelBaggageEntry {
  value: string;
  metadata?: { toString(): string };
}

export interface OtelBaggage {
  getAllEntries(): Array<[string, OtelBaggageEntry]>;
}

/** What mcpgen uses of `@opentelemetry/api`: pass the module itself (`import * as otel from "@opentelemetry/api"`). */
export interface OpenTelemetryApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getSpan(context: OtelContext): OtelSpan | undefined;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    setSpanContext(context: OtelContext, spanContext: OtelSpanContext): OtelContext;
  };
  readonly context: {
    active(): OtelContext;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: OtelContext,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F>;
  };
  readonly propagation: {
    getBaggage(context: OtelContext): OtelBaggage | undefined;
    setBaggage(context: OtelContext, baggage: OtelBaggage): OtelContext;
    createBaggage(entries?: { [key: string]: OtelBaggageEntry }): OtelBaggage;
  };
  createTraceState(rawTraceState?: string): OtelTraceState;
  baggageEntryMetadataFromString(metadata: string): { toString(): string };
  readonly ROOT_CONTEXT: OtelContext;
}

/** The `telemetry` option of the client and server sessions, McpServer, Client.connect and createMcpServer. */
export interface TelemetryOptions extends TraceContextLimits {
  /**
   * The OpenTelemetry API (`import * as otel from "@opentelemetry/api"`): a span for each request the app sends and
   * each handler that serves one, their context carried in `_meta`. Without it there are no spans: trace context goes
   * out only where the caller put it in `_meta`, and handlers read what came in as `ctx.trace`.
   */
  readonly api?: OpenTelemetryApi;
  /** The tracer's name; default "mcpgen". */
  readonly tracerName?: string;
  /** The tracer's version; default none. */
  readonly tracerVersion?: string;
}

/** The API itself (spans, default settings) or options with it. */
export type TelemetryOption = OpenTelemetryApi | TelemetryOptions;

// OpenTelemetry's SpanKind and SpanStatusCode values (stable API constants).
const SPAN_KIND_SERVER = 1;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

const TOOLS_CALL = "tools/call";
const PROMPTS_GET = "prompts/get";

function isApi(value: unknown): value is OpenTelemetryApi {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { trace?: { getTracer?: unknown }; context?: { with?: unknown; active?: unknown } };
  return typeof v.trace?.getTracer === "function" && typeof v.context?.with === "function";
}

/** What a span says of the session it belongs to (read when the span starts). */
export interface SpanFacts {
  readonly sessionId?: string;
  readonly protocolVersion?: string;
}

const MADE = new WeakMap<object, Telemetry>();

/**
 * A session's telemetry setting, checked once where the app passed it: the limits trace context is read with, and,
 * with the OpenTelemetry API, the spans of requests and handlers.
 */
export class Telemetry {
  readonly limits: ResolvedTraceLimits;
  /** Undefined without the OpenTelemetry API: then nothing is wrapped and no span is made. */
  readonly spans: Spans | undefined;

  constructor(option: TelemetryOption) {
    if (isApi(option)) {
      this.limits = resolveTraceLimits(undefined);
      this.spans = new Spans(option, "mcpgen", undefined, this.limits);
      return;
    }
    if (typeof option !== "object" || option === null)
      throw new TypeError(
        'telemetry must be the OpenTelemetry API (import * as otel from "@opentelemetry/api") or { api, tracerName, ... }',
      );
    if (option.api !== undefined && !isApi(option.api))
      throw new TypeError("telemetry.api must be the OpenTelemetry API object (with trace.getTracer and context.with)");
    if (option.tracerName !== undefined && (typeof option.tracerName !== "string" || option.tracerName === ""))
      throw new TypeError("telemetry.tracerName must be a non-empty string");
    this.limits = resolveTraceLimits(option);
    this.spans =
      option.api === undefined
        ? undefined
        : new Spans(option.api, option.tracerName ?? "mcpgen", option.tracerVersion, this.limits);
  }

  /**
   * The setting a session keeps, or undefined when the app gave none (nothing but the reading of `ctx.trace`). Made
   * once per option object: a server may start a session per request (HTTP's per-request lane) with the same one.
   */
  static of(option: TelemetryOption | undefined): Telemetry | undefined {
    if (option === undefined) return undefined;
    if (typeof option !== "object" || option === null) return new Telemetry(option);
    let made = MADE.get(option);
    if (made === undefined) {
      made = new Telemetry(option);
      MADE.set(option, made);
    }
    return made;
  }
}

/**
 * The session extension that reads each inbound request's trace context into its handler context (`ctx.trace`),
 * installed on every session: a request without `_meta` costs one property read.
 */
export function traceReader(limits: ResolvedTraceLimits | undefined): SessionExtension {
  return {
    requestStarted(operation: InboundOperation, params: JsonObject | undefined): void {
      const meta = params?._meta;
      if (meta === undefined) return;
      const trace = readTraceContext(meta, limits);
      if (trace !== undefined) (operation as HandlerContext).trace = trace;
    },
  };
}

/**
 * A handler given a context that says what trace context its params carried: for requests a protocol hands to the
 * app's handler itself (the input requests of a round), which no session extension sees.
 */
export function withParamsTrace(handler: RequestHandler, limits: ResolvedTraceLimits | undefined): RequestHandler {
  return (params, ctx) => {
    const trace = ctx.trace ?? readTraceContext(params?._meta, limits);
    return handler(params, trace === undefined || ctx.trace !== undefined ? ctx : { ...ctx, trace });
  };
}

/** OpenTelemetry spans for one session: the caller's side of each request and the handler's side. */
export class Spans {
  private readonly tracer: OtelTracer;

  constructor(
    private readonly api: OpenTelemetryApi,
    name: string,
    version: string | undefined,
    private readonly limits: ResolvedTraceLimits,
  ) {
    this.tracer = api.trace.getTracer(name, version);
  }

  /**
   * One request we send: a client span, a child of the trace context the caller put in `_meta` or else of the active
   * context, whose context goes out in `_meta` and is active while `send` runs (so what it does on the way, such as
   * answering input rounds, belongs to the call).
   */
  outgoing(
    method: string,
    params: JsonObject | undefined,
    facts: SpanFacts,
    send: (params: JsonObject) => Promise<JsonObject>,
  ): Promise<JsonObject> {
    const api = this.api;
    const given = readTraceContext(params?._meta, this.limits);
    const base = api.context.active();
    const parent = given === undefined ? base : this.extract(base, given);
    const span = this.tracer.startSpan(
      spanName(method, params),
      { kind: SPAN_KIND_CLIENT, attributes: attributes(method, params, facts, undefined) },
      parent,
    );
    const active = api.trace.setSpan(parent, span);
    const wire = withTraceContext(params, this.inject(active, span));
    let sent: Promise<JsonObject>;
    try {
      sent = api.context.with(active, send, undefined, wire);
    } catch (error) {
      ended(span, method, undefined, error);
      throw error;
    }
    return sent.then(
      (result) => {
        ended(span, method, result, undefined);
        return result;
      },
      (error: unknown) => {
        ended(span, method, undefined, error);
        throw error;
      },
    );
  }

  /**
   * A handler that runs in a server span for the request it serves: a child of the trace context the request carried
   * (a request without one starts a trace; the context that happened to be active when it arrived is not its parent).
   * Input requests the run ends with (an input-required round) carry the span's context to the client.
   */
  handler(method: string, handler: RequestHandler): RequestHandler {
    return (params, ctx) => {
      const api = this.api;
      const trace = ctx.trace;
      const parent = trace === undefined ? api.ROOT_CONTEXT : this.extract(api.ROOT_CONTEXT, trace);
      const span = this.tracer.startSpan(
        spanName(method, params),
        { kind: SPAN_KIND_SERVER, attributes: attributes(method, params, serverFacts(ctx), ctx) },
        parent,
      );
      const active = api.trace.setSpan(parent, span);
      let out: Promise<JsonObject> | JsonObject;
      try {
        out = api.context.with(active, handler, undefined, params, ctx);
      } catch (error) {
        throw this.handlerFailed(span, method, active, error);
      }
      return Promise.resolve(out).then(
        (result) => {
          ended(span, method, result, undefined);
          return result;
        },
        (error: unknown) => {
          throw this.handlerFailed(span, method, active, error);
        },
      );
    };
  }

  private handlerFailed(span: OtelSpan, method: string, active: OtelContext, error: unknown): unknown {
    if (!(error instanceof ReplacedAnswer)) {
      ended(span, method, undefined, error);
      return error;
    }
    // Not a failure: the run ended asking the client for input, and the client's handlers are children of this span.
    span.end();
    const asked = error.result.inputRequests;
    if (!isPlainObject(asked)) return error;
    const trace = this.inject(active, undefined);
    const stamped: JsonObject = {};
    for (const [key, request] of Object.entries(asked)) {
      stamped[key] =
        isPlainObject(request) && (request.params === undefined || isPlainObject(request.params))
          ? Object.assign({}, request, { params: withTraceContext(request.params, trace) })
          : request;
    }
    return new ReplacedAnswer(Object.assign({}, error.result, { inputRequests: stamped }));
  }

  /** `base` with the remote span and baggage `trace` names. */
  private extract(base: OtelContext, trace: TraceContext): OtelContext {
    const api = this.api;
    let context = base;
    const parent = parseTraceparent(trace.traceparent);
    if (parent !== undefined) {
      context = api.trace.setSpanContext(context, {
        traceId: parent.traceId,
        spanId: parent.parentId,
        traceFlags: parent.flags,
        isRemote: true,
        ...(trace.tracestate === undefined ? {} : { traceState: api.createTraceState(trace.tracestate) }),
      });
    }
    const entries = trace.baggage === undefined ? undefined : parseBaggage(trace.baggage, this.limits);
    if (entries !== undefined && entries.length > 0) {
      const baggage: { [key: string]: OtelBaggageEntry } = {};
      for (const entry of entries)
        baggage[entry.key] =
          entry.metadata === undefined
            ? { value: entry.value }
            : { value: entry.value, metadata: api.baggageEntryMetadataFromString(entry.metadata) };
      context = api.propagation.setBaggage(context, api.propagation.createBaggage(baggage));
    }
    return context;
  }

  /** The trace context of `context` (its span's, or `span`'s) as `_meta` carries it. */
  private inject(context: OtelContext, span: OtelSpan | undefined): TraceContext {
    const out: { traceparent?: string; tracestate?: string; baggage?: string } = {};
    const spanContext = (span ?? this.api.trace.getSpan(context))?.spanContext();
    if (spanContext !== undefined && validIds(spanContext)) {
      out.traceparent = formatTraceparent({
        traceId: spanContext.traceId,
        spanId: spanContext.spanId,
        flags: spanContext.traceFlags & 0xff,
      });
      const state = spanContext.traceState?.serialize();
      if (state !== undefined && state !== "") out.tracestate = state;
    }
    const baggage = this.api.propagation.getBaggage(context);
    if (baggage !== undefined) {
      const entries: BaggageEntry[] = baggage.getAllEntries().map(([key, entry]) => {
        const metadata = entry.metadata?.toString();
        return metadata === undefined || metadata === ""
          ? { key, value: entry.value }
          : { key, value: entry.value, metadata };
      });
      if (entries.length > 0) {
        try {
          out.baggage = formatBaggage(entries);
        } catch {
          // An entry W3C Baggage cannot carry (a key that is no token) leaves the baggage out, not the request.
        }
      }
    }
    return out;
  }
}

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;

/** A span context worth propagating: a no-op tracer's span without a parent has all-zero ids. */
function validIds(spanContext: OtelSpanContext): boolean {
  return (
    HEX_TRACE.test(spanContext.traceId) &&
    !/^0+$/.test(spanContext.traceId) &&
    HEX_SPAN.test(spanContext.spanId) &&
    !/^0+$/.test(spanContext.spanId)
  );
}

/** `{mcp.method.name} {target}` with the tool or prompt as the target (low cardinality, unlike a resource URI). */
function spanName(method: string, params: JsonObject | undefined): string {
  if ((method === TOOLS_CALL || method === PROMPTS_GET) && typeof params?.name === "string")
    return `${method} ${params.name}`;
  return method;
}

function serverFacts(ctx: RequestContext): SpanFacts {
  return { sessionId: ctx.sessionId, protocolVersion: ctx.peerIdentity?.protocolVersion };
}

/** The MCP semantic conventions' attributes of a request's span. */
function attributes(
  method: string,
  params: JsonObject | undefined,
  facts: SpanFacts,
  ctx: RequestContext | undefined,
): { [key: string]: OtelAttributeValue } {
  const out: { [key: string]: OtelAttributeValue } = { "mcp.method.name": method };
  if (method === TOOLS_CALL && typeof params?.name === "string") {
    out["gen_ai.tool.name"] = params.name;
    out["gen_ai.operation.name"] = "execute_tool";
  } else if (method === PROMPTS_GET && typeof params?.name === "string") out["gen_ai.prompt.name"] = params.name;
  if (typeof params?.uri === "string" && method.startsWith("resources/")) out["mcp.resource.uri"] = params.uri;
  if (ctx !== undefined) out["jsonrpc.request.id"] = String(ctx.requestId);
  if (facts.sessionId !== undefined) out["mcp.session.id"] = facts.sessionId;
  if (facts.protocolVersion !== undefined) out["mcp.protocol.version"] = facts.protocolVersion;
  return out;
}

/** Ends a span with what the request came to: a JSON-RPC error's code, a tool's error result, or another failure. */
function ended(span: OtelSpan, method: string, result: JsonObject | undefined, error: unknown): void {
  if (error !== undefined) {
    const type =
      error instanceof RpcError ? String(error.code) : error instanceof Error ? error.name || "Error" : "_OTHER";
    span.setAttribute("error.type", type);
    if (error instanceof RpcError) span.setAttribute("rpc.response.status_code", String(error.code));
    span.setStatus({ code: STATUS_ERROR, message: error instanceof Error ? error.message : String(error) });
    if (error instanceof Error) span.recordException(error);
  } else if (method === TOOLS_CALL && result?.isError === true) {
    span.setAttribute("error.type", "tool_error");
    span.setStatus({ code: STATUS_ERROR });
  }
  span.end();
}
