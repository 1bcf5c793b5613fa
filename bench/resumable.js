// Benchmark: resumable requests (SEP-975): memory per parked request, replay of 10,000 queued messages, overhead over a plain call (in memory, stdio, HTTP).
// The policy selects every tools/call. With the default (eager) policy every selected call is made resumable as it starts;
// with deferPolicy only once it outlives the macrotask it arrived in or sends something before its response, so each
// overhead row also says what share of the timed calls became resumable.
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
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50, deferPolicy: process.argv[5] === "defer" });
  await serverSession(manager, progressHandler(progress, process.argv[4] === "tick")).connect(new StdioServerTransport());
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

/** `tick`: the handler awaits one setImmediate before answering, so the call outlives its first macrotask. */
function progressHandler(progress, tick) {
  return async (params, ctx) => {
    for (let i = 1; i <= progress; i++) await ctx.progress(i, progress);
    if (tick) await new Promise((r) => setImmediate(r));
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
async function callRate(resumable, progress, tick, deferPolicy) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50, deferPolicy });
  const { client } = await connect(manager, progressHandler(progress, tick), { resumable });
  const options = progress > 0 ? { onProgress: () => undefined } : undefined;
  for (let i = 0; i < 500; i++) await client.request("tools/call", { name: "echo" }, options);
  const before = { ...manager.stats };
  const policies = client.resumer?.stats.policies ?? 0;
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await client.request("tools/call", { name: "echo" }, options);
  const ms = performance.now() - start;
  // The policy must have selected every timed call, or the row would not measure what it says.
  if (resumable && manager.stats.selected - before.selected !== CALLS) throw new Error(`the policy selected ${manager.stats.selected - before.selected} of ${CALLS} calls`);
  const made = manager.stats.made - before.made;
  if (resumable && (client.resumer?.stats.policies ?? 0) - policies !== made) throw new Error("policies received and requests made resumable differ");
  await client.close();
  manager.close();
  return { rate: (CALLS / ms) * 1000, share: made / CALLS };
}

// ---- the same over real transports: stdio (server in a child process) and Streamable HTTP (loopback) ---------------
const WIRE_CALLS = Number(process.env.WIRE_CALLS ?? 3000);

/** Calls per second, and the share of the timed calls the server made resumable (policies the client received). */
async function timedCalls(client, progress, calls) {
  const options = progress > 0 ? { onProgress: () => undefined } : undefined;
  for (let i = 0; i < 300; i++) await client.request("tools/call", { name: "echo" }, options);
  const policies = client.resumer?.stats.policies ?? 0;
  const start = performance.now();
  for (let i = 0; i < calls; i++) await client.request("tools/call", { name: "echo" }, options);
  const rate = (calls / (performance.now() - start)) * 1000;
  return { rate, share: ((client.resumer?.stats.policies ?? 0) - policies) / calls };
}

function wireClient(resumable) {
  return new ClientSession({ inbound: serverToClient, outbound: clientToServer, isMessage, clientInfo: { name: "bench-client", version: "1" }, resumable });
}

async function stdioRate(resumable, progress, tick, deferPolicy) {
  const client = wireClient(resumable);
  const args = [self, "--serve-stdio", String(progress), tick ? "tick" : "instant", deferPolicy ? "defer" : "eager"];
  await client.connect(new StdioClientTransport({ command: process.execPath, args }));
  const result = await timedCalls(client, progress, WIRE_CALLS);
  await client.close();
  return result;
}

async function httpRate(resumable, progress, tick, deferPolicy) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50, deferPolicy });
  const mcp = createStreamableHttpServer({ path: "/mcp", onSession: (t) => serverSession(manager, progressHandler(progress, tick)).connect(t) });
  const http = createServer(mcp.nodeListener);
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  const client = wireClient(resumable);
  await client.connect(new StreamableHttpClientTransport({ url: `http://127.0.0.1:${http.address().port}/mcp`, standaloneStream: "manual" }));
  const result = await timedCalls(client, progress, WIRE_CALLS);
  if (resumable && manager.stats.selected < WIRE_CALLS) throw new Error(`the policy selected only ${manager.stats.selected} of ${WIRE_CALLS} HTTP calls`);
  await client.close();
  await mcp.close();
  manager.close();
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
  return result;
}

/** Alternates plain and resumable rounds and keeps each one's best, so JIT warm-up favours neither. */
async function compare(transport, rate) {
  const rows = [];
  for (const deferPolicy of [false, true]) {
    for (const [progress, tick] of [[0, false], [5, false], [0, true], [5, true]]) {
      let plain = 0;
      let resumable = 0;
      let share = 1;
      for (let round = 0; round < 3; round++) {
        plain = Math.max(plain, (await rate(false, progress, tick, deferPolicy)).rate);
        const r = await rate(true, progress, tick, deferPolicy);
        resumable = Math.max(resumable, r.rate);
        share = Math.min(share, r.share);
      }
      rows.push({ transport, deferPolicy, progress, tick, plain, resumable, share, ratio: plain / resumable });
    }
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
console.log("  overhead of a policy-selected tools/call over a plain one on the same transport (target < 1.3x);");
console.log("  'made resumable': share of the timed selected calls that got a policy (deferred: a call answered in its first tick goes out plain):");
for (const r of rows) {
  const us = (rate) => (1e6 / rate).toFixed(1).padStart(6);
  const kind = `${r.deferPolicy ? "deferred" : "eager   "} ${r.progress} progress, ${r.tick ? "1 tick " : "instant"}`;
  console.log(
    `    ${r.transport.padEnd(9)} ${kind}: plain ${r.plain.toFixed(0).padStart(6)} calls/s (${us(r.plain)} us), selected ${r.resumable.toFixed(0).padStart(6)} calls/s (${us(r.resumable)} us), overhead ${r.ratio.toFixed(2)}x, made resumable ${(r.share * 100).toFixed(0).padStart(3)}%`,
  );
}
