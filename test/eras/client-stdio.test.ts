// The client's probe on stdio: in place on the one child, and a second child only when the first exited on it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Client } from "../../generated/client.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { closeAfterEach } from "../kit/cleanup.js";

const cleanup = closeAfterEach();
const fixture = (name: string) => fileURLToPath(new URL(`../interop/fixtures/${name}`, import.meta.url));

describe("the stdio probe", () => {
  it("a server that exits on server/discover is started once more, for initialize, and no more", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpgen-probe-"));
    cleanup(() => rmSync(dir, { recursive: true, force: true }));
    const starts = join(dir, "starts");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixture("eras-count-starts.mjs"), fixture("eras-strict-server.mjs"), "exit"],
      env: { MCPGEN_STARTS: starts },
      stderr: "ignore",
    });
    const client = await Client.connect(transport, { clientInfo: { name: "c", version: "1" } });
    cleanup(() => client.peer.close());
    expect(client.peer.era).toBe("legacy");
    expect(await client.listTools()).toEqual({ tools: [] });
    expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(2);
  });
});
