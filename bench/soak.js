// Soak benchmark: many sequential calls in one long session (HTTP and stdio, plain and resumable); prints the server's heap after GC, store entry counts and listener counts before and after.
//
//   npm run build && node bench/soak.js
//   HTTP_CALLS=100000 STDIO_CALLS=20000 ONLY=http|stdio   knobs (defaults shown)
//
// The server runs in a child process started with --expose-gc, so the heap it reports is the server's alone. It
// serves `echo` (plain) and `echo_resumable` (made resumable by the policy for clients that advertise
// resumableRequests) plus `soak_stats`, which collects garbage and reports the server's own figures. The client
// makes every call in one session, one after another; "after" is read once the store's retention windows have
// passed (SETTLE_MS), since a store may keep a finished stream or a delivered response for a short while on purpose.
// Targets: server heap growth under 2 MB per 100,000 calls; event store and resumable store empty after.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);
const HTTP_CALLS = Number(process.env.HTTP_CALLS ?? 100_000);
const STDIO_CALLS = Number(process.env.STDIO_CALLS ?? 20_000);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 12_000);
const ONLY = process.env.ONLY;
const mcpgen = await import("mcpgen");

// ---- server (child process) ------------------------------------------------------------------------------

function listenerTotal(emitter) {
  return emitter.eventNames().reduce((sum, name) => sum + emitter.listenerCount(name), 0);
}

function makeServer(figures) {
  const { createMcpServer, ResumableRequests } = mcpgen;
  // Delivered resumable responses are kept no longer than the settle wait, so "after" can read an empty store.
  const resumable = new ResumableRequests({
    policy: (method, params) => method === "tools/call" && params?.name === "echo_resumable",
    retainDeliveredMs: 2000,
  });
  const server = createMcpServer({
    serverInfo: { name: "soak", version: "1" },
    progressInterval: 0,
    onsession: (session) => resumable.install(session),
  });
  const echo = { inputSchema: { type: "object", properties: { i: { type: "number" } }, required: ["i"] } };
  server.tool("echo", echo, ({ i }) => String(i));
  server.tool("echo_resumable", echo, ({ i }) => String(i));
  server.tool("soak_stats", { inputSchema: { type: "object" } }, () => {
    globalThis.gc();
    globalThis.gc();
    return JSON.stringify({
      heapUsed: process.memoryUsage().heapUsed,
      resumableStore: resumable.store.count?.() ?? null,
      ...figures(),
    });
  });
  return { server, resumable };
}

async function serveHttp() {
  const { createStreamableHttpServer, InMemoryEventStore } = mcpgen;
  const eventStore = new InMemoryEventStore();
  let http;
  const { server, resumable } = makeServer(() => ({
    eventStore: typeof eventStore.stats === "function" ? eventStore.stats() : null,
    sessions: mcp.sessions.size,
    httpServerListeners: listenerTotal(http),
  }));
  const mcp = createStreamableHttpServer({
    ...resumable.transportOptions,
    path: "/mcp",
    eventStore,
    onSession: (t) => server.connect(t).then(() => undefined),
  });
  http = createServer(mcp.nodeListener);
  http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
}

async function serveStdio() {
  const { StdioServerTransport } = mcpgen;
  const { server } = makeServer(() => ({
    stdinListeners: listenerTotal(process.stdin),
    stdoutListeners: listenerTotal(process.stdout),
  }));
  await server.connect(new StdioServerTransport());
}

// ---- client ---------------------------------------------------------------------------------------------

function startHttpChild(children) {
  const child = spawn(process.execPath, ["--expose-gc", self, "--serve", "http"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m)
        resolve({
          url: `http://127.0.0.1:${m[1]}/mcp`,
          stop: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
        });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function stats(client) {
  const result = await client.callTool({ name: "soak_stats", arguments: {} });
  return JSON.parse(result.content[0].text);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function soak(label, client, tool, calls) {
  for (let i = 0; i < 200; i++) await client.callTool({ name: tool, arguments: { i } }); // warm up
  await sleep(SETTLE_MS);
  const before = await stats(client);
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name: tool, arguments: { i } });
    if (result.content?.[0]?.text !== String(i)) throw new Error(`wrong answer at ${i}: ${JSON.stringify(result)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  const during = await stats(client);
  await sleep(SETTLE_MS);
  const after = await stats(client);
  const growthMb = (after.heapUsed - before.heapUsed) / 1024 / 1024;
  const per100k = (growthMb * 100_000) / calls;
  console.log(
    `${label.padEnd(22)} ${String(calls).padStart(7)} calls in ${seconds.toFixed(1)} s; server heap after GC ${(before.heapUsed / 1048576).toFixed(2)} -> ` +
      `${(after.heapUsed / 1048576).toFixed(2)} MB (${growthMb >= 0 ? "+" : ""}${growthMb.toFixed(2)} MB, ${per100k.toFixed(2)} MB per 100k; target < 2)`,
  );
  const { heapUsed: _b, ...restBefore } = before;
  const { heapUsed: _d, ...restDuring } = during;
  const { heapUsed: _a, ...restAfter } = after;
  console.log(`${"".padEnd(22)} before ${JSON.stringify(restBefore)}`);
  console.log(`${"".padEnd(22)} right after the last call ${JSON.stringify(restDuring)}`);
  console.log(`${"".padEnd(22)} after ${SETTLE_MS / 1000} s ${JSON.stringify(restAfter)}`);
}

async function main(children) {
  const { Client, StreamableHttpClientTransport, StdioClientTransport } = mcpgen;
  console.log(`node ${process.version}; HTTP_CALLS=${HTTP_CALLS} STDIO_CALLS=${STDIO_CALLS} SETTLE_MS=${SETTLE_MS}`);
  if (ONLY === undefined || ONLY === "http") {
    for (const [label, tool, resumable] of [
      ["http plain", "echo", false],
      ["http resumable", "echo_resumable", true],
    ]) {
      const server = await startHttpChild(children);
      const client = await Client.connect(
        new StreamableHttpClientTransport({ url: server.url, standaloneStream: "manual" }),
        {
          clientInfo: { name: "soak", version: "1" },
          resumable,
        },
      );
      await soak(label, client, tool, HTTP_CALLS);
      await client.peer.close();
      await server.stop();
    }
  }
  if (ONLY === undefined || ONLY === "stdio") {
    for (const [label, tool, resumable] of [
      ["stdio plain", "echo", false],
      ["stdio resumable", "echo_resumable", true],
    ]) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ["--expose-gc", self, "--serve", "stdio"],
      });
      const client = await Client.connect(transport, { clientInfo: { name: "soak", version: "1" }, resumable });
      await soak(label, client, tool, STDIO_CALLS);
      await client.peer.close();
    }
  }
}

if (process.argv[2] === "--serve") {
  if (process.argv[3] === "http") await serveHttp();
  else await serveStdio();
  process.on("SIGTERM", () => process.exit(0));
} else {
  const children = new Set();
  process.on("exit", () => children.forEach((c) => c.kill("SIGKILL")));
  await main(children);
}
