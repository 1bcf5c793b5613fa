// Benchmark: tool calls over Streamable HTTP on loopback, mcpgen vs the official SDK side by side (needs `npm run build` first).
//
//   node bench/http.js            all three measurements, with ratios
//   DURATION_MS=3000 CLIENTS=50   knobs (defaults shown)
//
// Each side runs its own server (McpServer + its Streamable HTTP server transport on node:http, 127.0.0.1) in
// a child process, so client and server each get a core; the client side is that SDK's own Client and HTTP
// client transport. Measured: sequential tools/call per second with JSON responses, with SSE responses, and
// the total rate of CLIENTS concurrent clients (SSE, the default mode of both). Two more rows swap only the
// server or only the client, to show where the difference comes from.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const DURATION_MS = Number(process.env.DURATION_MS ?? 3000);
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 1000);
const CLIENTS = Number(process.env.CLIENTS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

// ---- servers (child processes) -------------------------------------------------------------------------

async function serveOurs(mode) {
  const { McpServer, clientToServer, serverToClient, isMessage, createStreamableHttpServer } =
    await import("../dist/generated/sdk.js");
  const server = new McpServer({
    serverInfo: { name: "bench-ours", version: "1" },
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
  });
  server.tool(
    "add",
    {
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
    },
    ({ a, b }) => String(a + b),
  );
  const mcp = createStreamableHttpServer({
    path: "/mcp",
    responseMode: mode,
    onSession: (t) => server.connect(t).then(() => undefined),
  });
  return createServer(mcp.nodeListener);
}

async function serveSdk(mode) {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const { z } = await import("zod");
  const transports = new Map();
  return createServer(async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? transports.get(sid) : undefined;
    if (!transport) {
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: mode === "json",
        onsessioninitialized: (id) => transports.set(id, fresh),
        onsessionclosed: (id) => transports.delete(id),
      });
      // One McpServer per session: the official SDK binds a server instance to one transport.
      const server = new McpServer({ name: "bench-sdk", version: "1" });
      server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
        content: [{ type: "text", text: String(a + b) }],
      }));
      await server.connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  });
}

async function childMain(side, mode) {
  const http = side === "ours" ? await serveOurs(mode) : await serveSdk(mode);
  http.keepAliveTimeout = 60_000;
  http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
  process.on("SIGTERM", () => process.exit(0));
}

function startChild(side, mode) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", side, mode], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolvePort, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m)
        resolvePort({
          url: `http://127.0.0.1:${m[1]}/mcp`,
          stop: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
        });
    });
    child.once("exit", (code) => reject(new Error(`${side} server exited with ${code}`)));
  });
}

// ---- clients -------------------------------------------------------------------------------------------

async function connectOurs(url) {
  const { Client, StreamableHttpClientTransport } = await import("../dist/generated/sdk.js");
  const client = await Client.connect(new StreamableHttpClientTransport({ url, standaloneStream: "manual" }), {
    clientInfo: { name: "bench", version: "1" },
  });
  return {
    call: (a, b) => client.callTool({ name: "add", arguments: { a, b } }),
    close: () => client.peer.close(),
  };
}

async function connectSdk(url) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "bench", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return {
    call: (a, b) => client.callTool({ name: "add", arguments: { a, b } }),
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** One client calling in a loop until `until`; returns the number of calls completed (each one checked). */
async function loop(client, until) {
  let calls = 0;
  while (performance.now() < until) {
    const result = await client.call(calls, 1);
    if (result.content?.[0]?.text !== String(calls + 1)) throw new Error(`wrong answer: ${JSON.stringify(result)}`);
    calls++;
  }
  return calls;
}

/** Calls per second of `clients` concurrent clients (each in its own session), after a warm-up. */
async function measure(serverSide, clientSide, mode, clients) {
  const server = await startChild(serverSide, mode);
  try {
    const connect = clientSide === "ours" ? connectOurs : connectSdk;
    const sessions = [];
    for (let i = 0; i < clients; i++) sessions.push(await connect(server.url));
    await Promise.all(sessions.map((c) => loop(c, performance.now() + WARMUP_MS)));
    const start = performance.now();
    const until = start + DURATION_MS;
    const counts = await Promise.all(sessions.map((c) => loop(c, until)));
    const elapsed = performance.now() - start;
    for (const c of sessions) await c.close();
    return (counts.reduce((a, b) => a + b, 0) * 1000) / elapsed;
  } finally {
    await server.stop();
  }
}

async function main() {
  // The official client's fetch adds an abort listener per request to one long-lived signal; Node warns once
  // past 1500. That is their client's business and says nothing about speed, so keep it out of the table.
  process.removeAllListeners("warning");
  process.on("warning", (warning) => {
    if (warning.name !== "MaxListenersExceededWarning") console.error(warning);
  });
  if (!existsSync(resolve(root, "dist/generated/sdk.js")))
    throw new Error("dist/ is missing: run `npm run build` first");
  // [label, mode, clients, mcpgen pairing, official pairing, counts toward the target]; a pairing is [server, client].
  const cases = [
    ["sequential, JSON responses", "json", 1, ["ours", "ours"], ["sdk", "sdk"], true],
    ["sequential, SSE responses", "sse", 1, ["ours", "ours"], ["sdk", "sdk"], true],
    [`${CLIENTS} concurrent clients, SSE`, "sse", CLIENTS, ["ours", "ours"], ["sdk", "sdk"], true],
    // Where the difference comes from: one side swapped, the other held fixed (not part of the target).
    ["  servers only (official client)", "sse", 1, ["ours", "sdk"], ["sdk", "sdk"], false],
    ["  clients only (official server)", "sse", 1, ["sdk", "ours"], ["sdk", "sdk"], false],
  ];
  console.log(
    `Streamable HTTP tools/call on 127.0.0.1, ${process.version}, ${DURATION_MS} ms per run, best of ${ROUNDS} (target: mcpgen >= 1.5x official)`,
  );
  console.log(`${"case".padEnd(36)}${"mcpgen/s".padStart(10)}${"official/s".padStart(12)}${"ratio".padStart(8)}`);
  let met = true;
  for (const [name, mode, clients, mine, theirs, counts] of cases) {
    let ours = 0;
    let sdk = 0;
    // Alternate the sides so drift (thermal, other load) hits both alike; keep each side's best round.
    for (let round = 0; round < ROUNDS; round++) {
      ours = Math.max(ours, await measure(mine[0], mine[1], mode, clients));
      sdk = Math.max(sdk, await measure(theirs[0], theirs[1], mode, clients));
    }
    const ratio = ours / sdk;
    if (counts && ratio < 1.5) met = false;
    const flag = counts && ratio < 1.5 ? "  BELOW TARGET" : "";
    console.log(
      `${name.padEnd(36)}${ours.toFixed(0).padStart(10)}${sdk.toFixed(0).padStart(12)}${(ratio.toFixed(2) + "x").padStart(8)}${flag}`,
    );
  }
  process.exitCode = met ? 0 : 1;
}

if (process.argv[2] === "--serve") await childMain(process.argv[3], process.argv[4]);
else await main();
