// Test fixtures for resumable requests: a tool server on the generated tables, in-memory links that can be cut, an HTTP server, a seeded RNG.
import { createServer, type Server } from "node:http";
import { ServerSession } from "../../runtime/mcp/lifecycle.js";
import { ClientSession, type ClientSessionOptions } from "../../runtime/mcp/client-session.js";
import { InMemoryLink } from "../../runtime/transports/in-memory.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { SEQ_META_KEY, type SeqStamp } from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import {
  createStreamableHttpServer,
  type StreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { serverSession, clientSession } from "../kit/mcp-sessions.js";
import { listen } from "../kit/net.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";

export interface ToolBehaviour {
  /** Called between progress steps; await it to let the test act (cut, close) at a precise point. */
  step?: (name: string, args: JsonObject, i: number, ctx: RequestContext) => Promise<void> | void;
}

/** The tools: `count` reports `steps` progress values 1..steps then returns them; `ask` elicits; `echo` answers at once. */
export function toolHandler(behaviour: ToolBehaviour = {}) {
  return async (params: JsonObject | undefined, ctx: RequestContext): Promise<JsonObject> => {
    const name = String(params?.name);
    const args = (params?.arguments ?? {}) as JsonObject;
    if (name === "count") {
      const steps = Number(args.steps ?? 20);
      for (let i = 1; i <= steps; i++) {
        await behaviour.step?.(name, args, i, ctx);
        if (ctx.signal.aborted) throw new Error("aborted");
        await ctx.progress(i, steps);
      }
      await behaviour.step?.(name, args, steps + 1, ctx);
      return { content: [{ type: "text", text: `counted ${steps} for ${String(args.tag ?? "")}` }] };
    }
    if (name === "ask") {
      await behaviour.step?.(name, args, 0, ctx);
      const answer = await ctx.request("elicitation/create", {
        mode: "form",
        message: "name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      await behaviour.step?.(name, args, 1, ctx);
      return { content: [{ type: "text", text: JSON.stringify(answer) }] };
    }
    return { content: [{ type: "text", text: "echo" }] };
  };
}

export function newServerSession(resumable: ResumableRequests, behaviour: ToolBehaviour = {}): ServerSession {
  const session = serverSession({
    serverInfo: { name: "resumable-test", version: "1" },
    capabilities: { tools: {} },
    progressInterval: 0,
  });
  resumable.install(session);
  session.onRequest("tools/call", toolHandler(behaviour));
  return session;
}

/** A client on an in-memory link whose reconnect makes a fresh server session on the same manager. */
export async function connectInMemory(
  resumable: ResumableRequests,
  behaviour: ToolBehaviour = {},
  options: Partial<ClientSessionOptions> = {},
  principal?: string,
  link_: { confirmsDelivery?: false; failReconnects?: number } = {},
): Promise<{ client: ClientSession; link: InMemoryLink; servers: ServerSession[]; reconnectAttempts: number[] }> {
  const info = principal === undefined ? {} : { serverInfo: { principal } };
  const link = new InMemoryLink(info);
  const servers: ServerSession[] = [];
  const serve = async (transport: Transport) => {
    const server = newServerSession(resumable, behaviour);
    servers.push(server);
    await server.connect(link_.confirmsDelivery === false ? withoutDeliveryConfirmation(transport) : transport);
  };
  await serve(link.server);
  const reconnectAttempts: number[] = [];
  const client = clientSession({
    clientInfo: { name: "resumable-client", version: "1" },
    capabilities: { elicitation: {} },
    extensions: [resumableClient()],
    reconnect: async () => {
      reconnectAttempts.push(Date.now());
      // As a network that is down for a while: the first attempts fail.
      if (reconnectAttempts.length <= (link_.failReconnects ?? 0)) throw new Error("network unreachable");
      const [c, s] = link.reconnect();
      await serve(s);
      return c;
    },
    ...options,
  });
  await client.connect(link.client);
  return { client, link, servers, reconnectAttempts };
}

/** The same transport, seen by the server as one that cannot tell when a message arrived (as over a network). */
function withoutDeliveryConfirmation(transport: Transport): Transport {
  return new Proxy(transport, {
    get(target, property) {
      if (property === "confirmsDelivery") return false;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
}

/** Every message the client receives from now on, in order (before the resumer drops duplicates). */
export function recordInbound(client: ClientSession): JsonObject[] {
  const seen: JsonObject[] = [];
  const spy = (client as unknown as { hooks: { accept(m: JsonObject): boolean } }).hooks;
  const original = spy.accept.bind(spy);
  spy.accept = (m) => {
    seen.push(m);
    return original(m);
  };
  return seen;
}

/** The sequence stamp a message carries in params._meta or result._meta, if any. */
export function stampOf(m: JsonObject): SeqStamp | undefined {
  const holder = (m.params ?? m.result) as JsonObject | undefined;
  return (holder?._meta as JsonObject | undefined)?.[SEQ_META_KEY] as SeqStamp | undefined;
}

export interface ResumableHttp {
  url: string;
  port: number;
  mcp: StreamableHttpServer;
  http: Server;
  /** The server session of each MCP session, in order of creation. */
  servers: ServerSession[];
  /** Ends the sessions and stops listening; the port then has nothing listening on it. */
  stop(): Promise<void>;
}

/** A Streamable HTTP server on 127.0.0.1 whose sessions are the tool servers above, all on one manager. */
export async function startResumableHttp(
  resumable: ResumableRequests,
  behaviour: ToolBehaviour = {},
  options: Partial<StreamableHttpServerOptions> = {},
): Promise<ResumableHttp> {
  const servers: ServerSession[] = [];
  const mcp = createStreamableHttpServer({
    ...resumable.transportOptions,
    ...options,
    onSession: async (transport) => {
      const server = newServerSession(resumable, behaviour);
      servers.push(server);
      await server.connect(transport);
    },
  });
  const http = createServer(mcp.nodeListener);
  const { port } = await listen(http);
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    mcp,
    http,
    servers,
    async stop() {
      if (stopped) return;
      stopped = true;
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await mcp.close();
    },
  };
}

/** A fetch whose connections the test can drop all at once, as a failing network would. */
export function cuttableFetch(): { fetch: typeof fetch; cut(): void } {
  const live = new Set<AbortController>();
  return {
    fetch: (input, init) => {
      const controller = new AbortController();
      live.add(controller);
      // The caller's signal outlives this request (it is the transport's own), so no listener is left on it.
      const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
      return fetch(input, { ...init, signal });
    },
    cut() {
      for (const c of live) c.abort();
      live.clear();
    },
  };
}
