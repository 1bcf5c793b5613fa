// A ClientSession with `extensions: [resumableClient()]` against the official SDK's McpServer (stdio): it works as a plain client.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient, resumerOf } from "../../runtime/eras/2025-11-25/resumable/client.js";

const sdkServer = fileURLToPath(new URL("../interop/fixtures/sdk-server.mjs", import.meta.url));

describe("resumable client against the official SDK server", () => {
  it("initializes, calls tools with progress and gets results unchanged; nothing is resumable, nothing lingers", async () => {
    const client = clientSession({
      clientInfo: { name: "resumable-interop", version: "1" },
      extensions: [resumableClient()],
    });
    const unexpected: unknown[] = [];
    client.onNotification("notifications/requests/resumePolicy", (p) => void unexpected.push(p));
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [sdkServer], cwd: process.cwd() }),
    );
    try {
      // The SDK server accepts the capability it does not know and does not advertise one back.
      expect(client.capabilities.resumableRequests).toEqual({});
      expect(client.serverInfo?.name).toBe("sdk-fixture");
      expect(client.serverCapabilities?.resumableRequests).toBeUndefined();

      const progress: number[] = [];
      const calls = [
        client.request(
          "tools/call",
          { name: "slow_count", arguments: { count: 4, delayMs: 5 } },
          { onProgress: (p) => progress.push(p.progress) },
        ),
        client.request("tools/call", { name: "add", arguments: { a: 2, b: 3 } }),
      ];
      const [counted, added] = await Promise.all(calls);
      expect(counted.content).toEqual([{ type: "text", text: "done 4" }]);
      expect(added.content).toEqual([{ type: "text", text: "5" }]);
      expect(progress).toEqual([1, 2, 3, 4]);

      // A cancelled call is cancelled on the SDK server as usual.
      const controller = new AbortController();
      const slow = client.request(
        "tools/call",
        { name: "slow_count", arguments: { count: 100, delayMs: 20 } },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort("enough"), 50);
      await expect(slow).rejects.toThrow();

      expect(unexpected).toEqual([]);
      expect(resumerOf(client)!.stats.policies).toBe(0);
      expect(resumerOf(client)!.pending()).toEqual([]);
      expect(client.operations.outbound.size).toBe(0);
    } finally {
      await client.close();
    }
  });
});
