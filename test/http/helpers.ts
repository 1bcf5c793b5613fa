// Test fixtures for the HTTP transport: a real node:http server on 127.0.0.1, a tiny responder, raw fetch helpers.
import { afterEach } from "vitest";
import type { IncomingMessage, Server } from "node:http";
import type { InboundInfo } from "../../runtime/rpc/transport.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../../runtime/rpc/jsonrpc.js";
import {
  createStreamableHttpServer,
  type HttpServerTransport,
  type StreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { listenHttp, type HttpServerTimeouts } from "../../runtime/transports/http/server/listen.js";
import { SseDecoder } from "../../runtime/transports/http/sse.js";
import { closeAfterEach } from "../kit/cleanup.js";

export interface Received {
  message: unknown;
  info?: InboundInfo;
}

export interface ResponderControl {
  /** Resolves the request parked by method "wait" with params {gate}. */
  open(gate: string): void;
  /** The transport of each session, in order of creation. */
  transports: HttpServerTransport[];
  received: Received[];
  closed: HttpServerTransport[];
}

/**
 * A stand-in for the MCP session: answers initialize, echoes, streams progress, parks on gates, and can send
 * unrelated notifications. Wire it with `onSession: responder.attach`.
 */
export function makeResponder(): ResponderControl & { attach: (t: HttpServerTransport) => void } {
  const gates = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const gate = (name: string) => {
    let p = waiting.get(name);
    if (!p) {
      p = new Promise<void>((resolve) => gates.set(name, resolve));
      waiting.set(name, p);
    }
    return p;
  };
  // Server-to-client requests made by method "ask", waiting for the client's answer.
  const asked = new Map<string, (result: unknown) => void>();
  const control: ResponderControl & { attach: (t: HttpServerTransport) => void } = {
    transports: [],
    received: [],
    closed: [],
    open(name) {
      void gate(name);
      gates.get(name)?.();
    },
    attach(t) {
      control.transports.push(t);
      t.onclose = () => control.closed.push(t);
      t.onmessage = (message, info) => {
        control.received.push({ message, info });
        const m = message as { id?: unknown; result?: unknown; method?: unknown };
        if (m.method === undefined && typeof m.id === "string" && asked.has(m.id)) {
          asked.get(m.id)!(m.result);
          asked.delete(m.id);
          return;
        }
        void handle(t, message as JsonRpcMessage, info).catch(() => undefined);
      };
    },
  };
  async function handle(t: HttpServerTransport, m: JsonRpcMessage, info?: InboundInfo): Promise<void> {
    if (!("method" in m) || !("id" in m)) return;
    const id = m.id as RequestId;
    const params = (m.params ?? {}) as JsonObject;
    const reply = (result: JsonObject) => t.send({ jsonrpc: "2.0", id, result }, { relatedRequestId: id });
    const meta = (params._meta ?? {}) as { progressToken?: string | number };
    const token = meta.progressToken ?? String(id);
    const progress = (n: number) =>
      t.send(
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: n } },
        { relatedRequestId: id },
      );
    switch (m.method) {
      case "initialize":
        return reply({
          protocolVersion: "2025-11-25",
          capabilities: {},
          serverInfo: { name: "responder", version: "0" },
        });
      case "ping":
        return reply({});
      case "echo":
        return reply({ echo: params, principal: info?.principal ?? null, sessionId: info?.sessionId ?? null });
      case "progress": {
        const count = Number(params.count ?? 3);
        for (let i = 1; i <= count; i++) await progress(i);
        return reply({ done: count });
      }
      case "wait": {
        // Progress before the gate, the rest after it: lets a test drop the connection in between.
        const before = Number(params.before ?? 1);
        const after = Number(params.after ?? 2);
        for (let i = 1; i <= before; i++) await progress(i);
        await gate(String(params.gate));
        for (let i = before + 1; i <= before + after; i++) await progress(i);
        return reply({ done: before + after });
      }
      case "ask": {
        const askId = `ask-${String(id)}`;
        const answer = new Promise<unknown>((resolve) => asked.set(askId, resolve));
        await t.send(
          { jsonrpc: "2.0", id: askId, method: "elicitation/create", params: { message: "name?" } },
          { relatedRequestId: id },
        );
        return reply({ answer: (await answer) as JsonObject });
      }
      case "flood": {
        // Large related notifications as fast as the transport takes them, for slow-reader tests.
        const count = Number(params.count ?? 10);
        const pad = "x".repeat(Number(params.size ?? 1000));
        for (let i = 0; i < count; i++) {
          await t.send(
            { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: { i, pad } } },
            { relatedRequestId: id },
          );
        }
        return reply({ done: count });
      }
      case "broadcast":
        await t.send({ jsonrpc: "2.0", method: "notifications/message", params: { text: String(params.text ?? "") } });
        return reply({});
      default:
        return t.send(
          { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } },
          { relatedRequestId: id },
        );
    }
  }
  return control;
}

export interface RunningServer {
  url: string;
  port: number;
  mcp: StreamableHttpServer;
  responder: ReturnType<typeof makeResponder>;
  http: Server;
  stop(): Promise<void>;
}

/** The MCP endpoint with a responder, on a listenHttp server at 127.0.0.1 (its timeouts as given, else the defaults). */
export async function startServer(
  options: Partial<StreamableHttpServerOptions> = {},
  timeouts: HttpServerTimeouts = {},
): Promise<RunningServer> {
  const responder = makeResponder();
  const mcp = createStreamableHttpServer({ onSession: responder.attach, ...options });
  const listening = await listenHttp(mcp.nodeListener, { ...timeouts, host: "127.0.0.1", port: 0 });
  return {
    url: `${listening.origin}/mcp`,
    port: listening.port,
    mcp,
    responder,
    http: listening.server,
    async stop() {
      await mcp.close();
      await listening.close();
    },
  };
}

/** For a file whose tests each start a server: startServer, with the server it started stopped after the test. */
export function serverPerTest(): typeof startServer {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  return async (...args) => (running = await startServer(...args));
}

export const ACCEPT_BOTH = "application/json, text/event-stream";

export function initializeMessage(id: RequestId = 0): JsonRpcMessage {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } },
  };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { accept: ACCEPT_BOTH, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A POST handed to a fetch handler in process, as an adapter passes one on (with the Host header it received). */
export function postToHandler(
  handler: (request: Request) => Promise<Response>,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { host: "127.0.0.1", accept: ACCEPT_BOTH, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
}

/** Opens a session with raw fetch; returns its id. */
export async function initialize(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await post(url, initializeMessage(), headers);
  if (res.status !== 200) throw new Error(`initialize failed: ${res.status} ${await res.text()}`);
  await readSse(res);
  const id = res.headers.get("mcp-session-id");
  if (!id) throw new Error("no session id");
  return id;
}

export interface ReadEvent {
  id: string;
  data: string;
}

export interface SseRead {
  events: ReadEvent[];
  /** Parsed JSON of every non-empty data event. */
  messages: JsonObject[];
  retry?: number;
  /** True when the server ended the body; false when we stopped at `until`. */
  ended: boolean;
}

/** Reads an SSE body until it ends, or until `until` says stop (then cancels it); `read` fills up as it goes. */
export async function readSse(
  res: Response,
  until?: (read: SseRead) => boolean,
  read: SseRead = { events: [], messages: [], ended: false },
): Promise<SseRead> {
  const decoder = new SseDecoder({
    onEvent: (e) => {
      read.events.push({ id: e.lastEventId, data: e.data });
      if (e.data !== "") read.messages.push(JSON.parse(e.data) as JsonObject);
    },
    onRetry: (ms) => (read.retry = ms),
  });
  if (!res.body) return read;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      read.ended = true;
      return read;
    }
    decoder.push(value);
    if (until?.(read)) {
      await reader.cancel();
      return read;
    }
  }
}

export function sessionHeaders(sessionId: string): Record<string, string> {
  return { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
}

/** Status and whole body of a raw node:http response (for requests fetch cannot make: odd Host, chunked bodies). */
export function readBody(res: IncomingMessage): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (c: string) => (text += c));
    res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    res.on("error", reject);
  });
}

/**
 * The fetch handler in process, closed after each test (no sockets, so fake timers can drive it). `post` sends a
 * message with the adapter's info (`clientAddress`); `open` POSTs an initialize.
 */
export function handlerPerTest(): (options?: Partial<StreamableHttpServerOptions>) => {
  mcp: StreamableHttpServer;
  responder: ReturnType<typeof makeResponder>;
  post(body: unknown, headers?: Record<string, string>, info?: { clientAddress?: string }): Promise<Response>;
  open(info?: { clientAddress?: string }, headers?: Record<string, string>): Promise<Response>;
} {
  const cleanup = closeAfterEach();
  return (options = {}) => {
    const responder = makeResponder();
    const mcp = createStreamableHttpServer({ onSession: responder.attach, ...options });
    cleanup(() => mcp.close());
    const post = (body: unknown, headers: Record<string, string> = {}, info: { clientAddress?: string } = {}) =>
      mcp.fetch(
        new Request("http://127.0.0.1:3000/mcp", {
          method: "POST",
          headers: { host: "127.0.0.1:3000", accept: ACCEPT_BOTH, "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        }),
        info,
      );
    return { mcp, responder, post, open: (info = {}, headers = {}) => post(initializeMessage(1), headers, info) };
  };
}

/** Opens sessions until the first refusal; returns how many opened and the refusal. */
export async function fill(
  open: () => Promise<Response>,
  most: number,
): Promise<{ opened: number; refused: Response }> {
  for (let opened = 0; opened <= most; opened++) {
    const res = await open();
    if (res.status !== 200) return { opened, refused: res };
    await res.text();
  }
  throw new Error(`more than ${most} sessions opened`);
}
