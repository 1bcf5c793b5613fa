// One task node for the multi-node tests: an McpServer whose tools run as tasks (core and extension) on a shared (Redis) store.
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { revisionTables } from "../../generated/revisions.js";
import { McpServer } from "../../runtime/server/mcp-server.js";
import type { OperationStore } from "../../runtime/store/types.js";
import { TaskReceiver, type TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import type { InboundInfo, Transport } from "../../runtime/rpc/transport.js";

/**
 * Tools: `count` (steps of delayMs, statusMessage per step), `ask` (elicits a city, then reports progress) and
 * `hang` (runs until cancelled, says "running").
 */
/** An McpServer with its task receiver. */
export type TaskNode = McpServer & { readonly tasks: TaskReceiver };

export function taskNode(store: OperationStore, options: TaskReceiverOptions = {}): TaskNode {
  const server = new McpServer({
    serverInfo: { name: "task-node", version: "1" },
    progressInterval: 0,
    inbound: clientToServer,
    outbound: serverToClient,
    isMessage,
    // Both eras: core Tasks for 2025-11-25 clients, the Tasks extension for 2026-07-28 ones.
    revisions: revisionTables,
    tasks: new TaskReceiver({ maxTtlMs: 60_000, pollIntervalMs: 50, ...options, store }),
  });
  server.tool(
    "count",
    {
      taskSupport: "optional",
      inputSchema: {
        type: "object",
        properties: { steps: { type: "number" }, delayMs: { type: "number" } },
        required: ["steps", "delayMs"],
      },
    },
    async ({ steps, delayMs }, ctx) => {
      for (let i = 1; i <= steps; i++) {
        await pause(delayMs, ctx.signal);
        ctx.task?.status(`step ${i} of ${steps}`);
      }
      return `counted ${steps}`;
    },
  );
  server.tool("ask", { taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Which city?",
      requestedSchema: { type: "object", properties: { city: { type: "string" } } },
    });
    await ctx.progress(1, 1, "answered");
    return `city: ${String(answer.content?.city)}`;
  });
  server.tool("hang", { taskSupport: "optional" }, async (_args, ctx) => {
    ctx.task?.status("running");
    await pause(Infinity, ctx.signal);
    return "never";
  });
  return server as TaskNode;
}

/** Resolves after `ms` or once `signal` aborts (then rejects with its reason). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done() {
      signal.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      if (timer !== undefined) clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", aborted, { once: true });
  });
}

/** Hands every message on with `principal` attached, as an authenticating HTTP transport would. */
export class AsPrincipal implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    private readonly inner: Transport,
    private readonly principal: string,
  ) {}

  start(): Promise<void> {
    this.inner.onmessage = (m, info) => this.onmessage?.(m, { ...info, principal: this.principal });
    this.inner.onmalformed = (e, info) => this.onmalformed?.(e, info);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }
  send(...args: Parameters<Transport["send"]>): Promise<void> {
    return this.inner.send(...args);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
