// Example: the stdio example's tools (add, slow_count, greet) served over Streamable HTTP at http://127.0.0.1:PORT/mcp (`PORT=N npm run -s example:http-server`; with REDIS_URL, nodes share a Redis store; with AUTH_ISSUER, only bearer tokens from that issuer get in).
import type { RequestListener } from "node:http";
import { pathToFileURL } from "node:url";
import {
  AsyncTools,
  ResumableRequests,
  TaskReceiver,
  createMcpServer,
  createStreamableHttpServer,
  listenHttp,
  type McpServer,
  type StreamableHttpServerOptions,
} from "../generated/sdk.js";
import type { OperationStore } from "../runtime/store/types.js";
import { addExampleTools } from "./tools.js";

export interface ExampleServerOptions {
  /** Where resumable requests, async runs and tasks are kept; a shared (Redis) store makes the nodes a cluster. */
  store?: OperationStore;
}

/** The MCP server and the managers that outlive its connections (closed with it). */
export interface ExampleServer {
  server: McpServer;
  resumable: ResumableRequests;
  asyncTools: AsyncTools;
  /** Runs tools called as tasks (slow_count); tasks outlive their connection. */
  tasks: TaskReceiver;
}

/** The MCP server definition: every HTTP session gets its own connection to it. */
export function createExampleServer(options: ExampleServerOptions = {}): McpServer {
  return createExampleNode(options).server;
}

/** The server with its resumable-request and async-tool managers (they outlive connections; close them on shutdown). */
export function createExampleNode(options: ExampleServerOptions = {}): ExampleServer {
  const onerror = (error: Error) => console.error("[example http server]", error.message);
  // slow_count is resumable (SEP-975) for clients that advertise resumableRequests, and callable with tools/async/call.
  const resumable = new ResumableRequests({
    store: options.store,
    onerror,
    policy: (method, params) => method === "tools/call" && params?.name === "slow_count",
  });
  const asyncTools = new AsyncTools(undefined, { maxKeepAlive: 600, store: options.store, onerror });
  // With a shared store every node answers for every task (tasks/get|result|list|cancel).
  const tasks = new TaskReceiver({ maxTtlMs: 600_000, store: options.store, onerror });
  const server = createMcpServer({
    tasks,
    onsession: (session) => {
      resumable.install(session);
      asyncTools.install(session);
    },
    serverInfo: { name: "mcpgen-example-http", version: "1.0.0" },
    instructions:
      "Arithmetic, a slow counter and a greeting, to try tools, progress, cancellation and elicitation over HTTP.",
    logging: true,
    progressInterval: 0,
    onerror: (error) => console.error("[example http server]", error.message),
  });

  addExampleTools(server);
  return { server, resumable, asyncTools, tasks };
}

export interface ExampleHttpOptions extends ExampleServerOptions {
  /**
   * An OAuth authorization server's issuer URL: the endpoint then takes only its JWT access tokens issued for this
   * server (audience = the endpoint's URL), and serves the protected resource metadata that points clients to it.
   */
  authIssuer?: string;
  /** Scopes every request needs (with authIssuer). */
  authScopes?: readonly string[];
}

/** Listens on 127.0.0.1 only (port 0 picks a free one); stop() ends every session and the listener. */
export async function startExampleHttpServer(
  port: number,
  options: ExampleHttpOptions = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const { server, resumable, asyncTools, tasks } = createExampleNode(options);
  const onerror = (error: Error) => console.error("[example http server]", error.message);
  // Listening first: the endpoint's URL, port included, is the resource tokens must be issued for.
  let listener: RequestListener = (_req, res) => void res.writeHead(503).end();
  // The default header, body and keep-alive timeouts of listenHttp bound slow clients.
  const http = await listenHttp((req, res) => listener(req, res), { port, host: "127.0.0.1" });
  const url = `${http.origin}/mcp`;
  let auth: Partial<StreamableHttpServerOptions> = {};
  if (options.authIssuer !== undefined) {
    try {
      auth = await protectExample(server, url, options.authIssuer, options.authScopes ?? [], onerror);
    } catch (error) {
      resumable.close();
      asyncTools.close();
      tasks.close();
      await http.close();
      throw error;
    }
  }
  const mcp = createStreamableHttpServer({
    ...resumable.transportOptions,
    path: "/mcp",
    onSession: async (transport) => {
      await server.connect(transport);
    },
    onerror,
    ...auth,
  });
  listener = mcp.nodeListener;
  return {
    url,
    async stop() {
      resumable.close();
      asyncTools.close();
      tasks.close();
      await mcp.close();
      await server.close();
      await http.close();
    },
  };
}

/**
 * The bearer check, scope challenges and metadata for `url`, trusting `issuer` (loaded only when asked for: jose is
 * an optional peer). The issuer's metadata and keys are fetched now, so a wrong AUTH_ISSUER stops the start.
 */
async function protectExample(
  server: McpServer,
  url: string,
  issuer: string,
  scopes: readonly string[],
  onerror: (error: Error) => void,
): Promise<Partial<StreamableHttpServerOptions>> {
  const { jwtVerifier, protectResource } = await import("../runtime/auth/index.js");
  const verifier = jwtVerifier({ issuer });
  await verifier.prepare();
  return protectResource({
    resource: url,
    authorizationServers: [issuer],
    verifier,
    server,
    requiredScopes: scopes,
    onerror,
  }).http;
}

/** With REDIS_URL: the Redis store (ioredis is loaded only then). MCPGEN_LEASE_MS: how soon a dead node's requests fail. */
async function storeFromEnv(): Promise<
  (OperationStore & { close(): Promise<void>; ready(): Promise<void> }) | undefined
> {
  const url = process.env.REDIS_URL;
  if (url === undefined || url === "") return undefined;
  const { RedisOperationStore } = await import("../runtime/store/redis.js");
  const leaseMs = process.env.MCPGEN_LEASE_MS === undefined ? undefined : Number(process.env.MCPGEN_LEASE_MS);
  return new RedisOperationStore({
    url,
    leaseMs,
    onerror: (error) => console.error("[example http server] redis:", error.message),
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const store = await storeFromEnv();
  const authIssuer = process.env.AUTH_ISSUER || undefined;
  const authScopes = (process.env.AUTH_SCOPES ?? "").split(" ").filter((s) => s !== "");
  const running = await startExampleHttpServer(Number(process.env.PORT ?? 3000), { store, authIssuer, authScopes });
  await store?.ready();
  const notes = [
    store === undefined ? "" : "Redis store",
    authIssuer === undefined ? "" : `bearer tokens from ${authIssuer}`,
  ].filter((n) => n !== "");
  console.log(`example MCP server listening on ${running.url}${notes.length === 0 ? "" : ` (${notes.join("; ")})`}`);
  const shutdown = () =>
    void running
      .stop()
      .then(() => store?.close())
      .then(() => process.exit(0));
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}
