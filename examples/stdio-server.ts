// Example: an MCP server over stdio built with mcpgen, ready for any MCP client (`npm run -s example:stdio-server`).
import { McpServer, StdioServerTransport, clientToServer, isMessage, serverToClient } from "mcpgen";

const server = new McpServer({
  serverInfo: { name: "mcpgen-example", version: "1.0.0" },
  instructions: "Arithmetic and a slow counter, to try tools, progress and cancellation.",
  // The generated SDK's method tables: every message is checked against the MCP schema.
  inbound: clientToServer,
  outbound: serverToClient,
  isMessage,
  logging: true,
  // Send every progress update as it happens (by default they are spaced at least 50 ms apart).
  progressInterval: 0,
  // stdout carries the protocol; anything else goes to stderr.
  onerror: (error) => console.error("[example server]", error.message),
});

server.tool(
  "add",
  {
    title: "Add two numbers",
    description: "Returns a + b as text.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number", description: "First addend" }, b: { type: "number", description: "Second addend" } },
      required: ["a", "b"],
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  ({ a, b }) => String(a + b),
);

server.tool(
  "slow_count",
  {
    title: "Count slowly",
    description: "Sends `count` progress notifications `delayMs` apart, then returns `done <count>`. Can be cancelled.",
    inputSchema: {
      type: "object",
      properties: {
        count: { type: "integer", description: "How many steps" },
        delayMs: { type: "number", description: "Milliseconds between steps" },
      },
      required: ["count", "delayMs"],
    },
  },
  async ({ count, delayMs }, ctx) => {
    for (let i = 1; i <= count; i++) {
      await sleep(delayMs, ctx.signal);
      await ctx.progress(i, count, `step ${i} of ${count}`);
    }
    await ctx.log("info", `counted to ${count}`, "slow_count");
    return `done ${count}`;
  },
);

server.resource(
  "example://readme",
  { name: "readme", title: "About this server", mimeType: "text/markdown" },
  () => "# mcpgen example\n\nTools: `add`, `slow_count`. Prompt: `explain_sum`.",
);

server.prompt(
  "explain_sum",
  { description: "Ask the model to explain a sum step by step", arguments: [{ name: "a", required: true }, { name: "b", required: true }] },
  ({ a, b }) => `Explain, step by step, how to add ${a} and ${b}.`,
);

/** Resolves after `ms`, or rejects as soon as `signal` aborts (the client cancelled or went away). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

await server.connect(new StdioServerTransport());
