// McpServer round trips through the generated Client: tools, resources, templates and prompts, with their error cases.
import { describe, expect, it } from "vitest";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import { closedAfterEach, makeServer } from "./helpers.js";

const connected = closedAfterEach();

/** The "add" tool's registration: tools/list must give back each of these fields. */
const ADD = {
  title: "Add",
  description: "Adds two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  annotations: { readOnlyHint: true },
} as const;

function addServer() {
  const server = makeServer();
  server.tool("add", ADD, ({ a, b }) => String(a + b));
  return server;
}

describe("tools", () => {
  it("lists registered tools with their schemas and metadata", async () => {
    const { client } = await connected(addServer());
    const { tools } = await client.listTools();
    expect(tools).toEqual([{ name: "add", ...ADD }]);
  });

  it("calls a tool; a string result becomes one text block", async () => {
    const { client } = await connected(addServer());
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    expect(result).toEqual({ content: [{ type: "text", text: "42" }] });
  });

  it("answers an unknown tool with JSON-RPC -32602", async () => {
    const { client } = await connected(addServer());
    const error = await client.callTool({ name: "nope", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32602 });
    expect((error as RpcError).message).toContain("nope");
  });

  it("turns a throwing handler into a result with isError", async () => {
    const server = makeServer();
    server.tool("boom", { inputSchema: { type: "object" } }, () => {
      throw new Error("kaput");
    });
    const { client } = await connected(server);
    const result = await client.callTool({ name: "boom" });
    expect(result).toEqual({ content: [{ type: "text", text: "kaput" }], isError: true });
  });

  it("reports arguments that do not fit the input schema as a tool error, without running the handler", async () => {
    let ran = false;
    const server = makeServer();
    server.tool(
      "add",
      {
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
        },
      },
      ({ a, b }) => {
        ran = true;
        return String(a + b);
      },
    );
    const { client } = await connected(server);
    const result = await client.callTool({ name: "add", arguments: { a: "2" } });
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain("/a: expected number, got string");
    expect(text).toContain('missing required property "b"');
    expect(ran).toBe(false);
  });

  it("checks structuredContent against the output schema", async () => {
    const server = makeServer();
    const outputSchema = { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] } as const;
    server.tool("good", { outputSchema }, () => ({
      content: [{ type: "text", text: "3" }],
      structuredContent: { sum: 3 },
    }));
    const broken = { content: [{ type: "text" as const, text: "3" }], structuredContent: { sum: "3" } };
    // @ts-expect-error: this tool breaks its outputSchema on purpose (the types refuse it; the runtime must too)
    server.tool("bad", { outputSchema }, () => broken);
    const { client } = await connected(server);
    expect((await client.callTool({ name: "good" })).structuredContent).toEqual({ sum: 3 });
    await expect(client.callTool({ name: "bad" })).rejects.toMatchObject({ code: -32603 });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "good")?.outputSchema).toEqual(outputSchema);
  });

  it("passes progress from the handler to the caller", async () => {
    const server = makeServer();
    server.tool(
      "steps",
      { inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
      async ({ n }, ctx) => {
        for (let i = 1; i <= n; i++) await ctx.progress(i, n, `step ${i}`);
        return `did ${n}`;
      },
    );
    const { client } = await connected(server);
    const seen: unknown[] = [];
    const result = await client.callTool({ name: "steps", arguments: { n: 3 } }, { onProgress: (p) => seen.push(p) });
    expect(result.content).toEqual([{ type: "text", text: "did 3" }]);
    expect(seen).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
  });

  it("aborts the handler's signal when the client cancels", async () => {
    const server = makeServer();
    let aborted: (reason: unknown) => void = () => {};
    const abortSeen = new Promise<unknown>((resolve) => (aborted = resolve));
    server.tool("wait", {}, (_args, ctx) => {
      ctx.signal.addEventListener("abort", () => aborted(ctx.signal.reason));
      return new Promise(() => {});
    });
    const { client } = await connected(server);
    const controller = new AbortController();
    const call = client.callTool({ name: "wait" }, { signal: controller.signal });
    setTimeout(() => controller.abort("enough"), 10);
    await expect(call).rejects.toMatchObject({ name: "RequestCancelledError" });
    expect(String(await abortSeen)).toContain("enough");
  });
});

describe("resources", () => {
  function resourceServer() {
    const server = makeServer();
    server.resource(
      "memo://hello",
      { name: "hello", mimeType: "text/plain", description: "A greeting" },
      () => "hello world",
    );
    server.resourceTemplate("memo://notes/{id}", { name: "note", mimeType: "text/markdown" }, (uri, { id }) => ({
      contents: [{ uri, mimeType: "text/markdown", text: `# note ${id}` }],
    }));
    return server;
  }

  it("lists resources and templates", async () => {
    const { client } = await connected(resourceServer());
    expect((await client.listResources()).resources).toEqual([
      { uri: "memo://hello", name: "hello", mimeType: "text/plain", description: "A greeting" },
    ]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: "memo://notes/{id}", name: "note", mimeType: "text/markdown" },
    ]);
  });

  it("reads a fixed resource (string shorthand) and a templated one", async () => {
    const { client } = await connected(resourceServer());
    expect(await client.readResource({ uri: "memo://hello" })).toEqual({
      contents: [{ uri: "memo://hello", mimeType: "text/plain", text: "hello world" }],
    });
    expect(await client.readResource({ uri: "memo://notes/a%20b" })).toEqual({
      contents: [{ uri: "memo://notes/a%20b", mimeType: "text/markdown", text: "# note a b" }],
    });
  });

  it("answers an unknown resource with the uri: -32002 on 2025-11-25, -32602 on 2026-07-28", async () => {
    for (const [era, code] of [
      ["legacy", -32002],
      ["auto", -32602],
    ] as const) {
      const c = await connected(resourceServer(), { era });
      await expect(c.client.readResource({ uri: "memo://notes/x/y" })).rejects.toMatchObject({
        code,
        data: { uri: "memo://notes/x/y" },
      });
    }
  });
});

describe("prompts", () => {
  function promptServer() {
    const server = makeServer();
    server.prompt(
      "review",
      {
        description: "Review code",
        arguments: [
          { name: "code", required: true },
          { name: "style", description: "Tone of the review" },
        ],
      },
      ({ code, style }) => ({
        description: "A review request",
        messages: [{ role: "user", content: { type: "text", text: `Review (${style ?? "plain"}): ${code}` } }],
      }),
    );
    server.prompt("hello", {}, () => "Say hello");
    return server;
  }

  it("lists prompts with their arguments", async () => {
    const { client } = await connected(promptServer());
    expect((await client.listPrompts()).prompts).toEqual([
      {
        name: "review",
        description: "Review code",
        arguments: [
          { name: "code", required: true },
          { name: "style", description: "Tone of the review" },
        ],
      },
      { name: "hello" },
    ]);
  });

  it("gets a prompt with arguments, and a string prompt as one user message", async () => {
    const { client } = await connected(promptServer());
    expect(await client.getPrompt({ name: "review", arguments: { code: "x = 1", style: "kind" } })).toEqual({
      description: "A review request",
      messages: [{ role: "user", content: { type: "text", text: "Review (kind): x = 1" } }],
    });
    expect(await client.getPrompt({ name: "hello" })).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
    });
  });

  it("refuses a missing required argument and an unknown prompt with -32602", async () => {
    const { client } = await connected(promptServer());
    await expect(client.getPrompt({ name: "review", arguments: {} })).rejects.toMatchObject({
      code: -32602,
      data: { missing: ["code"] },
    });
    await expect(client.getPrompt({ name: "nope" })).rejects.toMatchObject({ code: -32602 });
  });
});

describe("many connections", () => {
  it("serves one definition to several clients, each on its own session", async () => {
    const server = addServer();
    const one = await connected(server);
    const two = await connected(server);
    expect(one.session).not.toBe(two.session);
    expect(server.sessions).toHaveLength(2);
    const [a, b] = await Promise.all([
      one.client.callTool({ name: "add", arguments: { a: 1, b: 1 } }),
      two.client.callTool({ name: "add", arguments: { a: 2, b: 2 } }),
    ]);
    expect(a.content).toEqual([{ type: "text", text: "2" }]);
    expect(b.content).toEqual([{ type: "text", text: "4" }]);
    await one.close(); // closing again after the test is a no-op
    expect(server.sessions).toEqual([two.session]);
  });
});
