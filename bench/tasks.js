// Benchmark: Tasks (MCP 2025-11-25): a task-augmented tools/call (create, then tasks/result) against a plain call on the same transport (in memory, HTTP), the same through a TaskHandle, and memory held per finished task kept for its ttl.
// Run after `npm run build`: `node bench/tasks.js`. Env: CALLS (calls per in-memory round, default 2000), WIRE_CALLS (per HTTP
// round, default 300), ROUNDS (default 7), KEPT (finished tasks for the memory row, default 2000).
import { createServer } from "node:http";
import { heap } from "./lib/heap.js";

const {
  ClientSession,
  McpServer,
  TaskReceiver,
  StreamableHttpClientTransport,
  createInMemoryPair,
  createStreamableHttpServer,
  requestAsTask,
  clientToServer,
  serverToClient,
  isMessage,
} = await import("mcpgen");

const CALLS = Number(process.env.CALLS ?? 2000);
const WIRE_CALLS = Number(process.env.WIRE_CALLS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const KEPT = Number(process.env.KEPT ?? 2000);

/** One server with one tool that may run as a task; `receiver` holds the tasks. */
function makeServer(receiverOptions = {}) {
  const tasks = new TaskReceiver({ pollIntervalMs: 1000, ...receiverOptions });
  const server = new McpServer({
    serverInfo: { name: "bench-tasks", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    progressInterval: 0,
    tasks,
  });
  server.tool("echo", { taskSupport: "optional" }, () => "ok");
  return { server, tasks };
}

function client() {
  return new ClientSession({
    inbound: serverToClient,
    outbound: clientToServer,
    isMessage,
    clientInfo: { name: "bench-client", version: "1" },
  });
}

const TASK = { task: { ttl: 60_000 } };
const plainCall = (c) => c.request("tools/call", { name: "echo" });
/** The protocol's cost: the task-augmented call, then tasks/result at once (it blocks until the task ends). */
const taskCall = async (c) => {
  const created = await c.request("tools/call", { name: "echo", ...TASK });
  return c.request("tasks/result", { taskId: created.task.taskId });
};
/**
 * Through the requestor's TaskHandle: it polls tasks/get at the receiver's pollInterval and fetches tasks/result once
 * the task ended; a status notification (in memory, or over HTTP on the standalone GET stream, even one that overtook
 * the CreateTaskResult) tells it at once.
 */
const handleCall = async (c) => {
  const handle = await requestAsTask(c, "tools/call", { name: "echo" }, TASK);
  return handle.result();
};
async function memoryRig() {
  // maxTasksPerPrincipal off: at its default (1000) the memory row would count tasks it evicted as kept.
  const { server, tasks } = makeServer({ maxKeptPerRequestor: 100_000, maxTasks: 100_000, maxTasksPerPrincipal: 0 });
  const [clientEnd, serverEnd] = createInMemoryPair();
  await server.connect(serverEnd);
  const c = client();
  await c.connect(clientEnd);
  return {
    client: c,
    tasks,
    close: async () => {
      await c.close();
      tasks.close();
    },
  };
}

async function httpRig() {
  const { server, tasks } = makeServer({ maxKeptPerRequestor: 100_000, maxTasks: 100_000 });
  const mcp = createStreamableHttpServer({ path: "/mcp", onSession: (t) => server.connect(t) });
  const http = createServer(mcp.nodeListener);
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  const c = client();
  await c.connect(
    new StreamableHttpClientTransport({
      // The standalone GET stream (opened by default) carries the task status notifications.
      url: `http://127.0.0.1:${http.address().port}/mcp`,
    }),
  );
  return {
    client: c,
    tasks,
    close: async () => {
      await c.close();
      tasks.close();
      await mcp.close?.();
      http.closeAllConnections?.();
      await new Promise((r) => http.close(r));
    },
  };
}

async function round(c, call, n) {
  const start = performance.now();
  for (let i = 0; i < n; i++) await call(c);
  return ((performance.now() - start) * 1000) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Plain and task calls alternate round by round on one connection, so load from elsewhere meets both alike. */
async function overhead(label, makeRig, n, taskCall) {
  const rig = await makeRig();
  await round(rig.client, plainCall, Math.ceil(n / 4));
  await round(rig.client, taskCall, Math.ceil(n / 4));
  const plain = [];
  const task = [];
  const ratios = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = await round(rig.client, plainCall, n);
    const t = await round(rig.client, taskCall, n);
    plain.push(p);
    task.push(t);
    ratios.push(t / p);
  }
  await rig.close();
  console.log(
    `${label.padEnd(11)} plain ${Math.min(...plain).toFixed(1)} µs/call  task ${Math.min(...task).toFixed(1)} µs/call  ` +
      `task/plain median ${median(ratios).toFixed(2)}x (rounds ${ratios.map((x) => x.toFixed(2)).join(" ")})`,
  );
}

/** Heap held per finished task while its ttl runs: KEPT tasks run to the end, results fetched, then counted. */
async function keptMemory() {
  const rig = await memoryRig();
  await taskCall(rig.client); // warm the paths before the baseline
  const before = heap();
  for (let i = 0; i < KEPT; i++) await taskCall(rig.client);
  const after = heap();
  const held = rig.tasks.size ?? KEPT;
  await rig.close();
  console.log(`memory     ${((after - before) / KEPT / 1024).toFixed(2)} KB per finished task kept (${held} kept)`);
}

console.log(`Tasks: task-augmented tools/call (create + tasks/result) over a plain call, ${ROUNDS} paired rounds`);
await overhead("in-memory", memoryRig, CALLS, taskCall);
await overhead("HTTP", httpRig, WIRE_CALLS, taskCall);
await overhead("handle mem", memoryRig, CALLS, handleCall);
await overhead("handle http", httpRig, WIRE_CALLS, handleCall);
await keptMemory();
