// The HTTP example server: slow_count is resumable for clients that advertise it, and callable with tools/async/call.
import { describe, expect, it } from "vitest";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { callToolAsync } from "../../runtime/eras/2025-11-25/async-tools/client.js";
import { startExampleHttpServer } from "../../examples/http-server.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";

describe("examples/http-server.ts", () => {
  it("advertises async, makes slow_count resumable and runs it with tools/async/call", async () => {
    const running = await startExampleHttpServer(0);
    try {
      const client = clientSession({
        clientInfo: { name: "example-test", version: "1" },
        extensions: [resumableClient()],
      });
      const policies: unknown[] = [];
      client.onNotification("notifications/requests/resumePolicy", (p) => void policies.push(p));
      await client.connect(new StreamableHttpClientTransport({ url: running.url }));
      expect(client.serverCapabilities?.async).toBeDefined();
      const seen: number[] = [];
      const result = await client.request(
        "tools/call",
        { name: "slow_count", arguments: { count: 3, delayMs: 1 } },
        { onProgress: (p) => seen.push(p.progress) },
      );
      expect(result.content).toEqual([{ type: "text", text: "done 3" }]);
      expect(seen).toEqual([1, 2, 3]);
      expect(policies).toHaveLength(1);
      const handle = await callToolAsync(client, "slow_count", { count: 2, delayMs: 1 });
      expect((await handle.result()).content).toEqual([{ type: "text", text: "done 2" }]);
      await client.close();
    } finally {
      await running.stop();
    }
  });
});
