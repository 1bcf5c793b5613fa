// Benchmark: bundle size of minimal programs, mcpgen vs the official SDK side by side (needs `npm run build` first).
//
//   node bench/bundle.js            every program, then a smoke run of our stdio bundles
//
// Each program is bundled by esbuild (minified, ESM, code splitting) and measured as it loads: the entry chunk
// plus every chunk it imports statically is what a program loads on the happy path ("entry"); chunks reached
// only through a dynamic import() (our detailed validators, loaded when a message fails its guard) are "lazy".
// Platform node for the stdio programs; the HTTP client for node and the browser, and the HTTP server as a
// fetch handler (a worker or edge function) for the browser. A build that fails is reported as such. In a
// browser our programs import the typed SDK from mcpgen/generated and the runtime from mcpgen/web: "mcpgen"
// also carries the Node-only transports. Targets: our stdio client at most 12 KB gzip, our stdio server at most 15 KB gzip (entry, gzip -9).
// The smoke run starts our bundled server from our bundled client, calls a tool, and sends params that fail the
// guard, so the lazy chunk must load and the -32602 error must carry JSON-pointer details.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const KB = 1000;
const TARGETS = { "stdio client": 12 * KB, "stdio server": 15 * KB };

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
    sdk: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
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
    sdk: `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
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
    sdk: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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
    sdk: `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
const server = new McpServer({ name: "s", version: "1" });
server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
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

/** Bundles one program; returns entry and lazy sizes (raw and gzip), or the first error when the build fails. */
async function measure(dir, name, source, platform) {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  const outdir = join(dir, `out-${name}-${platform}`);
  let result;
  try {
    result = await build({
      entryPoints: [file],
      bundle: true,
      minify: true,
      format: "esm",
      splitting: true,
      platform,
      target: platform === "node" ? "node20" : "es2022",
      outdir,
      metafile: true,
      logLevel: "silent",
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
const built = {};
try {
  console.log("entry: the entry chunk and the chunks it imports statically, what a program loads on the happy path;");
  console.log(
    "lazy: chunks reached only through import(), loaded when a message fails its guard. KB = 1000 bytes, gzip -9.\n",
  );
  console.log(
    `${pad("program", 24)}${pad("mcpgen entry (gzip)", 26)}${pad("mcpgen lazy (gzip)", 24)}${pad("official SDK (gzip)", 26)}${pad("gzip ratio", 16)}target`,
  );
  for (const [program, sources] of Object.entries(PROGRAMS)) {
    for (const platform of PLATFORMS[program]) {
      const slug = program.replace(/\W+/g, "-");
      const ours = await measure(
        dir,
        `ours-${slug}`,
        (platform === "browser" && sources.oursBrowser) || sources.ours,
        platform,
      );
      const sdk = await measure(dir, `sdk-${slug}`, sources.sdk, platform);
      if (platform === "node") built[program] = ours.file;
      const cell = (m) => (m.failed ? "build fails" : `${fmt(m.entry.bytes)} (${fmt(m.entry.gzip)})`);
      const lazy = ours.failed
        ? "-"
        : ours.lazy.bytes === 0
          ? "none"
          : `${fmt(ours.lazy.bytes)} (${fmt(ours.lazy.gzip)})`;
      const ratio = ours.failed || sdk.failed ? "-" : `${(sdk.entry.gzip / ours.entry.gzip).toFixed(1)}x smaller`;
      const target = TARGETS[program];
      let verdict = "";
      if (target !== undefined && platform === "node") {
        const met = !ours.failed && ours.entry.gzip <= target;
        if (!met) missed++;
        verdict = `${met ? "meets" : "MISSES"} ${fmt(target)} gzip`;
      }
      console.log(
        `${pad(`${program} (${platform})`, 24)}${pad(cell(ours), 26)}${pad(lazy, 24)}${pad(cell(sdk), 26)}${pad(ratio, 16)}${verdict}`,
      );
      for (const [side, m] of [
        ["mcpgen", ours],
        ["official SDK", sdk],
      ])
        if (m.failed) console.log(`  ${side}, ${program} for ${platform}: ${m.failed}`);
    }
  }

  // The bundles must also work: the lazy chunk has to load from beside the entry when a guard rejects.
  const run = spawnSync(process.execPath, [built["stdio client"], built["stdio server"]], {
    encoding: "utf8",
    timeout: 30_000,
  });
  let smoke = "failed";
  try {
    const { sum, invalid } = JSON.parse(run.stdout);
    const detailed =
      invalid?.code === -32602 &&
      Array.isArray(invalid.data?.errors) &&
      invalid.data.errors.some((e) => e.pointer === "/name");
    if (sum?.content?.[0]?.text === "5" && detailed) smoke = "ok: tool call answered, -32602 carries the pointer /name";
  } catch {
    // reported below with the process's output
  }
  console.log(`\nsmoke run of our bundled stdio client and server: ${smoke}`);
  if (smoke === "failed") {
    console.log(run.stdout, run.stderr);
    missed++;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = missed === 0 ? 0 : 1;
