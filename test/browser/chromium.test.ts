// The HTTP client in a real headless Chromium: a page on one origin calls our server on another (CORS), through a cut and resumed stream.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpServer } from "../../generated/index.js";
import type { McpServer } from "../../runtime/server/mcp-server.js";
import {
  createStreamableHttpServer,
  type HttpServerTransport,
  type StreamableHttpServer,
} from "../../runtime/transports/http/server/server.js";
import { listenHttp, type ListeningHttpServer } from "../../runtime/transports/http/server/listen.js";
import { addCountTool } from "./count-tool.js";
import { bundleForBrowser, launchChromium, source } from "./helpers.js";

/** What the page's program returns from one client session. */
interface Outcome {
  progress: number[];
  text: string;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
}

/** The functions the page's program puts on its global object. */
interface PageApi {
  /** Connects to the MCP server at `url`, calls `count` with progress, closes the session. */
  callRemote(url: string): Promise<Outcome>;
  /** The same against our fetch handler running inside the page, with a log of the requests it was given. */
  callInPage(): Promise<Outcome & { requests: { method: string; lastEventId: string | null }[]; globals: string[] }>;
}

// The page bundles the typed Client and the transport from the web entry, and (for callInPage) the fetch
// handler with McpServer: the same sources an app's bundler would take.
const PROGRAM = `import { Client, createMcpServer } from ${source("generated/index.ts")};
import { StreamableHttpClientTransport, createStreamableHttpServer } from ${source("runtime/web.ts")};
import { addCountTool } from ${source("test/browser/count-tool.ts")};

// Resuming a cut stream with Last-Event-ID is the handshake era's (on 2026-07-28 a cut stream is a cancellation).
async function run(transport) {
  const client = await Client.connect(transport, { clientInfo: { name: "chromium", version: "1" }, era: "legacy" });
  const progress = [];
  const result = await client.callTool({ name: "count", arguments: { n: 4 } }, { onProgress: (p) => progress.push(p.progress) });
  const outcome = { progress, text: result.content[0].text, sessionId: transport.sessionId, protocolVersion: transport.protocolVersion };
  await client.peer.close();
  return outcome;
}

globalThis.callRemote = (url) => run(new StreamableHttpClientTransport({ url, reconnect: { initialDelayMs: 50 } }));

globalThis.callInPage = async () => {
  const server = createMcpServer({ serverInfo: { name: "in-page", version: "1" }, progressInterval: 0 });
  const transports = new Map();
  addCountTool(server, transports);
  // A Request made in a page cannot carry Host, and nothing here is reachable from outside.
  const mcp = createStreamableHttpServer({
    dnsRebindingProtection: false,
    retryMs: 20,
    onSession: async (t) => {
      transports.set(t.sessionId, t);
      await server.connect(t);
    },
  });
  const requests = [];
  const fetch = (input, init) => {
    const request = new Request(input, init);
    requests.push({ method: request.method, lastEventId: request.headers.get("last-event-id") });
    return mcp.fetch(request);
  };
  const outcome = await run(new StreamableHttpClientTransport({ url: "http://in-page.invalid/mcp", fetch }));
  await mcp.close();
  await server.close();
  const globals = ["Buffer", "process", "require", "setImmediate"].filter((name) => typeof globalThis[name] !== "undefined");
  return { ...outcome, requests, globals };
};
`;

/** One HTTP request as the MCP server saw it, with the status it answered. */
interface Seen {
  method: string;
  origin: string | undefined;
  lastEventId: string | undefined;
  status: number;
}

let site: ListeningHttpServer;
let api: ListeningHttpServer;
let mcp: StreamableHttpServer;
let server: McpServer;
let browser: BrowserContext;
let pageOrigin: string;
let mcpUrl: string;
const seen: Seen[] = [];

beforeAll(async () => {
  const { code } = await bundleForBrowser(PROGRAM);
  // The page's origin is http://localhost:<port>; the MCP server is http://127.0.0.1:<other port>: cross-origin.
  site = await listenHttp(
    (req, res) => {
      if (req.url === "/")
        return void res
          .writeHead(200, { "content-type": "text/html" })
          .end('<!doctype html><script type="module" src="/app.js"></script>');
      if (req.url === "/app.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(code);
      res.writeHead(404).end();
    },
    { host: "127.0.0.1", port: 0 },
  );
  pageOrigin = `http://localhost:${site.port}`;

  server = createMcpServer({ serverInfo: { name: "node", version: "1" }, progressInterval: 0 });
  const transports = new Map<string, HttpServerTransport>();
  addCountTool(server, transports);
  mcp = createStreamableHttpServer({
    path: "/mcp",
    retryMs: 50,
    cors: { allowedOrigins: [pageOrigin] },
    onSession: async (t) => {
      transports.set(t.sessionId!, t);
      await server.connect(t);
    },
  });
  const record = (req: IncomingMessage, res: ServerResponse) => {
    const lastEventId = req.headers["last-event-id"];
    const entry: Seen = {
      method: req.method ?? "",
      origin: req.headers.origin,
      lastEventId: typeof lastEventId === "string" ? lastEventId : undefined,
      status: 0,
    };
    seen.push(entry);
    // Taken as the head is written, so it is known before the browser sees the answer.
    const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => ServerResponse;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      entry.status = status;
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    mcp.nodeListener(req, res);
  };
  api = await listenHttp(record, { host: "127.0.0.1", port: 0 });
  mcpUrl = `${api.origin}/mcp`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await server?.close();
  await api?.close();
  await site?.close();
});

async function openPage(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => typeof (globalThis as unknown as Partial<PageApi>).callInPage === "function");
  return page;
}

/** Requests from `origin`, with the status each was answered (0: not yet). */
function from(origin: string): Seen[] {
  return seen.filter((s) => s.origin === origin);
}

describe("the Streamable HTTP client in headless Chromium", () => {
  it("initializes and calls a tool with progress from a page on another origin; the cut stream resumes with Last-Event-ID", async () => {
    const page = await openPage(pageOrigin);
    const outcome = await page.evaluate((url) => (globalThis as unknown as PageApi).callRemote(url), mcpUrl);
    await page.close();
    // Every progress notification arrived exactly once, across the cut, then the result.
    expect(outcome).toMatchObject({ progress: [1, 2, 3, 4], text: "counted to 4", protocolVersion: "2025-11-25" });
    expect(outcome.sessionId).toEqual(expect.any(String));

    const requests = from(pageOrigin);
    const preflights = requests.filter((s) => s.method === "OPTIONS");
    expect(preflights.length).toBeGreaterThan(0);
    expect(preflights.map((s) => s.status)).toEqual(preflights.map(() => 204));
    const resumes = requests.filter((s) => s.method === "GET" && s.lastEventId !== undefined);
    expect(resumes.length).toBeGreaterThan(0);
    expect(resumes[0]!.status).toBe(200);
    // initialize, the initialized notification, the tool call, and the DELETE of close(), each answered.
    expect(requests.filter((s) => s.method === "POST").map((s) => s.status)).toEqual([200, 202, 200]);
    expect(requests.filter((s) => s.method === "DELETE").map((s) => s.status)).toEqual([200]);
  });

  it("a page from an origin not on the CORS list is refused at the preflight, and nothing reaches a session", async () => {
    const other = `http://127.0.0.1:${site.port}`;
    const page = await openPage(other);
    const error = await page.evaluate(
      (url) =>
        (globalThis as unknown as PageApi).callRemote(url).then(
          () => "connected",
          (e: unknown) => String(e),
        ),
      mcpUrl,
    );
    await page.close();
    expect(error).toMatch(/Failed to fetch/);
    expect(from(other).map((s) => [s.method, s.status])).toEqual([["OPTIONS", 403]]);
  });

  it("our fetch handler serves the same call from inside the page, resuming the cut stream, with no Node globals", async () => {
    const page = await openPage(pageOrigin);
    const outcome = await page.evaluate(() => (globalThis as unknown as PageApi).callInPage());
    await page.close();
    expect(outcome.globals).toEqual([]);
    expect(outcome).toMatchObject({ progress: [1, 2, 3, 4], text: "counted to 4", protocolVersion: "2025-11-25" });
    expect(outcome.requests.filter((r) => r.method === "GET" && r.lastEventId !== null).length).toBeGreaterThan(0);
  });
});
