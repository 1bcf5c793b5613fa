// Benchmark: the client on MCP 2026-07-28. What the era probe costs at connect, and a 2026-07-28 tools/call round
// trip with our Client and server against the official SDK v2 client and server, measured in the same run.
//
//   node bench/client-eras.js           needs dist/ (`npm run build`)
//   DURATION_MS=1000 ROUNDS=3 CONNECTS=21 BENCH_ONLY=http|stdio   knobs (defaults shown)
//
// Connects. Our Client with `era: "auto"` (the default: a server/discover probe, then 2026-07-28), pinned
// (`era: { pin: "2026-07-28" }`: nothing sent until the first request) and `era: "legacy"` (initialize, then
// notifications/initialized), CONNECTS fresh connections per mode, the modes interleaved, after a warm-up of one each;
// each figure is a median with its interquartile range [p25-p75] in ms. "connect" is Client.connect alone; as a pinned
// connect sends nothing, "+ call" (connect and a first tools/call) is where the modes compare, and auto/pinned is
// taken on it. Servers: our dual-era server, and a 2025-only one (our McpServer without revision tables; over stdio
// also the official SDK 1.x fixture, test/interop/fixtures/sdk-server.mjs), where auto probes, is refused and falls
// back to initialize on the same connection (one process over stdio). Over stdio each connect spawns the server: the
// transport waits for the child's "ready" line on stderr before the client sends, so "connect" and "+ call" exclude
// the process start, and "whole" is from Client.connect to connected, spawn and boot included. Beside ours, the SDK
// v2 client's own auto vs pinned connect to the SDK v2 server (over stdio its auto spawns a sibling process to probe).
//
// Round trips. Sequential tools/call of `add` through each side's own client: our Client (connected with defaults,
// landed on 2026-07-28) against our server, and the SDK v2 client (`versionNegotiation: { mode: "auto" }`, landed on
// 2026-07-28) against the SDK v2 server in its 2026-only posture, so both clients' costs count. Over HTTP also our
// client against a bare server giving the same reply with no MCP: the ceiling (floor / SDK v2) is what any server
// could reach against our client. Rounds are interleaved; each case keeps its best round, and the per-round ratios
// (ours / theirs in the same round) give the spread. The HTTP servers and the SDK v2 stdio server are
// bench/eras.js's children (one `add` tool each); the others are this file's (`--serve <role>`).
//
// Targets: the issue asks for 4x the SDK v2's calls/s; the report prints it and whether it is met. What each
// transport is held to (exit 1 when missed) is in TARGETS, below what a quiet run gives so a loaded machine passes.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

const self = fileURLToPath(import.meta.url);
const root = resolve(self, "../..");
const ERAS = resolve(root, "bench/eras.js");
const SDK1 = resolve(root, "test/interop/fixtures/sdk-server.mjs");
const DURATION_MS = Number(process.env.DURATION_MS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTS = Number(process.env.CONNECTS ?? 21);
const ONLY = process.env.BENCH_ONLY;
/** The issue's target for the round trip: at least 4x the official SDK v2's calls/s. */
const ISSUE_TARGET = 4;
/**
 * What each transport's round trip is held to (exit 1 when missed), best round against best round. Measured on this
 * project's 2-core machine with other work on it (load 2-4): HTTP 2.8-7.9x, about two thirds of the ceiling each
 * time (our client against the bare floor: 4.1-14x the SDK in the same runs); stdio 3.2-14x (per-round ratios
 * 3.2-10x): both sides wake per message or busy-poll, and the SDK's best round lands whenever the load dips. The
 * gates sit below those so that a loaded run passes; the issue's 4x is printed beside them.
 */
const TARGETS = { http: 2.5, stdio: 2.5 };
const MODERN = "2026-07-28";
const ADD_SCHEMA = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};

// ---- this file's server children -----------------------------------------------------------------------------

/** Our server with one `add` tool; `dual` gives it the 2026-07-28 tables, else it speaks 2025-11-25 alone. */
async function oursServer(ours, dual) {
  const server = new ours.McpServer({
    serverInfo: { name: dual ? "bench-ours" : "bench-ours-2025", version: "1" },
    inbound: ours.clientToServer,
    outbound: ours.serverToClient,
    isMessage: ours.isMessage,
    ...(dual ? { revisions: ours.revisionTables } : {}),
  });
  server.tool("add", { description: "Adds", inputSchema: ADD_SCHEMA }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  return server;
}

async function childMain(role) {
  process.on("SIGTERM", () => process.exit(0));
  const ready = () => process.stderr.write("READY\n");
  if (role === "sdk1-stdio") {
    await import(SDK1);
    return ready();
  }
  const ours = await import("../dist/generated/sdk.js");
  const server = await oursServer(ours, !role.includes("2025"));
  if (role.endsWith("-stdio")) {
    await server.connect(new ours.StdioServerTransport());
    return ready();
  }
  const mcp = ours.createStreamableHttpServer({
    path: "/mcp",
    responseMode: "json",
    onSession: (t) => server.connect(t).then(() => undefined),
  });
  const http = createServer(mcp.nodeListener);
  http.keepAliveTimeout = 60_000;
  http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
}

if (process.argv[2] === "--serve") {
  await childMain(process.argv[3]);
} else {
  await main();
}

// ---- the parent ----------------------------------------------------------------------------------------------

async function main() {
  const ours = await import("../dist/generated/sdk.js");
  const theirs = await import("@modelcontextprotocol/client");
  const theirsStdio = await import("@modelcontextprotocol/client/stdio");
  const ADD = { name: "add", arguments: { a: 2, b: 3 } };

  /** A server child over HTTP (bench/eras.js's roles, or this file's for `script: self`): its URL and its stop. */
  function startHttp(role, script = ERAS) {
    const child = spawn(process.execPath, [script, "--serve", role], {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit", "ipc"],
    });
    return new Promise((done, fail) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /PORT (\d+)/.exec(out);
        if (m) done({ url: `http://127.0.0.1:${m[1]}/mcp`, stop: () => child.kill("SIGTERM") });
      });
      child.once("exit", (code) => fail(new Error(`${role} exited with ${code}`)));
    });
  }

  /** Our stdio transport to one of this file's children that starts sending only once the child said it is ready. */
  class ReadyStdio extends ours.StdioClientTransport {
    constructor(role) {
      super({ command: process.execPath, args: [self, "--serve", role], cwd: root, stderr: "pipe" });
      this.readyAt = undefined;
    }
    async start() {
      await super.start();
      const err = this.stderr;
      await new Promise((done, fail) => {
        let out = "";
        const timer = setTimeout(() => fail(new Error(`no READY from the server child: ${out}`)), 20_000);
        err.setEncoding("utf8");
        err.on("data", (d) => {
          out += d;
          if (out.includes("READY\n")) {
            clearTimeout(timer);
            done();
          }
        });
      });
      this.readyAt = performance.now();
    }
  }

  async function connectOurs(transport, era) {
    const client = await ours.Client.connect(transport, { clientInfo: { name: "bench", version: "1" }, era });
    return { call: () => client.callTool(ADD), close: () => client.peer.close(), era: client.peer.era };
  }

  async function connectTheirs(transport, mode = "auto") {
    const client = new theirs.Client({ name: "bench", version: "1" }, { versionNegotiation: { mode } });
    await client.connect(transport);
    if (client.getProtocolEra() !== "modern") throw new Error("the SDK v2 client did not land on 2026-07-28");
    return { call: () => client.callTool(ADD), close: () => client.close(), era: client.getProtocolEra() };
  }

  const theirsStdioTransport = () =>
    new theirsStdio.StdioClientTransport({
      command: process.execPath,
      args: [ERAS, "--serve", "sdk-stdio"],
      cwd: root,
      stderr: "ignore",
    });

  function checked(result) {
    if (result.content?.[0]?.text !== "5") throw new Error(`unexpected result ${JSON.stringify(result)}`);
  }

  // ---- connects ----

  const quantile = (xs, q) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.round(q * (s.length - 1))];
  };
  const median = (xs) => quantile(xs, 0.5);
  const ms = (n) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
  const cell = (xs) =>
    xs.length === 0 ? "" : `${ms(median(xs))} [${ms(quantile(xs, 0.25))}-${ms(quantile(xs, 0.75))}]`;

  /**
   * CONNECTS connects per mode, interleaved, after one warm-up each. `open(mode)` returns a transport; `connect`
   * connects it in that mode. Samples: connect (from ready, where the transport tells), + call, whole.
   */
  async function sampleConnects(modes, open, connect) {
    const samples = Object.fromEntries(Object.keys(modes).map((m) => [m, { connect: [], call: [], whole: [] }]));
    for (let i = -1; i < CONNECTS; i++) {
      for (const [name, mode] of Object.entries(modes)) {
        const transport = open(mode);
        const started = performance.now();
        const session = await connect(transport, mode);
        const connected = performance.now();
        checked(await session.call());
        const called = performance.now();
        await session.close();
        if (i < 0) continue;
        const from = transport.readyAt ?? started;
        const s = samples[name];
        s.connect.push(connected - from);
        s.call.push(called - from);
        if (transport.readyAt !== undefined) s.whole.push(connected - started);
      }
    }
    return samples;
  }

  function printConnects(title, labels, samples, compare) {
    const stdio = Object.values(samples).some((s) => s.whole.length > 0);
    console.log(`${title}, ${CONNECTS} connects per mode, ms, median [p25-p75]`);
    console.log(
      `  ${"".padEnd(24)}${"connect".padEnd(22)}${"+ call".padEnd(22)}${stdio ? "whole (spawn to connected)" : ""}`,
    );
    for (const [name, s] of Object.entries(samples))
      console.log(
        `  ${labels[name].padEnd(24)}${cell(s.connect).padEnd(22)}${cell(s.call).padEnd(22)}${cell(s.whole)}`,
      );
    const m = (name) => median(samples[name].call);
    const [a, b] = compare;
    console.log(
      `  ${a}/${b} on connect + call: ${(m(a) / m(b)).toFixed(2)}x, ${m(a) >= m(b) ? "+" : ""}${ms(m(a) - m(b))} ms` +
        (samples.legacy !== undefined && b !== "legacy"
          ? `; ${a}/legacy ${(m(a) / m("legacy")).toFixed(2)}x, ${m(a) >= m("legacy") ? "+" : ""}${ms(m(a) - m("legacy"))} ms`
          : ""),
    );
  }

  const OUR_MODES = { auto: "auto", pinned: { pin: MODERN }, legacy: "legacy" };
  const OUR_LABELS = { auto: "auto (probe)", pinned: `pinned ${MODERN}`, legacy: "legacy (initialize)" };
  const LEGACY_LABELS = { auto: "auto (probe, fallback)", legacy: "legacy (initialize)" };
  const THEIR_LABELS = { auto: "auto (probe)", pinned: `pinned ${MODERN}` };

  async function connects(over) {
    if (over === "http") {
      const servers = {
        dual: await startHttp("ours-http"),
        only2025: await startHttp("ours-2025-http", self),
        sdk: await startHttp("sdk-http"),
      };
      try {
        const httpTo = (server) => () => new ours.StreamableHttpClientTransport({ url: server.url });
        printConnects(
          "http, our Client -> our dual-era server",
          OUR_LABELS,
          await sampleConnects(OUR_MODES, httpTo(servers.dual), connectOurs),
          ["auto", "pinned"],
        );
        printConnects(
          "http, our Client -> our 2025-only server (no revision tables)",
          LEGACY_LABELS,
          await sampleConnects({ auto: "auto", legacy: "legacy" }, httpTo(servers.only2025), connectOurs),
          ["auto", "legacy"],
        );
        printConnects(
          "http, peer: SDK v2 client -> SDK v2 server (2026-only)",
          THEIR_LABELS,
          await sampleConnects(
            { auto: "auto", pinned: { pin: MODERN } },
            () => new theirs.StreamableHTTPClientTransport(new URL(servers.sdk.url)),
            connectTheirs,
          ),
          ["auto", "pinned"],
        );
      } finally {
        for (const server of Object.values(servers)) server.stop();
      }
      return;
    }
    printConnects(
      "stdio, our Client -> our dual-era server",
      OUR_LABELS,
      await sampleConnects(OUR_MODES, () => new ReadyStdio("ours-stdio"), connectOurs),
      ["auto", "pinned"],
    );
    printConnects(
      "stdio, our Client -> our 2025-only server (no revision tables)",
      LEGACY_LABELS,
      await sampleConnects({ auto: "auto", legacy: "legacy" }, () => new ReadyStdio("ours-2025-stdio"), connectOurs),
      ["auto", "legacy"],
    );
    printConnects(
      "stdio, our Client -> the official SDK 1.x server (2025-only)",
      LEGACY_LABELS,
      await sampleConnects({ auto: "auto", legacy: "legacy" }, () => new ReadyStdio("sdk1-stdio"), connectOurs),
      ["auto", "legacy"],
    );
    printConnects(
      "stdio, peer: SDK v2 client -> SDK v2 server (2026-only); connect includes the spawn",
      THEIR_LABELS,
      await sampleConnects({ auto: "auto", pinned: { pin: MODERN } }, theirsStdioTransport, connectTheirs),
      ["auto", "pinned"],
    );
  }

  // ---- round trips ----

  /** Calls/s of sequential calls for DURATION_MS. */
  async function rate(session) {
    let calls = 0;
    const started = performance.now();
    while (performance.now() - started < DURATION_MS) {
      checked(await session.call());
      calls++;
    }
    return (calls * 1000) / (performance.now() - started);
  }

  async function roundTrips(over) {
    const servers =
      over === "http"
        ? { ours: await startHttp("ours-http"), sdk: await startHttp("sdk-http"), floor: await startHttp("floor-http") }
        : {};
    const sessions = {};
    try {
      sessions.ours = await connectOurs(
        over === "http"
          ? new ours.StreamableHttpClientTransport({ url: servers.ours.url })
          : new ours.StdioClientTransport({
              command: process.execPath,
              args: [ERAS, "--serve", "ours-stdio"],
              cwd: root,
            }),
        "auto",
      );
      if (sessions.ours.era !== "modern") throw new Error("our client did not land on 2026-07-28");
      sessions.sdk = await connectTheirs(
        over === "http" ? new theirs.StreamableHTTPClientTransport(new URL(servers.sdk.url)) : theirsStdioTransport(),
      );
      // Our client, pinned (the floor answers nothing but tools/call), against the bare server: the most any server gets.
      if (servers.floor !== undefined)
        sessions.floor = await connectOurs(new ours.StreamableHttpClientTransport({ url: servers.floor.url }), {
          pin: MODERN,
        });
      for (const session of Object.values(sessions)) await rate(session); // warm-up
      const rounds = Object.fromEntries(Object.keys(sessions).map((k) => [k, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? Object.keys(sessions) : Object.keys(sessions).reverse();
        for (const name of order) rounds[name].push(await rate(sessions[name]));
      }
      const best = Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, Math.max(...v)]));
      const ratio = best.ours / best.sdk;
      const perRound = rounds.ours.map((r, i) => r / rounds.sdk[i]);
      const int = (n) => Math.round(n).toLocaleString("en-US");
      const span = (xs, f) => `${f(Math.min(...xs))}-${f(Math.max(...xs))}`;
      console.log(
        `${over}, 2026-07-28 tools/call round trip, sequential, best of ${ROUNDS} rounds of ${DURATION_MS} ms ` +
          `(rounds' range in brackets)`,
      );
      console.log(
        `  ours ${int(best.ours)}/s [${span(rounds.ours, int)}], SDK v2 ${int(best.sdk)}/s [${span(rounds.sdk, int)}]` +
          (best.floor !== undefined ? `, our client -> bare floor ${int(best.floor)}/s` : ""),
      );
      const target = TARGETS[over];
      console.log(
        `  ratio ${ratio.toFixed(2)}x (per round ${span(perRound, (x) => x.toFixed(2))}x)` +
          (best.floor !== undefined ? `, ceiling (floor / SDK v2) ${(best.floor / best.sdk).toFixed(2)}x` : "") +
          `; target ${target}x ${ratio >= target ? "met" : "MISSED"}; the issue's ${ISSUE_TARGET}x ` +
          (ratio >= ISSUE_TARGET ? "met" : `missed (${((ISSUE_TARGET / ratio - 1) * 100).toFixed(0)}% short)`),
      );
      return ratio >= target;
    } finally {
      for (const session of Object.values(sessions)) await session.close();
      for (const server of Object.values(servers)) server.stop();
    }
  }

  const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/client");
  const { version } = JSON.parse(readFileSync(resolve(dirname(entry), "../package.json"), "utf8"));
  console.log(`our Client vs @modelcontextprotocol/client ${version}, node ${process.version}`);
  let failed = false;
  for (const over of ["http", "stdio"]) {
    if (ONLY !== undefined && ONLY !== over) continue;
    await connects(over);
    if (!(await roundTrips(over))) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}
