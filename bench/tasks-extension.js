// Benchmark: the Tasks extension (MCP 2026-07-28): a tools/call that becomes a task (create, one tasks/get that inlines the result) against a plain 2026 call of the same tool, in memory and over HTTP, and the heap held per finished extension task kept for its ttl beside a core (2025-11-25) task.
// Run after `npm run build`: `node bench/tasks-extension.js`. Env: CALLS (per in-memory round, default 2000), WIRE_CALLS
// (per HTTP round, default 300), ROUNDS (default 7), KEPT (finished tasks for the memory rows, default 2000).
// The client side is a bare enveloped JSON-RPC sender, the same for both calls, so the ratio is the server's cost.
import { createServer } from "node:http";
import { heap } from "./lib/heap.js";

const {
  McpServer,
  TaskReceiver,
  createInMemoryPair,
  createStreamableHttpServer,
  clientToServer,
  serverToClient,
  isMessage,
  revisionTables,
} = await import("mcpgen");

const CALLS = Number(process.env.CALLS ?? 2000);
const WIRE_CALLS = Number(process.env.WIRE_CALLS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const KEPT = Number(process.env.KEPT ?? 2000);
const VERSION = "2026-07-28";
const EXTENSION = "io.modelcontextprotocol/tasks";

/** `echo` runs plainly; `echo_task` (same handler) becomes a task for a client that declares the extension. */
function makeServer() {
  const tasks = new TaskReceiver({
    pollIntervalMs: 1000,
    maxKeptPerRequestor: 100_000,
    maxTasks: 100_000,
    maxTasksPerPrincipal: 0,
    maxActivePerRequestor: 100_000,
  });
  const server = new McpServer({
    serverInfo: { name: "bench-tasks-extension", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    revisions: revisionTables,
    tasks,
  });
  server.tool("echo", {}, () => "ok");
  server.tool("echo_task", { taskSupport: "optional" }, () => "ok");
  return { server, tasks };
}

const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [EXTENSION]: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};
const withMeta = (params) => ({ ...params, _meta: META });

/**
 * A bare in-memory sender: one request at a time, the answer by id. `legacy`: a 2025-11-25 connection (initialize
 * first, no envelope), for core tasks.
 */
async function memoryRig(legacy = false) {
  const { server, tasks } = makeServer();
  const [clientEnd, serverEnd] = createInMemoryPair();
  await server.connect(serverEnd);
  const waiting = new Map();
  clientEnd.onmessage = (message) => {
    const w = waiting.get(message.id);
    if (w === undefined) return;
    waiting.delete(message.id);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  };
  await clientEnd.start();
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, { resolve, reject });
      void clientEnd.send({ jsonrpc: "2.0", id: n, method, params: legacy ? params : withMeta(params) });
    });
  if (legacy) {
    await request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    });
    await clientEnd.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  return { request, tasks, close: async () => (await server.close(), tasks.close()) };
}

/** A bare HTTP sender: each request one POST with the revision's headers (the per-request lane). */
async function httpRig() {
  const { server, tasks } = makeServer();
  const mcp = createStreamableHttpServer({ path: "/mcp", onSession: (t) => server.connect(t) });
  const http = createServer(mcp.nodeListener);
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${http.address().port}/mcp`;
  let id = 0;
  const request = async (method, params) => {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
    };
    const name = method === "tools/call" ? params.name : params.taskId;
    if (name !== undefined) headers["mcp-name"] = name;
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: withMeta(params) }),
    });
    const text = await response.text();
    const message = JSON.parse(text.startsWith("{") ? text : text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1));
    if (message.error) throw new Error(message.error.message);
    return message.result;
  };
  return {
    request,
    tasks,
    close: async () => {
      await server.close();
      tasks.close();
      await mcp.close?.();
      http.closeAllConnections?.();
      await new Promise((r) => http.close(r));
    },
  };
}

const plainCall = (rig) => rig.request("tools/call", { name: "echo" });
let polls = 0;
let tasksRun = 0;
/**
 * Create, then tasks/get until it carries the result inline: over HTTP the handler has ended by the first poll; in
 * memory the poll can overtake it, so the extra polls are counted and printed.
 */
const taskCall = async (rig) => {
  const created = await rig.request("tools/call", { name: "echo_task" });
  if (created.resultType !== "task") throw new Error("echo_task did not become a task");
  tasksRun++;
  for (;;) {
    polls++;
    const polled = await rig.request("tasks/get", { taskId: created.taskId });
    if (polled.status === "completed" && polled.result !== undefined) return polled.result;
    if (polled.status !== "working") throw new Error(`task ${polled.status}`);
  }
};

async function round(rig, call, n) {
  const start = performance.now();
  for (let i = 0; i < n; i++) await call(rig);
  return ((performance.now() - start) * 1000) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Plain and task calls alternate round by round on one rig, so load from elsewhere meets both alike. */
async function overhead(label, makeRig, n) {
  const rig = await makeRig();
  await round(rig, plainCall, Math.ceil(n / 4));
  await round(rig, taskCall, Math.ceil(n / 4));
  const plain = [];
  const task = [];
  const ratios = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = await round(rig, plainCall, n);
    const t = await round(rig, taskCall, n);
    plain.push(p);
    task.push(t);
    ratios.push(t / p);
  }
  await rig.close();
  const perTask = polls / tasksRun;
  polls = tasksRun = 0;
  console.log(
    `${label.padEnd(10)} (${perTask.toFixed(2)} polls per task) plain ${Math.min(...plain).toFixed(1)} µs/call  task ${Math.min(...task).toFixed(1)} µs/call  ` +
      `task/plain median ${median(ratios).toFixed(2)}x (rounds ${ratios.map((x) => x.toFixed(2)).join(" ")})`,
  );
  return median(ratios);
}

/** A core task the same way: created with `params.task`, its result fetched with tasks/result. */
const coreTaskCall = async (rig) => {
  const created = await rig.request("tools/call", { name: "echo_task", task: { ttl: 60_000 } });
  return rig.request("tasks/result", { taskId: created.task.taskId });
};

/** Heap held per finished task while its ttl runs: KEPT tasks run to the end and are read, then counted. */
async function keptMemory(label, legacy, call) {
  const rig = await memoryRig(legacy);
  await call(rig); // warm the paths before the baseline
  const before = heap();
  for (let i = 0; i < KEPT; i++) await call(rig);
  const after = heap();
  const held = rig.tasks.size - 1;
  await rig.close();
  if (held !== KEPT) throw new Error(`${held} of ${KEPT} tasks kept: a limit evicted some`);
  const kb = (after - before) / KEPT / 1024;
  console.log(`memory     ${kb.toFixed(2)} KB per finished ${label} task kept (${held} kept)`);
  return kb;
}

console.log(
  `Tasks extension: tools/call as a task (create + one tasks/get) over a plain 2026 call, ${ROUNDS} paired rounds`,
);
await overhead("in-memory", memoryRig, CALLS);
await overhead("HTTP", httpRig, WIRE_CALLS);
const core = await keptMemory("core (2025-11-25)", true, coreTaskCall);
const extension = await keptMemory("extension", false, taskCall);
const ratio = extension / core;
// The target: an extension task holds no more than a core task. Two readings of the same heap differ by up to ~10%
// between runs here, so the gate allows that much.
const MEMORY_GATE = 1.15;
console.log(`memory     extension/core ${ratio.toFixed(2)}x (gate ${MEMORY_GATE}x)`);
if (ratio > MEMORY_GATE) {
  console.log("FAIL: an extension task holds more than a core task");
  process.exitCode = 1;
}
