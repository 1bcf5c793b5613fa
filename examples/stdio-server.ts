// Example: an MCP server over stdio built with mcpgen, ready for any MCP client (`npm run -s example:stdio-server`).
import { StdioServerTransport, TaskReceiver, createMcpServer } from "mcpgen";
import { addExampleTools } from "./tools.js";

// createMcpServer fills in the generated SDK's method tables: every message is checked against the MCP schema.
const server = createMcpServer({
  serverInfo: { name: "mcpgen-example", version: "1.0.0" },
  instructions:
    "Arithmetic, a slow counter and a greeting, to try tools, progress, cancellation, tasks and elicitation.",
  logging: true,
  // Runs tools clients call as tasks (slow_count allows it): tasks/get, tasks/result, tasks/list, tasks/cancel.
  tasks: new TaskReceiver(),
  // Send every progress update as it happens (by default they are spaced at least 50 ms apart).
  progressInterval: 0,
  // stdout carries the protocol; anything else goes to stderr.
  onerror: (error) => console.error("[example server]", error.message),
});

addExampleTools(server);

server.resource(
  "example://readme",
  { name: "readme", title: "About this server", mimeType: "text/markdown" },
  () => "# mcpgen example\n\nTools: `add`, `slow_count`, `greet`. Prompt: `explain_sum`.",
);

server.prompt(
  "explain_sum",
  {
    description: "Ask the model to explain a sum step by step",
    arguments: [
      { name: "a", required: true },
      { name: "b", required: true },
    ],
  },
  ({ a, b }) => `Explain, step by step, how to add ${a} and ${b}.`,
);

await server.connect(new StdioServerTransport());
