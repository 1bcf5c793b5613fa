// Interop over stdio with real child processes: the official SDK client against our server, our client against an SDK server.
import { fileURLToPath } from "node:url";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as SdkStdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { Client } from "../../generated/client.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep } from "../kit/timing.js";
import { PROGRESS_SPACING_MS, expectProgressPrefix } from "./progress.js";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const exampleServer = fileURLToPath(new URL("../../dist/examples/stdio-server.js", import.meta.url));

const cleanup = closeAfterEach();

function text(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((c) => c.text ?? "").join("");
}

/** Poll a tool until it reports `expected` (the server learns of a cancellation asynchronously). */
async function eventuallyText(call: () => Promise<string>, expected: string): Promise<void> {
  const deadline = Date.now() + 3000;
  let last = "";
  while (Date.now() < deadline) {
    last = await call();
    if (last === expected) return;
    await sleep(20);
  }
  expect(last).toBe(expected);
}

describe("official SDK client -> our server (child process)", () => {
  async function sdkClient(script: string) {
    const client = new SdkClient({ name: "sdk-client", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0].content as { text?: string };
      return { role: "assistant", model: "sdk-model", content: { type: "text", text: `echo ${first.text}` } };
    });
    await client.connect(new SdkStdioClientTransport({ command: process.execPath, args: [script] }));
    cleanup(() => client.close());
    return client;
  }

  it("initializes and sees our server's info and capabilities", async () => {
    const client = await sdkClient(fixture("our-server.mjs"));
    expect(client.getServerVersion()).toEqual({ name: "mcpgen-fixture", version: "2.0.0" });
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
    });
  });

  it("lists and calls tools, with progress", async () => {
    const client = await sdkClient(fixture("our-server.mjs"));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["add", "slow_count", "cancelled_count", "ask"]);
    expect(text(await client.callTool({ name: "add", arguments: { a: 20, b: 22 } }))).toBe("42");
    const progress: number[] = [];
    const counted = await client.callTool(
      { name: "slow_count", arguments: { count: 4, delayMs: PROGRESS_SPACING_MS } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(text(counted)).toBe("done 4");
    expectProgressPrefix(progress, 4);
    // Unknown tool: a JSON-RPC error, which this SDK version hands back as an error result.
    const unknown = await client.callTool({ name: "nope", arguments: {} }).then(
      (r) => ({ isError: r.isError, text: text(r) }),
      (e: unknown) => ({ isError: true, text: String(e) }),
    );
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain("nope");
  });

  it("reads resources and gets prompts", async () => {
    const client = await sdkClient(fixture("our-server.mjs"));
    expect((await client.listResources()).resources).toEqual([
      { uri: "fixture://greeting", name: "greeting", mimeType: "text/plain" },
    ]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: "fixture://echo/{word}", name: "echo" },
    ]);
    expect((await client.readResource({ uri: "fixture://greeting" })).contents).toEqual([
      { uri: "fixture://greeting", mimeType: "text/plain", text: "hello from mcpgen" },
    ]);
    expect((await client.readResource({ uri: "fixture://echo/hi" })).contents).toEqual([
      { uri: "fixture://echo/hi", text: "hi" },
    ]);
    await expect(client.readResource({ uri: "fixture://missing" })).rejects.toMatchObject({ code: -32002 });
    expect(await client.getPrompt({ name: "greet", arguments: { name: "Ada" } })).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "Please greet Ada." } }],
    });
  });

  it("cancels a running tool call", async () => {
    const client = await sdkClient(fixture("our-server.mjs"));
    const controller = new AbortController();
    const call = client.callTool({ name: "slow_count", arguments: { count: 1000, delayMs: 10 } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        if (p.progress === 2) controller.abort("stop");
      },
    });
    await expect(call).rejects.toThrow();
    await eventuallyText(async () => text(await client.callTool({ name: "cancelled_count" })), "1");
  });

  it("answers our server's sampling request made inside a tool", async () => {
    const client = await sdkClient(fixture("our-server.mjs"));
    expect(text(await client.callTool({ name: "ask", arguments: { question: "hi?" } }))).toBe("sdk-model: echo hi?");
  });

  it("drives the example server (npm run example:stdio-server)", async () => {
    const client = await sdkClient(exampleServer);
    expect(text(await client.callTool({ name: "add", arguments: { a: 1.5, b: 2 } }))).toBe("3.5");
    const progress: number[] = [];
    const counted = await client.callTool(
      { name: "slow_count", arguments: { count: 3, delayMs: PROGRESS_SPACING_MS } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    );
    expect(text(counted)).toBe("done 3");
    expectProgressPrefix(progress, 3);
  });
});

describe("our generated client -> official SDK server (child process)", () => {
  async function ourClient() {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixture("sdk-server.mjs")],
      cwd: process.cwd(),
    });
    const client = await Client.connect(transport, {
      clientInfo: { name: "mcpgen-client", version: "1.0.0" },
      capabilities: { sampling: {} },
    });
    cleanup(() => client.peer.close());
    return client;
  }

  it("initializes and sees the SDK server's info and capabilities", async () => {
    const client = await ourClient();
    expect(client.peer.serverInfo).toEqual({ name: "sdk-fixture", version: "3.0.0" });
    expect(client.peer.protocolVersion).toBe("2025-11-25");
    expect(client.peer.serverCapabilities).toMatchObject({ tools: {}, resources: {}, prompts: {} });
  });

  it("lists and calls tools, with progress", async () => {
    const client = await ourClient();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "add",
      "slow_count",
      "cancelled_count",
      "ask",
    ]);
    expect(text(await client.callTool({ name: "add", arguments: { a: 20, b: 22 } }))).toBe("42");
    const progress: number[] = [];
    const counted = await client.callTool(
      { name: "slow_count", arguments: { count: 4, delayMs: 5 } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    expect(text(counted)).toBe("done 4");
    expect(progress).toEqual([1, 2, 3, 4]);
  });

  it("reads resources and gets prompts", async () => {
    const client = await ourClient();
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["fixture://greeting"]);
    expect((await client.readResource({ uri: "fixture://greeting" })).contents).toEqual([
      { uri: "fixture://greeting", mimeType: "text/plain", text: "hello from the sdk" },
    ]);
    expect((await client.readResource({ uri: "fixture://echo/hi" })).contents).toEqual([
      { uri: "fixture://echo/hi", text: "hi" },
    ]);
    expect((await client.getPrompt({ name: "greet", arguments: { name: "Ada" } })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Please greet Ada." } },
    ]);
  });

  it("cancels a running tool call", async () => {
    const client = await ourClient();
    const controller = new AbortController();
    const call = client.callTool(
      { name: "slow_count", arguments: { count: 1000, delayMs: 10 } },
      { signal: controller.signal, onProgress: (p) => p.progress === 2 && controller.abort("stop") },
    );
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    await eventuallyText(async () => text(await client.callTool({ name: "cancelled_count" })), "1");
  });

  it("answers the SDK server's sampling request made inside a tool", async () => {
    const client = await ourClient();
    client.onCreateMessage((params) => {
      const first = params.messages[0].content as { text?: string };
      return { role: "assistant", model: "our-model", content: { type: "text", text: `echo ${first.text}` } };
    });
    expect(text(await client.callTool({ name: "ask", arguments: { question: "hi?" } }))).toBe("our-model: echo hi?");
  });
});
