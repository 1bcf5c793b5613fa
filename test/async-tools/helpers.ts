// Test helpers for async tool calls: gates a tool waits on, a counting tool, sessions over in-memory links.
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import type { AsyncTools } from "../../runtime/eras/2025-11-25/async-tools/server.js";
import { connectedPair, type ConnectedPair } from "../kit/mcp-sessions.js";

import { gate, type Gate } from "../kit/timing.js";

export { gate, type Gate };

/**
 * A tool reporting `arguments.steps` (default 3) progress values, each after the test opens that step's gate
 * (gates[i]), or at once without gates; with `arguments.hold`, it first waits for the gate named by it.
 */
export function makeTools(
  gates: Gate[] = [],
  aborted: { value: boolean } = { value: false },
  held: Map<string, Gate> = new Map(),
) {
  return async (params: JsonObject, ctx: RequestContext): Promise<JsonObject> => {
    const args = (params.arguments as JsonObject | undefined) ?? {};
    const steps = Number(args.steps ?? 3);
    ctx.signal.addEventListener("abort", () => (aborted.value = true));
    if (typeof args.hold === "string") await held.get(args.hold)?.promise;
    for (let i = 1; i <= steps; i++) {
      if (gates[i] !== undefined) await gates[i].promise;
      if (ctx.signal.aborted) throw new Error("aborted");
      await ctx.progress(i, steps);
    }
    return { content: [{ type: "text", text: `done ${steps}` }] };
  };
}

/**
 * A server session with `tools` installed (and a plain tools/call), and a client connected to it in memory;
 * the server end tags every message with `principal`.
 */
export function connect(tools: AsyncTools | undefined, principal?: string): Promise<ConnectedPair> {
  return connectedPair({
    server: { serverInfo: { name: "async", version: "1" }, capabilities: { tools: {} } },
    client: { clientInfo: { name: "c", version: "1" } },
    ...(principal === undefined ? {} : { serverInfo: { principal } }),
    setup: (server) => {
      tools?.install(server);
      server.onRequest("tools/call", async (params, ctx) => makeTools()(params ?? {}, ctx));
    },
  });
}
