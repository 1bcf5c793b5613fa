// Test wiring for the task receiver: sessions over the generated tables, an McpServer, gates.
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { revisionTables } from "../../generated/revisions.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { McpServer, type McpServerInit } from "../../runtime/server/mcp-server.js";
import { TaskReceiver, type TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import type { ServerSession } from "../../runtime/mcp/lifecycle.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import type { InboundInfo } from "../../runtime/rpc/transport.js";
import { sessionKit } from "../kit/sessions.js";
import { createServer } from "node:http";
import {
  createStreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { listen } from "../kit/net.js";

/** Sessions over the generated tables (their result checks take a CreateTaskResult for a request sent as a task). */
export const kit = sessionKit({ clientToServer, serverToClient, isMessage });

/** An McpServer with a task receiver. */
export type TaskServer = McpServer & { readonly tasks: TaskReceiver };

/** An McpServer over the generated tables, running tool tasks on `tasks` (a receiver, or the options of a new one). */
export function makeServer(
  init: Partial<Omit<McpServerInit, "tasks">> & { tasks?: TaskReceiver | TaskReceiverOptions } = {},
): TaskServer {
  const tasks = init.tasks instanceof TaskReceiver ? init.tasks : new TaskReceiver(init.tasks);
  return new McpServer({
    serverInfo: { name: "tasks-server", version: "1.0.0" },
    progressInterval: 0,
    ...init,
    tasks,
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    revisions: revisionTables,
  }) as TaskServer;
}

/** A client session (task-tolerant checks) connected in memory to `server`; `info` tags what the server receives. */
export async function connectClient(
  server: McpServer,
  options: { info?: InboundInfo; capabilities?: JsonObject } = {},
): Promise<{ client: ClientSession; session: ServerSession }> {
  const [clientEnd, serverEnd] = createInMemoryPair(options.info === undefined ? {} : { serverInfo: options.info });
  const session = await server.connect(serverEnd);
  const client = kit.clientSession(options.capabilities === undefined ? {} : { capabilities: options.capabilities });
  await client.connect(clientEnd);
  return { client, session };
}

import { gate, type Gate } from "../kit/timing.js";

export { gate, type Gate };

/** The first text of a result's content. */
export function textOf(result: unknown): string | undefined {
  const content = (result as { content?: { type: string; text?: string }[] }).content;
  return content?.[0]?.type === "text" ? content[0].text : undefined;
}

/** Registers its closing; `closeAfterEach()` returns one. */
export type Cleanup = (close: () => unknown) => void;

/**
 * A server whose tool `wait` (task support optional) holds until `release()`, unless called with `quick: true`;
 * the server and its receiver are closed by `cleanup`.
 */
export function heldServer(
  cleanup: Cleanup,
  tasks: TaskReceiverOptions | TaskReceiver = {},
): { server: TaskServer; release: () => void } {
  const hold = gate();
  const s = makeServer({ tasks });
  s.tool("wait", { taskSupport: "optional" }, async (args) => {
    if ((args as JsonObject).quick !== true) await hold.promise;
    return "waited";
  });
  cleanup(() => s.close());
  cleanup(() => s.tasks.close());
  return { server: s, release: hold.open };
}

/** A client session connected to `s` as `principal` (none: the task binds to its session), closed by `cleanup`. */
export async function clientAs(cleanup: Cleanup, s: TaskServer, principal?: string): Promise<ClientSession> {
  const { client: c } = await connectClient(s, principal === undefined ? {} : { info: { principal } });
  cleanup(() => c.close());
  return c;
}

/**
 * Serves `server` over Streamable HTTP on 127.0.0.1 (`options` beside path and onSession); `cleanup` closes the
 * receiver, the endpoint, the server and the listener. Resolves with the endpoint's URL.
 */
export async function serveOverHttp(
  cleanup: Cleanup,
  server: TaskServer,
  options: Partial<StreamableHttpServerOptions> = {},
): Promise<string> {
  const mcp = createStreamableHttpServer({
    ...options,
    path: "/mcp",
    onSession: (transport) => server.connect(transport).then(() => undefined),
  });
  const listening = await listen(createServer(mcp.nodeListener));
  cleanup(async () => {
    server.tasks.close();
    await mcp.close();
    await server.close();
    await listening.close();
  });
  return `${listening.origin}/mcp`;
}
