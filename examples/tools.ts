// The example tools both example servers offer: `add` and `slow_count` (progress, cancellation, tasks).
import type { McpServer } from "mcpgen";

export function addExampleTools(server: McpServer): void {
  server.tool(
    "add",
    {
      title: "Add two numbers",
      description: "Returns a + b as text.",
      inputSchema: {
        type: "object",
        properties: {
          a: { type: "number", description: "First addend" },
          b: { type: "number", description: "Second addend" },
        },
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
      description:
        "Sends `count` progress notifications `delayMs` apart, then returns `done <count>`. Can be cancelled.",
      inputSchema: {
        type: "object",
        properties: {
          count: { type: "integer", description: "How many steps" },
          delayMs: { type: "number", description: "Milliseconds between steps" },
        },
        required: ["count", "delayMs"],
      },
      // Clients may also call it as a task (tasks/get, tasks/result, tasks/list, tasks/cancel).
      taskSupport: "optional",
      immediateResponse: ({ count }) => `Counting to ${String(count)}; the result follows when the task completes.`,
    },
    async ({ count, delayMs }, ctx) => {
      for (let i = 1; i <= count; i++) {
        await sleep(delayMs, ctx.signal);
        await ctx.progress(i, count, `step ${i} of ${count}`);
        ctx.task?.status(`step ${i} of ${count}`);
      }
      await ctx.log("info", `counted to ${count}`, "slow_count");
      return `done ${count}`;
    },
  );
}

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
