// @opentelemetry/api stays an optional peer: no runtime module imports it, so an app without it bundles none of it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../kit/paths.js";

/** The modules esbuild put in a bundle of `program` (written as if it sat at the repository's root). */
async function bundledInputs(program: string, platform: "node" | "browser"): Promise<string[]> {
  const result = await build({
    stdin: { contents: program, resolveDir: repoRoot, sourcefile: "app.ts", loader: "ts" },
    bundle: true,
    platform,
    format: "esm",
    target: platform === "node" ? "node20" : "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    external: ["ioredis"],
  });
  return Object.keys(result.metafile.inputs);
}

const OTEL = /@opentelemetry[\\/]/;

/** A client and a server of the generated SDK, talking in memory, with tracing options but no OpenTelemetry. */
const APP = `
import { Client } from "./generated/client.ts";
import { createMcpServer } from "./generated/server.ts";
import { createInMemoryPair, readTraceContext } from "./runtime/web.ts";
const server = createMcpServer({ serverInfo: { name: "s", version: "1" }, telemetry: { maxBaggageBytes: 4096 } });
server.tool("echo", {}, (_args, ctx) => JSON.stringify(ctx.trace ?? null));
const [a, b] = createInMemoryPair();
await server.connect(b);
const client = await Client.connect(a, { clientInfo: { name: "c", version: "1" } });
console.log(await client.callTool({ name: "echo", arguments: {}, _meta: { baggage: "k=v" } }), readTraceContext({}));
`;

/** A module's code without its comments (whose examples may show the app importing the package). */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? typeScriptFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("@opentelemetry/api is an optional peer", () => {
  it.each(["node", "browser"] as const)(
    "a %s bundle of a client and server with no telemetry API holds none of it",
    async (platform) => {
      const inputs = await bundledInputs(APP, platform);
      expect(inputs.some((path) => path.includes("runtime/mcp/telemetry.ts"))).toBe(true);
      expect(inputs.filter((path) => OTEL.test(path))).toEqual([]);
    },
  );

  it("the whole of each public entry holds none of it", async () => {
    for (const [entry, platform] of [
      ["./runtime/index.ts", "node"],
      ["./runtime/web.ts", "browser"],
    ] as const) {
      const inputs = await bundledInputs(`export * from ${JSON.stringify(entry)};`, platform);
      expect(
        inputs.filter((path) => OTEL.test(path)),
        entry,
      ).toEqual([]);
    }
  });

  it("the check sees the package when a program does import it", async () => {
    const inputs = await bundledInputs(`import { trace } from "@opentelemetry/api"; console.log(trace);`, "node");
    expect(inputs.some((path) => OTEL.test(path))).toBe(true);
  });

  it("no runtime module imports it, not even its types (the published .d.ts must not name it)", () => {
    const importing =
      /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']@opentelemetry\/|\bimport\s*\(\s*["']@opentelemetry\//m;
    const offenders = typeScriptFiles(join(repoRoot, "runtime"))
      .filter((path) => importing.test(code(readFileSync(path, "utf8"))))
      .map((path) => relative(repoRoot, path));
    expect(offenders).toEqual([]);
    expect(importing.test('import type { Span } from "@opentelemetry/api";')).toBe(true);
    expect(importing.test('const api = await import("@opentelemetry/api");')).toBe(true);
  });
});
