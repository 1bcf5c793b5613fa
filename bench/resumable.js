// Benchmark: resumable requests (SEP-975): memory per parked request, replay of 10,000 queued messages, overhead over a plain call (in memory, stdio, HTTP).
// The policy selects every tools/call. With the default (eager) policy every selected call is made resumable as it starts;
// with deferPolicy only once it outlives the macrotask it arrived in or sends something before its response, so each
// overhead row also says what share of the timed calls became resumable.
// Run after `npm run build`: `node bench/resumable.js`. Env: PARKED (default 2000), REPLAY (default 10000), CALLS (calls per
// in-memory round, default 10000), WIRE_CALLS (per stdio/HTTP round, default 2000), ROUNDS (default 7), BENCH_ONLY=memory|stdio|http
// for the overhead rows of one transport.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { heap } from "./lib/heap.js";

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
  resumableClient,
  resumerOf,
} = await import("mcpgen");

const self = fileURLToPath(import.meta.url);
if (process.argv[2] === "--serve-stdio") {
  // Child process role: one server session on stdio; tools/call is resumable for clients that advertise it.
  const progress = Number(process.argv[3] ?? 0);
  const manager = new ResumableRequests({
    policy: (m) => m === "tools/call",
    retainDeliveredMs: 50,
    deferPolicy: process.argv[5] === "defer",
  });
  await serverSession(manager, progressHandler(progress, process.argv[4] === "tick")).connect(
    new StdioServerTransport(),
  );
  await new Promise(() => undefined);
}

const PARKED = Number(process.env.PARKED ?? 2000);
const REPLAY = Number(process.env.REPLAY ?? 10_000);

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
    // The parked-memory row holds PARKED calls open in one session, far above the default cap.
    maxInFlightRequests: 0,
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
  const { client, link } = await connect(
    manager,
    async () => {
      await gate;
      return { content: [] };
    },
    { extensions: [resumableClient()] },
  );
  client.onerror = () => undefined;
  const before = heap();
  const calls = [];
  for (let i = 0; i < PARKED; i++)
    calls.push(client.request("tools/call", { name: "wait", arguments: { i } }).catch(() => undefined));
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
    extensions: [resumableClient()],
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
  while (!queuedAll(manager)) await new Promise((r) => setImmediate(r));
  allowReconnect();
  await call;
  const ms = performance.now() - resumeStarted;
  if (received !== REPLAY) throw new Error(`expected ${REPLAY} progress values, got ${received}`);
  await rig.client.close();
  manager.close();
  return { ms, replayed: manager.stats.replayed };
}

/** Whether the one request held has queued every progress value and finished (its final response is kept apart from the queue). */
function queuedAll(manager) {
  const keys = [...manager.store.entries.keys()];
  if (keys.length === 0) return false;
  return manager.store.readAfter(keys[0], 0).length >= REPLAY && manager.store.get(keys[0])?.status === "completed";
}

// ---- 3. overhead of a resumable call over a plain one on the same transport ---------------------------------------
// Each row builds two rigs side by side (a plain client and one that advertises resumableRequests, each with its own
// server), warms both, then alternates timed rounds between them. Reported: each one's best round, and the median of
// the per-round ratios (rounds next to each other in time meet the same load from elsewhere on the machine).
const CALLS = Number(process.env.CALLS ?? 10_000);
const WIRE_CALLS = Number(process.env.WIRE_CALLS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

/** What every rig offers: `round(n)` makes n sequential calls and returns microseconds per call. */
function rigOf(client, progress, counters, close) {
  const options = progress > 0 ? { onProgress: () => undefined } : undefined;
  return {
    async round(n) {
      const start = performance.now();
      for (let i = 0; i < n; i++) await client.request("tools/call", { name: "echo" }, options);
      return ((performance.now() - start) * 1000) / n;
    },
    /** Policies the client received and requests the policy selected (server side, when in this process). */
    counters: () => ({
      policies: resumerOf(client)?.stats.policies ?? 0,
      selected: counters()?.selected,
      made: counters()?.made,
    }),
    close,
  };
}

async function memoryRig(resumable, progress, tick, deferPolicy) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50, deferPolicy });
  const { client } = await connect(manager, progressHandler(progress, tick), {
    extensions: resumable ? [resumableClient()] : [],
  });
  return rigOf(
    client,
    progress,
    () => manager.stats,
    async () => {
      await client.close();
      manager.close();
    },
  );
}

function wireClient(resumable) {
  return new ClientSession({
    inbound: serverToClient,
    outbound: clientToServer,
    isMessage,
    clientInfo: { name: "bench-client", version: "1" },
    extensions: resumable ? [resumableClient()] : [],
  });
}

async function stdioRig(resumable, progress, tick, deferPolicy) {
  const client = wireClient(resumable);
  const args = [self, "--serve-stdio", String(progress), tick ? "tick" : "instant", deferPolicy ? "defer" : "eager"];
  await client.connect(new StdioClientTransport({ command: process.execPath, args }));
  return rigOf(
    client,
    progress,
    () => undefined,
    () => client.close(),
  );
}

async function httpRig(resumable, progress, tick, deferPolicy) {
  const manager = new ResumableRequests({ policy: (m) => m === "tools/call", retainDeliveredMs: 50, deferPolicy });
  const mcp = createStreamableHttpServer({
    ...manager.transportOptions,
    path: "/mcp",
    onSession: (t) => serverSession(manager, progressHandler(progress, tick)).connect(t),
  });
  const http = createServer(mcp.nodeListener);
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  const client = wireClient(resumable);
  await client.connect(
    new StreamableHttpClientTransport({
      url: `http://127.0.0.1:${http.address().port}/mcp`,
      standaloneStream: "manual",
    }),
  );
  return rigOf(
    client,
    progress,
    () => manager.stats,
    async () => {
      await client.close();
      await mcp.close();
      manager.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  );
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function compare(transport, makeRig, calls) {
  const rows = [];
  for (const deferPolicy of [false, true]) {
    for (const [progress, tick] of [
      [0, false],
      [5, false],
      [0, true],
      [5, true],
    ]) {
      const plain = await makeRig(false, progress, tick, deferPolicy);
      const resumable = await makeRig(true, progress, tick, deferPolicy);
      // Warm-up: fresh servers (child processes for stdio) must not have their JIT warm-up measured.
      await plain.round(2000);
      await resumable.round(2000);
      const before = resumable.counters();
      const ratios = [];
      let plainBest = Infinity;
      let resumableBest = Infinity;
      for (let round = 0; round < ROUNDS; round++) {
        const p = await plain.round(calls);
        const r = await resumable.round(calls);
        ratios.push(r / p);
        plainBest = Math.min(plainBest, p);
        resumableBest = Math.min(resumableBest, r);
      }
      const after = resumable.counters();
      const timed = ROUNDS * calls;
      // The policy must have selected every timed call, or the row would not measure what it says.
      if (after.selected !== undefined && after.selected - before.selected !== timed)
        throw new Error(`the policy selected ${after.selected - before.selected} of ${timed} calls`);
      const share = (after.policies - before.policies) / timed;
      if (after.made !== undefined && after.made - before.made !== after.policies - before.policies)
        throw new Error("policies received and requests made resumable differ");
      await plain.close();
      await resumable.close();
      rows.push({
        transport,
        deferPolicy,
        progress,
        tick,
        plainUs: plainBest,
        resumableUs: resumableBest,
        share,
        ratio: median(ratios),
      });
    }
  }
  return rows;
}

const perRequest = await parkedMemory();
// A single resume is one sample taken early in the process; the median of a few is steadier.
const replays = [];
for (let i = 0; i < 3; i++) replays.push((await replayTime()).ms);
replays.sort((a, b) => a - b);
const only = process.env.BENCH_ONLY; // memory | stdio | http: the overhead rows of one transport
const rows = [];
if (only === undefined || only === "memory") rows.push(...(await compare("in-memory", memoryRig, CALLS)));
if (only === undefined || only === "stdio") rows.push(...(await compare("stdio", stdioRig, WIRE_CALLS)));
if (only === undefined || only === "http") rows.push(...(await compare("http", httpRig, WIRE_CALLS)));

console.log(`resumable requests on ${process.version}`);
console.log(
  `  memory held per parked resumable request: ${(perRequest / 1024).toFixed(2)} KB (target < 4 KB plus queued payload; ${PARKED} parked)`,
);
console.log(
  `  resume replaying ${REPLAY} queued messages: ${replays[1].toFixed(1)} ms from reconnect to result, median of 3 (${replays[0].toFixed(1)}-${replays[2].toFixed(1)}; target < 100 ms)`,
);
console.log(
  `  overhead of a policy-selected tools/call over a plain one on the same transport (target < 1.3x): median of ${ROUNDS} paired rounds;`,
);
console.log(
  "  'made resumable': share of the timed selected calls that got a policy (deferred: a call answered in its first tick goes out plain):",
);
for (const r of rows) {
  const us = (value) => value.toFixed(1).padStart(6);
  const kind = `${r.deferPolicy ? "deferred" : "eager   "} ${r.progress} progress, ${r.tick ? "1 tick " : "instant"}`;
  console.log(
    `    ${r.transport.padEnd(9)} ${kind}: plain ${us(r.plainUs)} us, selected ${us(r.resumableUs)} us (best rounds), overhead ${r.ratio.toFixed(2)}x, made resumable ${(r.share * 100).toFixed(0).padStart(3)}%`,
  );
}
