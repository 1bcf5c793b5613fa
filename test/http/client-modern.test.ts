// Our client on MCP 2026-07-28 over Streamable HTTP against our server: one POST per request with the mirrored
// headers, no session and no GET stream, input rounds, progress, cancellation by closing the request's stream.
import { describe, expect, it } from "vitest";
import { Client } from "../../generated/client.js";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import { listenHttp } from "../../runtime/transports/http/server/listen.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import { makeServer } from "../server/helpers.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";

const cleanup = closeAfterEach();

interface Seen {
  method: string;
  headers: Record<string, string | undefined>;
}

async function served() {
  const server = makeServer({ progressInterval: 0 });
  let aborted = 0;
  server.tool(
    "add",
    { inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
    (args) => String((args as { a: number }).a + (args as { b: number }).b),
  );
  server.tool("ask", {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ message: "name?", requestedSchema: { type: "object", properties: {} } });
    return `hello ${String(answer.content?.name)}`;
  });
  server.tool("slow", {}, async (_args, ctx) => {
    for (let i = 1; i <= 100; i++) {
      await ctx.progress(i, 100);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (ctx.signal.aborted) {
        aborted++;
        throw ctx.signal.reason;
      }
    }
    return "done";
  });
  const seen: Seen[] = [];
  const mcp = createStreamableHttpServer({ onSession: (t) => server.connect(t).then(() => undefined) });
  const listening = await listenHttp(
    (req, res) => {
      if (req.method !== "POST") seen.push({ method: req.method ?? "", headers: {} });
      else
        seen.push({
          method: String(req.headers["mcp-method"] ?? "(none)"),
          headers: {
            version: req.headers["mcp-protocol-version"] as string | undefined,
            name: req.headers["mcp-name"] as string | undefined,
            session: req.headers["mcp-session-id"] as string | undefined,
          },
        });
      mcp.nodeListener(req, res);
    },
    { host: "127.0.0.1", port: 0 },
  );
  cleanup(async () => {
    await mcp.close();
    await listening.close();
  });
  return { url: `${listening.origin}/mcp`, seen, aborted: () => aborted };
}

describe("the client on 2026-07-28 over Streamable HTTP", () => {
  it("one POST per request with its headers, no session, no GET; input rounds, progress, cancellation", async () => {
    const { url, seen, aborted } = await served();
    const transport = new StreamableHttpClientTransport({ url });
    const client = await Client.connect(transport, {
      clientInfo: { name: "c", version: "1" },
      capabilities: { elicitation: {} },
    });
    cleanup(() => client.peer.close());
    client.onElicit(() => ({ action: "accept", content: { name: "Ada" } }));
    expect(client.peer.era).toBe("modern");
    expect(transport.sessionId).toBeUndefined();

    expect((await client.callTool({ name: "add", arguments: { a: 1, b: 2 } })).content).toEqual([
      { type: "text", text: "3" },
    ]);
    expect((await client.callTool({ name: "ask" })).content).toEqual([{ type: "text", text: "hello Ada" }]);

    const controller = new AbortController();
    const progress: number[] = [];
    const slow = client.callTool(
      { name: "slow" },
      {
        signal: controller.signal,
        onProgress: (p) => {
          progress.push(p.progress);
          if (p.progress === 3) controller.abort("enough");
        },
      },
    );
    await expect(slow).rejects.toBeInstanceOf(RequestCancelledError);
    await until(() => aborted() === 1);
    expect(progress.slice(0, 3)).toEqual([1, 2, 3]);

    expect(seen.map((s) => s.method)).toEqual([
      "server/discover",
      "tools/call",
      "tools/call",
      "tools/call",
      "tools/call",
    ]);
    expect(seen.every((s) => s.headers.version === "2026-07-28" && s.headers.session === undefined)).toBe(true);
    expect(seen.slice(1).map((s) => s.headers.name)).toEqual(["add", "ask", "ask", "slow"]);
  });
});
