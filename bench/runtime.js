// Benchmark: mcpgen's runtime side by side with the official SDK: callTool round trips (in memory, stdio) and the receive path.
// Run after `npm run build`: `node bench/runtime.js`. Env: SECONDS_PER_CASE (default 4), RECEIVE_ITERATIONS (default 1e6).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);
const role = process.argv[2];

// ---- child process roles: a stdio server with one `add` tool ------------------------------------------------

async function serveOurs() {
  const { McpServer, StdioServerTransport, clientToServer, serverToClient, isMessage } = await import("mcpgen");
  const server = new McpServer({
    serverInfo: { name: "bench-ours", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
  });
  addTool.ours(server);
  // argv[3]: busyPollMicros for the server's transport, when the parent measures with polling off.
  const micros = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  await server.connect(new StdioServerTransport({ busyPollMicros: micros }));
}

async function serveTheirs() {
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const server = await theirServer();
  await server.connect(new StdioServerTransport());
}

const addSchema = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};

const addTool = {
  ours(server) {
    server.tool("add", { description: "Adds", inputSchema: addSchema }, ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
    }));
  },
};

async function theirServer() {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { z } = await import("zod");
  const server = new McpServer({ name: "bench-theirs", version: "1" });
  server.registerTool(
    "add",
    { description: "Adds", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
    }),
  );
  return server;
}

if (role === "--serve-ours") await serveOurs();
else if (role === "--serve-theirs") await serveTheirs();
else await main();

// ---- measurement -----------------------------------------------------------------------------------------

/** Sequential calls for `seconds`, in batches; returns calls per second. */
async function rate(call, seconds) {
  let n = 0;
  const start = process.hrtime.bigint();
  const limit = BigInt(Math.round(seconds * 1e9));
  let elapsed = 0n;
  while (elapsed < limit) {
    for (let i = 0; i < 250; i++) await call(n + i);
    n += 250;
    elapsed = process.hrtime.bigint() - start;
  }
  return n / (Number(elapsed) / 1e9);
}

/**
 * Both sides warm up, then run in alternating rounds so that load from elsewhere on the machine hits
 * them alike; each side's best round is reported.
 */
async function sideBySide(kind, ours, theirs, seconds) {
  for (let i = 0; i < 3000; i++) {
    await ours(i);
    await theirs(i);
  }
  const rounds = 5;
  let best = { ours: 0, theirs: 0 };
  for (let r = 0; r < rounds; r++) {
    best.ours = Math.max(best.ours, await rate(ours, seconds / rounds));
    best.theirs = Math.max(best.theirs, await rate(theirs, seconds / rounds));
  }
  const show = (who, value) =>
    console.log(
      `  ${`${who} ${kind} callTool`.padEnd(44)} ${Math.round(value).toLocaleString("en-US").padStart(10)} calls/s`,
    );
  show("mcpgen  ", best.ours);
  show("official", best.theirs);
  return { oursRate: best.ours, theirsRate: best.theirs };
}

function check(result, i) {
  const expected = String(i + 1);
  if (result.content[0].text !== expected) throw new Error(`wrong result ${JSON.stringify(result)} for ${i}`);
}

async function inMemory(seconds) {
  const { Client, McpServer, createInMemoryPair, clientToServer, serverToClient, isMessage } = await import("mcpgen");
  const server = new McpServer({
    serverInfo: { name: "bench-ours", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
  });
  addTool.ours(server);
  const [c, s] = createInMemoryPair();
  await server.connect(s);
  const ours = await Client.connect(c, { clientInfo: { name: "bench", version: "1" } });

  const { Client: SdkClient } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
  const sdkServer = await theirServer();
  const [tc, ts] = InMemoryTransport.createLinkedPair();
  await sdkServer.connect(ts);
  const theirs = new SdkClient({ name: "bench", version: "1" });
  await theirs.connect(tc);

  return callBothAndClose("in-memory", ours, theirs, seconds);
}

/** `busyPollMicros` undefined: the transports' default (adaptive polling after a send); 0: polling off on both ends. */
async function stdio(seconds, busyPollMicros, label = "stdio") {
  const { Client, StdioClientTransport } = await import("mcpgen");
  const args = busyPollMicros === undefined ? [self, "--serve-ours"] : [self, "--serve-ours", String(busyPollMicros)];
  const ours = await Client.connect(new StdioClientTransport({ command: process.execPath, args, busyPollMicros }), {
    clientInfo: { name: "bench", version: "1" },
  });
  const { Client: SdkClient } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport: SdkStdio } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const theirs = new SdkClient({ name: "bench", version: "1" });
  await theirs.connect(new SdkStdio({ command: process.execPath, args: [self, "--serve-theirs"] }));

  return callBothAndClose(label, ours, theirs, seconds);
}

/** Sequential `add` calls on both clients, side by side; then both are closed. */
async function callBothAndClose(label, ours, theirs, seconds) {
  const result = await sideBySide(
    label,
    async (i) => check(await ours.callTool({ name: "add", arguments: { a: i, b: 1 } }), i),
    async (i) => check(await theirs.callTool({ name: "add", arguments: { a: i, b: 1 } }), i),
    seconds,
  );
  await ours.peer.close();
  await theirs.close();
  return result;
}

function receivePath(iterations) {
  // What a server receives for a typical tool call, as one line off the wire.
  const line = JSON.stringify({
    jsonrpc: "2.0",
    id: 12345,
    method: "tools/call",
    params: {
      name: "search_documents",
      arguments: {
        query: "quarterly revenue by region",
        limit: 20,
        filters: { year: 2025, tags: ["finance", "emea"] },
      },
      _meta: { progressToken: "tok-12345" },
    },
  });
  return import("mcpgen").then(({ clientToServer, isMessage }) => {
    const table = new Map(Object.entries(clientToServer));
    let sink = 0;
    const parseOnly = () => {
      const m = JSON.parse(line);
      sink += m.id;
    };
    const full = () => {
      const m = JSON.parse(line);
      if (!isMessage(m)) throw new Error("envelope");
      const spec = table.get(m.method);
      if (spec === undefined || !spec.isParams(m.params)) throw new Error("params");
      sink += m.id;
    };
    const time = (fn) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) fn();
      return Number(process.hrtime.bigint() - start) / iterations;
    };
    // Warm up both, then alternate several rounds and keep each one's best.
    for (let i = 0; i < 200_000; i++) {
      parseOnly();
      full();
    }
    let parseNs = Infinity;
    let fullNs = Infinity;
    for (let round = 0; round < 5; round++) {
      parseNs = Math.min(parseNs, time(parseOnly));
      fullNs = Math.min(fullNs, time(full));
    }
    if (sink === 0) console.log("");
    console.log(`  ${"JSON.parse alone".padEnd(44)} ${parseNs.toFixed(0).padStart(10)} ns/message`);
    console.log(
      `  ${"JSON.parse + envelope guard + lookup + params".padEnd(44)} ${fullNs.toFixed(0).padStart(10)} ns/message`,
    );
    return { parseNs, fullNs };
  });
}

async function main() {
  const seconds = Number(process.env.SECONDS_PER_CASE ?? 4);
  const iterations = Number(process.env.RECEIVE_ITERATIONS ?? 1_000_000);
  console.log(`runtime benchmark on node ${process.version}, ${seconds} s per round-trip case, sequential calls`);
  const only = process.env.BENCH_ONLY; // memory | stdio | receive, to run one case
  const ratios = [];
  if (!only || only === "memory") {
    console.log("in memory (one process):");
    const mem = await inMemory(seconds);
    ratios.push(`  in-memory  mcpgen / official = ${(mem.oursRate / mem.theirsRate).toFixed(2)}x   (target >= 3x)`);
  }
  if (!only || only === "stdio") {
    console.log("stdio (client and server in two processes):");
    const cores = (await import("node:os")).availableParallelism();
    const io = await stdio(seconds);
    ratios.push(
      `  stdio      mcpgen / official = ${(io.oursRate / io.theirsRate).toFixed(2)}x   (target >= 2x; ${cores} core(s) available${cores < 2 ? ", so busy polling is off" : ""})`,
    );
    // The same with our busy polling off, to show what polling adds and what the rest of the runtime does alone.
    const still = await stdio(seconds, 0, "stdio-nopoll");
    ratios.push(`  stdio, busy polling off: mcpgen / official = ${(still.oursRate / still.theirsRate).toFixed(2)}x`);
  }
  if (!only || only === "receive") {
    console.log("receive path (one tools/call request line):");
    const rx = await receivePath(iterations);
    ratios.push(`  receive    full / JSON.parse = ${(rx.fullNs / rx.parseNs).toFixed(2)}x   (target <= 1.25x)`);
  }
  console.log("ratios:");
  for (const line of ratios) console.log(line);
}
