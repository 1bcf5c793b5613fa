// The HTTP client and the fetch handler bundle for the browser: no node:* module anywhere in their import graphs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../kit/paths.js";
import { bundleForBrowser, source } from "./helpers.js";

/** Minimal programs as a web app or a worker would write them, with the modules their graphs must reach. */
const PROGRAMS = {
  "HTTP client with the typed Client": {
    program: `import { Client } from ${source("generated/index.ts")};
import { StreamableHttpClientTransport } from ${source("runtime/web.ts")};
const client = await Client.connect(new StreamableHttpClientTransport({ url: "http://127.0.0.1:3000/mcp" }), { clientInfo: { name: "c", version: "1" } });
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }, { onProgress: console.log }));
`,
    reaches: [
      "runtime/transports/http/client/transport.ts",
      "runtime/transports/http/client/fetch-requester.ts",
      "runtime/transports/http/sse.ts",
      "generated/client.ts",
      // The detailed validators come in a one-file bundle too: the table and its interpreter, from the web entry.
      "generated/validators.ts",
      "runtime/validation/explain.ts",
    ],
  },
  "fetch handler with McpServer": {
    program: `import { createMcpServer } from ${source("generated/index.ts")};
import { createStreamableHttpServer, InMemoryEventStore } from ${source("runtime/web.ts")};
const server = createMcpServer({ serverInfo: { name: "s", version: "1" } });
server.tool("add", { inputSchema: { type: "object" } }, () => "5");
const mcp = createStreamableHttpServer({
  eventStore: new InMemoryEventStore(),
  cors: { allowedOrigins: ["https://app.example"] },
  allowedHosts: ["mcp.example"],
  onSession: (transport) => server.connect(transport),
});
globalThis.handle = (request) => mcp.fetch(request);
`,
    reaches: [
      "runtime/transports/http/server/server.ts",
      "runtime/transports/http/server/exchange.ts",
      "runtime/transports/http/server/cors.ts",
      "runtime/server/mcp-server.ts",
      "generated/validators.ts",
      "runtime/validation/explain.ts",
    ],
  },
};

describe("bundles for the browser (--platform=browser)", () => {
  it.each(Object.keys(PROGRAMS) as (keyof typeof PROGRAMS)[])(
    "%s: builds, and no node:* module is in its graph",
    async (name) => {
      const { program, reaches } = PROGRAMS[name];
      const { code, inputs } = await bundleForBrowser(program);
      expect(inputs.filter((input) => input.startsWith("node:"))).toEqual([]);
      for (const module of reaches) expect(inputs).toContain(module);
      expect(code.length).toBeGreaterThan(0);
    },
    60_000,
  );

  it("the whole web entry builds with no node:* module, while the Node entry still holds the Node-only transports", async () => {
    const web = await bundleForBrowser(`export * from ${source("runtime/web.ts")};`);
    expect(web.inputs.filter((input) => input.startsWith("node:"))).toEqual([]);
    const node = readFileSync(join(repoRoot, "runtime/index.ts"), "utf8");
    expect(node).toContain('export * from "./web.js";');
    await expect(bundleForBrowser(`export * from ${source("runtime/index.ts")};`)).rejects.toThrow(/node:/);
  }, 60_000);
});

describe("package exports for browsers and workers", () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "packages/mcpgen/package.json"), "utf8")) as {
    exports: Record<string, Record<string, string>>;
  };

  it("mcpgen/web is the runtime's Node-free entry, and mcpgen/runtime resolves to it under the browser condition", () => {
    expect(pkg.exports["./web"]).toEqual({ types: "./dist/runtime/web.d.ts", default: "./dist/runtime/web.js" });
    const runtime = pkg.exports["./runtime"]!;
    expect(runtime.browser).toBe("./dist/runtime/web.js");
    // Conditions are tried in order: types first, and browser before the Node default.
    expect(Object.keys(runtime)).toEqual(["types", "browser", "default"]);
  });
});
