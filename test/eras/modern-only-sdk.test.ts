// An SDK generated from the 2026-07-28 schema alone: its client speaks that revision to a server of either kind.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { generate } from "../../generator/generate.js";
import { writeFiles } from "../../generator/files.js";
import { repoRoot, tempDir } from "../kit/paths.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { makeServer } from "../server/helpers.js";

const cleanup = closeAfterEach();
let dir: string;

beforeAll(async () => {
  dir = tempDir("modern-only-sdk");
  const { files } = await generate({
    schemaFile: join(repoRoot, "schema/2026-07-28/schema.json"),
    outDir: dir,
  });
  writeFiles(dir, files);
}, 60_000);

describe("an SDK generated from the 2026-07-28 schema alone", () => {
  it("connects to our dual-era server on 2026-07-28 (no initialize) and calls a tool", async () => {
    const { Client } = (await import(join(dir, "client.ts"))) as typeof import("../../generated/client.js");
    const server = makeServer();
    server.tool("hi", {}, () => "hello");
    const [clientEnd, serverEnd] = createInMemoryPair();
    await server.connect(serverEnd);
    const sent: string[] = [];
    const inner = clientEnd.send.bind(clientEnd);
    clientEnd.send = (message, options) => {
      if ("method" in message) sent.push(message.method);
      return inner(message, options);
    };
    const client = await Client.connect(clientEnd, { clientInfo: { name: "c", version: "1" } });
    cleanup(() => client.peer.close());
    expect(client.peer.era).toBe("modern");
    const result = await client.callTool({ name: "hi" });
    expect(result.content).toEqual([{ type: "text", text: "hello" }]);
    expect(sent).toEqual(["server/discover", "tools/call"]);
  });
});
