// Wiring for the McpServer tests: the generated tables and Client over an in-memory pair, and a transport spy.
import { Client, type ClientOptions } from "../../generated/client.js";
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { revisionTables } from "../../generated/revisions.js";
import type { JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { ServerSession } from "../../runtime/mcp/lifecycle.js";
import { McpServer, type McpServerInit } from "../../runtime/server/mcp-server.js";
import type { InboundInfo, SendOptions, Transport } from "../../runtime/rpc/transport.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { until } from "../kit/timing.js";
import { afterEach } from "vitest";

/** An McpServer over the generated method tables, as the package's users build it. */
export function makeServer(init: Partial<McpServerInit> = {}): McpServer {
  return new McpServer({
    serverInfo: { name: "test-server", version: "1.0.0" },
    progressInterval: 0,
    ...init,
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    revisions: revisionTables,
  });
}

/** Records everything sent through it; otherwise a transparent wrapper. */
export class SpyTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sent: JsonRpcMessage[] = [];

  constructor(private readonly inner: Transport) {}

  start(): Promise<void> {
    this.inner.onmessage = (m, i) => this.onmessage?.(m, i);
    this.inner.onmalformed = (e, i) => this.onmalformed?.(e, i);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    this.sent.push(message);
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface Connected {
  client: Awaited<ReturnType<typeof Client.connect>>;
  session: ServerSession;
  /** What the client sent, in order. */
  clientSent: JsonRpcMessage[];
  close(): Promise<void>;
}

/** Connect a generated Client to `server` in memory and run the handshake. */
export async function connect(server: McpServer, options: Partial<ClientOptions> = {}): Promise<Connected> {
  const [clientEnd, serverEnd] = createInMemoryPair();
  const session = await server.connect(serverEnd);
  const spy = new SpyTransport(clientEnd);
  const client = await Client.connect(spy, { clientInfo: { name: "test-client", version: "1.0.0" }, ...options });
  return {
    client,
    session,
    clientSent: spy.sent,
    close: () => client.peer.close(),
  };
}

/** The envelope a 2026-07-28 client puts in every request's `_meta`. */
export function envelope(extra: JsonObject = {}): JsonObject {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "modern-client", version: "1.0.0" },
    ...extra,
  };
}

/** A raw client end: sends JSON-RPC as written and collects what comes back, as a probe or a foreign client would. */
export async function rawPeer(cleanup: (close: () => unknown) => void, s: McpServer, info?: InboundInfo) {
  const [clientEnd, serverEnd] = createInMemoryPair(info === undefined ? {} : { serverInfo: info });
  const received: JsonObject[] = [];
  clientEnd.onmessage = (message) => received.push(message as JsonObject);
  await clientEnd.start();
  await s.connect(serverEnd);
  cleanup(() => clientEnd.close());
  let next = 1;
  return {
    received,
    /** Answers the server's requests (2025-11-25) with what `answer` returns for each. */
    answerRequests(answer: (method: string, params: JsonObject | undefined) => JsonObject): void {
      clientEnd.onmessage = (message) => {
        const m = message as JsonObject;
        received.push(m);
        if (typeof m.method === "string" && m.id !== undefined)
          void clientEnd.send({ jsonrpc: "2.0", id: m.id as number, result: answer(m.method, m.params as JsonObject) });
      };
    },
    async request(method: string, params?: JsonObject): Promise<JsonObject> {
      const id = next++;
      const message: JsonRpcMessage =
        params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
      await clientEnd.send(message);
      await until(() => received.some((m) => m.id === id && m.method === undefined));
      return received.find((m) => m.id === id && m.method === undefined)!;
    },
    /** Sends a request without waiting for its answer (a long-lived one); returns its id. */
    send(method: string, params?: JsonObject): number {
      const id = next++;
      void clientEnd.send(
        params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params },
      );
      return id;
    },
    notify: (method: string, params?: JsonObject) =>
      clientEnd.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }),
    logs: () => received.filter((m) => m.method === "notifications/message").map((m) => (m.params as JsonObject).data),
  };
}

/** `connect` for a test file whose connections all close after each test: registers the afterEach, returns the connector. */
export function closedAfterEach(): (server: McpServer, options?: Partial<ClientOptions>) => Promise<Connected> {
  const open: Connected[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });
  return async (server, options) => {
    const c = await connect(server, options);
    open.push(c);
    return c;
  };
}
