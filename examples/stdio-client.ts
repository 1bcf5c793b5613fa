// Example: an MCP client built with mcpgen that starts the example stdio server and uses it (`npm run -s example:stdio-client`).
import { fileURLToPath } from "node:url";
import { Client, RequestCancelledError, StdioClientTransport } from "mcpgen";

const serverScript = fileURLToPath(new URL("./stdio-server.js", import.meta.url));
const transport = new StdioClientTransport({ command: process.execPath, args: [serverScript] });
const client = await Client.connect(transport, { clientInfo: { name: "mcpgen-example-client", version: "1.0.0" } });
client.onLoggingMessage(({ level, logger, data }) =>
  console.log(`log ${level}${logger ? ` [${logger}]` : ""}: ${String(data)}`),
);

try {
  console.log(`connected to ${client.peer.serverInfo?.name} (protocol ${client.peer.protocolVersion})`);
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(", ")}`);

  const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
  console.log(`add(2, 3) = ${textOf(sum.content)}`);

  const counted = await client.callTool(
    { name: "slow_count", arguments: { count: 3, delayMs: 50 } },
    { onProgress: ({ progress, total, message }) => console.log(`progress ${progress}/${total}: ${message}`) },
  );
  console.log(`slow_count: ${textOf(counted.content)}`);

  // Cancel a long count a moment after it started. It takes two seconds, so the server runs it as a task (the Tasks
  // extension on 2026-07-28): the client follows the task, and aborting sends tasks/cancel.
  const controller = new AbortController();
  const long = client.callTool(
    { name: "slow_count", arguments: { count: 100, delayMs: 20 } },
    { signal: controller.signal },
  );
  setTimeout(() => controller.abort("changed my mind"), 200);
  const outcome = await long.then(
    () => "finished",
    (error: unknown) => (error instanceof RequestCancelledError ? "cancelled" : `failed: ${String(error)}`),
  );
  console.log(`long slow_count: ${outcome}`);
  if (outcome !== "cancelled") process.exitCode = 1;
} finally {
  await client.peer.close();
}

function textOf(content: readonly { type: string }[]): string {
  return content.map((block) => ("text" in block ? String(block.text) : `[${block.type}]`)).join("");
}
