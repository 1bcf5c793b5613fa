// Benchmark: bundle size of minimal programs, mcpgen beside the official SDK v1 and v2, measured in one run (needs
// `npm run build` first).
//
//   node bench/bundle.js            every program, then smoke runs of our stdio bundles
//
// Each program is bundled by esbuild (minified, ESM) twice. "One file" has no code splitting: the whole program in
// one file, as CLIs and serverless functions ship it. "Split" has code splitting, measured as the program loads: the
// entry chunk plus every chunk it imports statically is what it loads on the happy path ("entry"); chunks reached
// only through a dynamic import() (our detailed validators, loaded when a message fails its guard) are "lazy".
// Platform node for the stdio programs; the HTTP client for node and the browser, and the HTTP server as a fetch
// handler (a worker or edge function) for the browser. A build that fails is reported as such. In a browser our
// programs import the typed SDK from mcpgen/generated and the runtime from mcpgen/web: "mcpgen" also carries the
// Node-only transports. The official SDK is v1 (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client
// and @modelcontextprotocol/server), whatever versions are installed.
// Targets (gzip -9, ours, node): one file, the stdio client at most 40 KB and the stdio server at most 45 KB; split
// entry, the stdio client at most 12 KB and the stdio server at most 15 KB. The run exits 1 when one is missed.
// Beside each one-file target a "floor" row bundles the same program without the validators' tables: the code
// every run loads, which no choice of explain path can go below.
// The smoke runs start our bundled server from our bundled client (split, then one file), call a tool, and send
// params that fail the guard, so the detailed validators must load and the -32602 error carry JSON-pointer details.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const KB = 1000;
/** Ours, gzip: the whole program in one file, and the split entry. */
const TARGETS = {
  "one file": { "stdio client": 40 * KB, "stdio server": 45 * KB },
  "split entry": { "stdio client": 12 * KB, "stdio server": 15 * KB },
};

// Inside the project, so `mcpgen` resolves to this package (a self-reference) and the official SDK to node_modules.
const PROGRAMS = {
  "stdio client": {
    ours: `import { Client, StdioClientTransport } from "mcpgen";
const client = await Client.connect(new StdioClientTransport({ command: process.execPath, args: [process.argv[2]] }), { clientInfo: { name: "c", version: "1" } });
const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
let invalid;
try { await client.peer.request("tools/call", { name: 7 }); } catch (error) { invalid = { code: error.code, data: error.data }; }
console.log(JSON.stringify({ sum, invalid }));
await client.peer.close();
`,
    v1: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const client = new Client({ name: "c", version: "1" });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [process.argv[2]] }));
console.log(JSON.stringify(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })));
await client.close();
`,
    v2: `import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
const client = new Client({ name: "c", version: "1" });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [process.argv[2]] }));
console.log(JSON.stringify(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })));
await client.close();
`,
  },
  "stdio server": {
    ours: `import { StdioServerTransport, createMcpServer } from "mcpgen";
const server = createMcpServer({ serverInfo: { name: "s", version: "1" } });
server.tool("add", { inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } }, ({ a, b }) => String(a + b));
await server.connect(new StdioServerTransport());
`,
    v1: `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
await server.connect(new StdioServerTransport());
`,
    v2: `import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
await server.connect(new StdioServerTransport());
`,
  },
  "HTTP client": {
    ours: `import { Client, StreamableHttpClientTransport } from "mcpgen";
const client = await Client.connect(new StreamableHttpClientTransport({ url: "http://127.0.0.1:3000/mcp" }), { clientInfo: { name: "c", version: "1" } });
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
await client.peer.close();
`,
    oursBrowser: `import { Client } from "mcpgen/generated";
import { StreamableHttpClientTransport } from "mcpgen/web";
const client = await Client.connect(new StreamableHttpClientTransport({ url: "http://127.0.0.1:3000/mcp" }), { clientInfo: { name: "c", version: "1" } });
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
await client.peer.close();
`,
    v1: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const client = new Client({ name: "c", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1:3000/mcp")));
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
await client.close();
`,
    v2: `import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
const client = new Client({ name: "c", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1:3000/mcp")));
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
await client.close();
`,
  },
  "HTTP server": {
    ours: `import { createMcpServer } from "mcpgen/generated";
import { createStreamableHttpServer } from "mcpgen/web";
const server = createMcpServer({ serverInfo: { name: "s", version: "1" } });
server.tool("add", { inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } }, ({ a, b }) => String(a + b));
const mcp = createStreamableHttpServer({ allowedHosts: ["mcp.example"], onSession: (transport) => server.connect(transport) });
export default { fetch: (request) => mcp.fetch(request) };
`,
    v1: `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
await server.connect(transport);
export default { fetch: (request) => transport.handleRequest(request) };
`,
    v2: `import { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
await server.connect(transport);
export default { fetch: (request) => transport.handleRequest(request) };
`,
  },
};
const PLATFORMS = {
  "stdio client": ["node"],
  "stdio server": ["node"],
  "HTTP client": ["node", "browser"],
  "HTTP server": ["browser"],
};

/**
 * Bundles one program, split or as one file; returns entry and lazy sizes (raw and gzip; one file is all entry) and
 * the entry's path, or the first error when the build fails.
 */
async function measure(dir, name, source, platform, splitting, leaveOut) {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  const outdir = join(dir, `out-${name}-${platform}-${splitting ? "split" : "one"}${leaveOut ? "-floor" : ""}`);
  let result;
  try {
    result = await build({
      entryPoints: [file],
      bundle: true,
      minify: true,
      format: "esm",
      splitting,
      platform,
      target: platform === "node" ? "node20" : "es2022",
      outdir,
      metafile: true,
      logLevel: "silent",
      // The floor: modules matching `leaveOut` stay out of the bundle (imports of them are left as they are).
      plugins: leaveOut
        ? [
            {
              name: "leave-out",
              setup: (b) => b.onResolve({ filter: leaveOut }, (a) => ({ path: a.path, external: true })),
            },
          ]
        : [],
      // Lets a bundle for Node require() built-ins from ESM (the official SDK's dependencies do).
      banner:
        platform === "node"
          ? { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" }
          : {},
    });
  } catch (error) {
    const errors = error.errors ?? [];
    return {
      failed: `${errors.length} error${errors.length === 1 ? "" : "s"}, first: ${errors[0]?.text ?? String(error)}`,
    };
  }
  const outputs = result.metafile.outputs;
  const key = (path) => relative(root, resolve(root, path));
  const entryKey = Object.keys(outputs).find((k) => outputs[k].entryPoint !== undefined);
  const eager = new Set();
  const visit = (k) => {
    if (eager.has(k)) return;
    eager.add(k);
    for (const i of outputs[k].imports) if (i.kind === "import-statement" && !i.external) visit(key(i.path));
  };
  visit(entryKey);
  const sizes = { entry: { bytes: 0, gzip: 0 }, lazy: { bytes: 0, gzip: 0 }, file: join(outdir, `${name}.js`) };
  for (const k of Object.keys(outputs)) {
    if (!k.endsWith(".js")) continue;
    const content = readFileSync(resolve(root, k));
    const part = eager.has(k) ? sizes.entry : sizes.lazy;
    part.bytes += content.length;
    part.gzip += gzipSync(content, { level: 9 }).length;
  }
  return sizes;
}

const fmt = (n) => `${(n / KB).toFixed(1)} KB`;
const pad = (s, n) => String(s).padEnd(n);

if (!existsSync(join(root, "dist/generated/sdk.js"))) {
  console.error("dist/ is missing: run `npm run build` first");
  process.exit(1);
}
mkdirSync(join(root, ".tmp"), { recursive: true });
const dir = mkdtempSync(join(root, ".tmp", "bundle-"));
let missed = 0;
const built = { split: {}, "one file": {} };
const SIDES = [
  ["mcpgen", "ours"],
  ["official SDK v1", "v1"],
  ["official SDK v2", "v2"],
];
const cell = (m) => (m.failed ? "build fails" : `${fmt(m.entry.bytes)} (${fmt(m.entry.gzip)})`);
const lazyCell = (m) => (m.failed ? "-" : m.lazy.bytes === 0 ? "none" : `${fmt(m.lazy.bytes)} (${fmt(m.lazy.gzip)})`);
/** A target's verdict, counting a miss. */
function verdict(kind, program, m) {
  const target = TARGETS[kind][program];
  if (target === undefined) return "";
  const met = !m.failed && m.entry.gzip <= target;
  if (!met) missed++;
  return `${kind} ${met ? "meets" : "MISSES"} ${fmt(target)}`;
}
const ratio = (ours, theirs) =>
  ours.failed || theirs.failed ? "-" : `${(theirs.entry.gzip / ours.entry.gzip).toFixed(1)}x`;

/** The bundled client must start the bundled server, get its sum, and get -32602 with a pointer for bad params. */
function smoke(kind) {
  const run = spawnSync(process.execPath, [built[kind]["stdio client"], built[kind]["stdio server"]], {
    encoding: "utf8",
    timeout: 30_000,
  });
  try {
    const { sum, invalid } = JSON.parse(run.stdout);
    const detail = Array.isArray(invalid?.data?.errors)
      ? invalid.data.errors.find((e) => e.pointer === "/name")
      : undefined;
    if (sum?.content?.[0]?.text === "5" && invalid?.code === -32602 && detail !== undefined)
      return `ok: tool call answered, -32602 carries ${JSON.stringify(detail)}`;
  } catch {
    // reported below with the process's output
  }
  missed++;
  return `failed\n${run.stdout}${run.stderr}`;
}

try {
  console.log(
    "one file: the whole program in one bundle (no code splitting), as CLIs and serverless functions ship it;",
  );
  console.log(
    "split entry: the entry chunk and the chunks it imports statically, what a program loads on the happy path;",
  );
  console.log("split lazy: chunks reached only through import(), loaded when a message fails its guard.");
  console.log("Sizes are minified bytes (gzip -9); KB = 1000 bytes. Ratios compare gzip sizes: the SDK's over ours.\n");
  console.log(
    `${pad("program", 24)}${pad("SDK", 18)}${pad("one file", 22)}${pad("split entry", 22)}${pad("split lazy", 22)}targets`,
  );
  for (const [program, sources] of Object.entries(PROGRAMS)) {
    for (const platform of PLATFORMS[program]) {
      const slug = program.replace(/\W+/g, "-");
      const rows = {};
      for (const [, side] of SIDES) {
        const source =
          side === "ours" ? (platform === "browser" && sources.oursBrowser) || sources.ours : sources[side];
        rows[side] = {
          one: await measure(dir, `${side}-${slug}`, source, platform, false),
          split: await measure(dir, `${side}-${slug}`, source, platform, true),
        };
      }
      const ours = rows.ours;
      if (platform === "node") {
        built.split[program] = ours.split.file;
        built["one file"][program] = ours.one.file;
      }
      for (const [label, side] of SIDES) {
        const { one, split } = rows[side];
        const targets =
          side === "ours" && platform === "node"
            ? [verdict("one file", program, one), verdict("split entry", program, split)].filter(Boolean).join("; ")
            : side === "ours"
              ? ""
              : `one file ${ratio(ours.one, one)}, split entry ${ratio(ours.split, split)} ours`;
        console.log(
          `${pad(side === "ours" ? `${program} (${platform})` : "", 24)}${pad(label, 18)}${pad(cell(one), 22)}${pad(cell(split), 22)}${pad(side === "ours" ? lazyCell(split) : "", 22)}${targets}`,
        );
        for (const [how, m] of [
          ["one file", one],
          ["split", split],
        ])
          if (m.failed) console.log(`  ${label}, ${program} for ${platform} (${how}): ${m.failed}`);
      }
      // What the one-file targets are up against: the same program with the detailed validators' tables left out,
      // which is only the code every run loads (the runtime, both revisions' guards and dispatch tables).
      if (TARGETS["one file"][program] !== undefined && platform === "node") {
        const floor = await measure(dir, `floor-${slug}`, sources.ours, platform, false, /validators\.js$/);
        console.log(
          `${pad("", 24)}${pad("mcpgen, floor", 18)}${pad(cell(floor), 22)}${pad("", 44)}one file without the validators' tables (not shippable: the bound for any explain path)`,
        );
      }
    }
  }
  // The bundles must also work: split, the lazy chunk has to load from beside the entry when a guard rejects; as one
  // file, the detailed validators are inside it.
  console.log("");
  for (const kind of ["split", "one file"])
    console.log(`smoke run of our bundled stdio client and server (${kind}): ${smoke(kind)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = missed === 0 ? 0 : 1;
