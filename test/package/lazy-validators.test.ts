// The detailed validators load on demand: bundles keep them out of the entry chunk, and the wire still gets JSON-pointer details.
import { writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { build, type Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import { clientToServer, serverToClient } from "../../generated/dispatch.js";
import { InvalidResultError } from "../../runtime/rpc/errors.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { Session, type SessionDebugEvent } from "../../runtime/rpc/session/session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { repoRoot, tempDir } from "../kit/paths.js";
import { rawPeer, toolsCallSpec } from "../runtime/helpers.js";
import { until } from "../kit/timing.js";

const sdk = join(repoRoot, "generated/sdk.js");
const validators = "generated/validators.ts";

/** Minimal programs over the generated SDK, as an app would write them. */
const PROGRAMS = {
  "stdio client": `import { Client, StdioClientTransport } from ${JSON.stringify(sdk)};
const client = await Client.connect(new StdioClientTransport({ command: "node", args: ["server.js"] }), { clientInfo: { name: "c", version: "1" } });
console.log(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }));
`,
  "stdio server": `import { StdioServerTransport, createMcpServer } from ${JSON.stringify(sdk)};
const server = createMcpServer({ serverInfo: { name: "s", version: "1" } });
server.tool("add", { inputSchema: { type: "object" } }, () => "5");
await server.connect(new StdioServerTransport());
`,
};

/** Source files in the chunks a program loads at start (entry and its static imports), and in the others. */
function chunkInputs(metafile: Metafile): { eager: Set<string>; lazy: Set<string> } {
  const key = (path: string) => relative(repoRoot, resolve(repoRoot, path));
  const outputs = metafile.outputs;
  const eagerChunks = new Set<string>();
  const visit = (k: string): void => {
    if (eagerChunks.has(k)) return;
    eagerChunks.add(k);
    for (const i of outputs[k]!.imports) if (i.kind === "import-statement" && !i.external) visit(key(i.path));
  };
  visit(Object.keys(outputs).find((k) => outputs[k]!.entryPoint !== undefined)!);
  const eager = new Set<string>();
  const lazy = new Set<string>();
  for (const [k, output] of Object.entries(outputs))
    for (const input of Object.keys(output.inputs)) (eagerChunks.has(k) ? eager : lazy).add(key(input));
  return { eager, lazy };
}

describe("bundles of the generated SDK", () => {
  it.each(Object.keys(PROGRAMS) as (keyof typeof PROGRAMS)[])(
    "a minimal %s loads the detailed validators only through a chunk of their own",
    async (name) => {
      const dir = tempDir("bundle");
      const entry = join(dir, "main.mjs");
      writeFileSync(entry, PROGRAMS[name]);
      const { metafile } = await build({
        entryPoints: [entry],
        bundle: true,
        format: "esm",
        splitting: true,
        platform: "node",
        outdir: join(dir, "out"),
        metafile: true,
        write: false,
        logLevel: "silent",
      });
      const { eager, lazy } = chunkInputs(metafile);
      expect({ eager: eager.has(validators), lazy: lazy.has(validators) }).toEqual({ eager: false, lazy: true });
      expect(eager.has("generated/guards.ts")).toBe(true);
    },
    60_000,
  );
});

describe("errors from the lazily loaded validators", () => {
  const ok = { content: [] };

  it("-32602 for params failing the generated guard carries JSON-pointer issues, and the session goes on", async () => {
    const peer = await rawPeer({ inbound: clientToServer, outbound: serverToClient });
    peer.server.onRequest("tools/call", () => ok);
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 7 } });
    expect(await peer.next()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: "Invalid params for tools/call",
        data: { errors: [{ pointer: "/name", message: "must be string" }] },
      },
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add" } });
    expect(await peer.next()).toEqual({ jsonrpc: "2.0", id: 2, result: ok });
  });

  it("a notification failing its guard is dropped and reported to ondebug with its issues", async () => {
    const events: SessionDebugEvent[] = [];
    const peer = await rawPeer({ inbound: clientToServer, outbound: serverToClient, ondebug: (e) => events.push(e) });
    let delivered = false;
    peer.server.onNotification("notifications/roots/list_changed", () => {
      delivered = true;
    });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: { no: 1 } } });
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await until(() => events.length > 0 && delivered);
    expect(events).toEqual([
      {
        kind: "invalid-notification-params",
        method: "notifications/cancelled",
        detail: [expect.objectContaining({ pointer: "/requestId" })],
      },
    ]);
  });

  it("a result failing the generated result guard rejects the call with InvalidResultError and its issues", async () => {
    const [clientEnd, raw] = createInMemoryPair();
    raw.onmessage = (m) => {
      const id = (m as JsonObject).id as number;
      void raw.send({ jsonrpc: "2.0", id, result: { tools: [{ name: "no-schema" }] } });
    };
    await raw.start();
    const client = new Session({ inbound: serverToClient, outbound: clientToServer });
    await client.connect(clientEnd);
    const error = await client.request("tools/list", undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResultError);
    expect((error as InvalidResultError).issues).toEqual([
      { pointer: "/tools/0", message: 'missing required property "inputSchema"' },
    ]);
    await client.close();
  });

  it("when the validators cannot be loaded the peer still gets -32602, saying why", async () => {
    const unloadable = { ...toolsCallSpec, explainParams: () => Promise.reject(new Error("chunk missing")) };
    const peer = await rawPeer({ inbound: { "tools/call": unloadable } });
    peer.server.onRequest("tools/call", () => ok);
    peer.serverEnd.receiveRaw({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5 } });
    expect(await peer.next()).toMatchObject({
      id: 1,
      error: {
        code: -32602,
        data: { errors: [{ pointer: "", message: "does not match the schema (details unavailable: chunk missing)" }] },
      },
    });
  });
});
