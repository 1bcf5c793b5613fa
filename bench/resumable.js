// Benchmark: resumable requests (SEP-975): memory per parked request, replay of 10,000 queued messages, overhead over a plain call (in memory, stdio, HTTP).
// Run after `npm run build`: `node bench/resumable.js`. Env: PARKED (default 2000), REPLAY (default 10000), CALLS (default 20000),
// WIRE_CALLS (calls per stdio/HTTP round, default 3000), BENCH_ONLY=memory to skip the stdio and HTTP rows.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const {
  ClientSession,
  ServerSession,
  InMemoryLink,
  ResumableRequests,
  StdioClientTransport,
  StdioServerTransport,
  StreamableHttpClientTransport,
  createStreamableHttpServer,
  clientToServer,
  serverToClient,
  isMessage,
} = await import("mcpgen");

const self = fileURLToPath(import.meta.url);
if (process.argv[2] === "--serve-stdio") {
  // Child process role: one server session on stdio; tools/call is resumable for clients that advertise it.
  const progress = Number(process.argv[3] ?? 0);
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50 });
  await serverSession(manager, progressHandler(progress)).connect(new StdioServerTransport());
  await new Promise(() => undefined);
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
function heap() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const PARKED = Number(process.env.PARKED ?? 2000);
const REPLAY = Number(process.env.REPLAY ?? 10_000);
const CALLS = Number(process.env.CALLS ?? 20_000);

function progressHandler(progress) {
  return async (params, ctx) => {
    for (let i = 1; i <= progress; i++) await ctx.progress(i, progress);
    return { content: [{ type: "text", text: "ok" }] };
  };
}

function serverSession(manager, handler) {
  const session = new ServerSession({
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    serverInfo: { name: "bench", version: "1" },
    capabilities: { tools: {} },
    progressInterval: 0,
  });
  manager.install(session);
  session.onRequest("tools/call", handler);
  return session;
}

async function connect(manager, handler, clientOptions) {
  const link = new InMemoryLink();
  const serve = async (transport) => serverSession(manager, handler).connect(transport);
  await serve(link.server);
  const client = new ClientSession({
    inbound: serverToClient,
    outbound: clientToServer,
    isMessage,
    clientInfo: { name: "bench-client", version: "1" },
    ...clientOptions,
  });
  await client.connect(link.client);
  return { client, link, serve };
}

// ---- 1. memory held per parked resumable request -------------------------------------------------------------
async function parkedMemory() {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", maxWait: 600, maxPerSession: PARKED });
  let release;
  const gate = new Promise((r) => (release = r));
  const { client, link } = await connect(manager, async () => {
    await gate;
    return { content: [] };
  }, { resumable: true });
  client.onerror = () => undefined;
  const before = heap();
  const calls = [];
  for (let i = 0; i < PARKED; i++) calls.push(client.request("tools/call", { name: "wait", arguments: { i } }).catch(() => undefined));
  while (manager.size < PARKED) await new Promise((r) => setImmediate(r));
  link.cut(); // no reconnect: the client gives up, the server parks every request until maxWait
  await Promise.all(calls);
  const after = heap();
  const perRequest = (after - before) / PARKED;
  release();
  manager.close();
  return perRequest;
}

// ---- 2. replay of REPLAY queued messages on resume ---------------------------------------------------------------
async function replayTime() {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", maxQueuedBytes: 64 * 1024 * 1024 });
  let cutNow;
  const cut = new Promise((r) => (cutNow = r));
  let allowReconnect;
  const reconnectAllowed = new Promise((r) => (allowReconnect = r));
  let resumeStarted = 0;
  const handler = async (params, ctx) => {
    await cut;
    for (let i = 1; i <= REPLAY; i++) await ctx.progress(i, REPLAY);
    return { content: [{ type: "text", text: "done" }] };
  };
  let rig;
  rig = await connect(manager, handler, {
    resumable: true,
    reconnect: async () => {
      await reconnectAllowed;
      resumeStarted = performance.now();
      const [c, s] = rig.link.reconnect();
      await rig.serve(s);
      return c;
    },
  });
  let received = 0;
  const call = rig.client.request("tools/call", { name: "flood" }, { onProgress: () => received++, timeout: 600_000 });
  while (manager.size < 1) await new Promise((r) => setImmediate(r));
  // Cut, let the handler queue everything (progress and result) while detached, then let the client come back.
  rig.link.cut();
  cutNow();
  while (queued(manager) < REPLAY + 1) await new Promise((r) => setImmediate(r));
  allowReconnect();
  await call;
  const ms = performance.now() - resumeStarted;
  if (received !== REPLAY) throw new Error(`expected ${REPLAY} progress values, got ${received}`);
  await rig.client.close();
  manager.close();
  return { ms, replayed: manager.stats.replayed };
}

/** Messages queued for the one request held (read through the memory store's readAfter). */
function queued(manager) {
  const keys = [...manager.store.entries.keys()];
  return keys.length === 0 ? 0 : manager.store.readAfter(keys[0], 0).length;
}

// ---- 3. overhead of a resumable call over a plain one on the same transport ---------------------------------------
async function callRate(resumable, progress) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50 });
  const handler = async (params, ctx) => {
    for (let i = 1; i <= progress; i++) await ctx.progress(i, progress);
    return { content: [{ type: "text", text: "ok" }] };
  };
  const { client } = await connect(manager, handler, { resumable });
  const options = progress > 0 ? { onProgress: () => undefined } : undefined;
  for (let i = 0; i < 500; i++) await client.request("tools/call", { name: "echo" }, options);
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await client.request("tools/call", { name: "echo" }, options);
  const ms = performance.now() - start;
  if (resumable && manager.stats.made < CALLS) throw new Error(`only ${manager.stats.made} of ${CALLS} calls were resumable`);
  await client.close();
  manager.close();
  return (CALLS / ms) * 1000;
}

// ---- the same over real transports: stdio (server in a child process) and Streamable HTTP (loopback) ---------------
const WIRE_CALLS = Number(process.env.WIRE_CALLS ?? 3000);

async function timedCalls(client, progress, calls) {
  const options = progress > 0 ? { onProgress: () => undefined } : undefined;
  for (let i = 0; i < 300; i++) await client.request("tools/call", { name: "echo" }, options);
  const start = performance.now();
  for (let i = 0; i < calls; i++) await client.request("tools/call", { name: "echo" }, options);
  return (calls / (performance.now() - start)) * 1000;
}

function wireClient(resumable) {
  return new ClientSession({ inbound: serverToClient, outbound: clientToServer, isMessage, clientInfo: { name: "bench-client", version: "1" }, resumable });
}

async function stdioRate(resumable, progress) {
  const client = wireClient(resumable);
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [self, "--serve-stdio", String(progress)] }));
  const rate = await timedCalls(client, progress, WIRE_CALLS);
  await client.close();
  return rate;
}

async function httpRate(resumable, progress) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50 });
  const mcp = createStreamableHttpServer({ path: "/mcp", onSession: (t) => serverSession(manager, progressHandler(progress)).connect(t) });
  const http = createServer(mcp.nodeListener);
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  const client = wireClient(resumable);
  await client.connect(new StreamableHttpClientTransport({ url: `http://127.0.0.1:${http.address().port}/mcp`, standaloneStream: "manual" }));
  const rate = await timedCalls(client, progress, WIRE_CALLS);
  if (resumable && manager.stats.made < WIRE_CALLS) throw new Error(`only ${manager.stats.made} of ${WIRE_CALLS} HTTP calls were resumable`);
  await client.close();
  await mcp.close();
  manager.close();
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
  return rate;
}

/** Alternates plain and resumable rounds and keeps each one's best, so JIT warm-up favours neither. */
async function compare(transport, rate) {
  const rows = [];
  for (const progress of [0, 5]) {
    let plain = 0;
    let resumable = 0;
    for (let round = 0; round < 3; round++) {
      plain = Math.max(plain, await rate(false, progress));
      resumable = Math.max(resumable, await rate(true, progress));
    }
    rows.push({ transport, progress, plain, resumable, ratio: plain / resumable });
  }
  return rows;
}

const perRequest = await parkedMemory();
const replay = await replayTime();
const rows = await compare("in-memory", callRate);
if (process.env.BENCH_ONLY !== "memory") {
  rows.push(...(await compare("stdio", stdioRate)));
  rows.push(...(await compare("http", httpRate)));
}

console.log(`resumable requests on ${process.version}`);
console.log(`  memory held per parked resumable request: ${(perRequest / 1024).toFixed(2)} KB (target < 4 KB plus queued payload; ${PARKED} parked)`);
console.log(`  resume replaying ${REPLAY} queued messages: ${replay.ms.toFixed(1)} ms from reconnect to result (target < 100 ms)`);
console.log("  overhead of a resumable tools/call over a plain one on the same transport (target < 1.3x):");
for (const r of rows) {
  const us = (rate) => (1e6 / rate).toFixed(1).padStart(6);
  console.log(
    `    ${r.transport.padEnd(9)} ${r.progress} progress: plain ${r.plain.toFixed(0).padStart(6)} calls/s (${us(r.plain)} us), resumable ${r.resumable.toFixed(0).padStart(6)} calls/s (${us(r.resumable)} us), overhead ${r.ratio.toFixed(2)}x`,
  );
}
