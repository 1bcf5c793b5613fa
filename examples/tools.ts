// The example tools both example servers offer: `add`, `slow_count` (progress, cancellation, tasks) and `greet` (elicitation).
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
      // A task where the client takes one: a 2025-11-25 client asks for it (tasks/get, tasks/result, tasks/list,
      // tasks/cancel); for a 2026-07-28 client declaring the Tasks extension the server decides (below) and the client
      // polls tasks/get. One registration serves both.
      taskSupport: "optional",
      taskStart: "handler",
      immediateResponse: ({ count }) => `Counting to ${String(count)}; the result follows when the task completes.`,
    },
    async ({ count, delayMs }, ctx) => {
      // A count of a second or more outlives what a client should wait on one request for: it goes on as a task
      // (a no-op where it already is one, or where the client cannot take one). Shorter counts answer directly.
      if (count * delayMs >= 1000) await ctx.startTask();
      for (let i = 1; i <= count; i++) {
        await sleep(delayMs, ctx.signal);
        await ctx.progress(i, count, `step ${i} of ${count}`);
        ctx.task?.status(`step ${i} of ${count}`);
      }
      await ctx.log("info", `counted to ${count}`, "slow_count");
      return `done ${count}`;
    },
  );

  server.tool(
    "greet",
    {
      title: "Greet the user",
      description:
        "Asks the user's name (elicitation), then sends `steps` progress notifications and returns `hello <name>`.",
      inputSchema: {
        type: "object",
        properties: { steps: { type: "integer", description: "Progress steps after the answer (default 2)" } },
      },
    },
    async ({ steps = 2 }, ctx) => {
      // The question comes first: an MCP 2026-07-28 client answers it by calling again, and the handler then runs
      // again from the start, so work placed after the answer (the progress here) runs once.
      const answer = await ctx.elicit({
        message: "What is your name?",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string", description: "Your name" } },
          required: ["name"],
        },
      });
      if (answer.action !== "accept") return `no name given (${answer.action})`;
      for (let i = 1; i <= steps; i++) await ctx.progress(i, steps, `greeting ${i} of ${steps}`);
      return `hello ${String(answer.content?.name)}`;
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
