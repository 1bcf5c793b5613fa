// The tool the browser tests serve, from Node and from inside the page: progress, its SSE connection cut mid-call, more progress.
import type { McpServer } from "../../runtime/server/mcp-server.js";
import type { HttpServerTransport } from "../../runtime/transports/http/server/server.js";

/**
 * `count` reports progress 1 and 2, then has the server close the connection carrying its reply (the stream
 * stays open: the client must resume it with Last-Event-ID), then reports 3..n and answers `counted to n`.
 * `transports` maps session ids to their transports, filled by the server's onSession.
 */
export function addCountTool(server: McpServer, transports: ReadonlyMap<string, HttpServerTransport>): void {
  server.tool(
    "count",
    { inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
    async ({ n }, ctx) => {
      await ctx.progress(1, n);
      await ctx.progress(2, n);
      const transport = ctx.sessionId === undefined ? undefined : transports.get(ctx.sessionId);
      if (!transport) throw new Error("count needs a session to cut the stream of");
      await transport.closeSseStream(ctx.requestId);
      for (let i = 3; i <= n; i++) await ctx.progress(i, n);
      return `counted to ${n}`;
    },
  );
}
