// The fixture's tools for the 2026-07-28 scenarios, over 2025-11-25 where the client answers on the stream: each does what its scenario expects of it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Client,
  StreamableHttpClientTransport,
  type CallToolResult,
  type ClientSession,
  type JsonObject,
} from "../../generated/sdk.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { builtExample, spawnServer, type SpawnedServer } from "./helpers.js";

type Connected = Client & { readonly peer: ClientSession };

let server: SpawnedServer;
const closeLater = closeAfterEach();

beforeAll(async () => {
  server = await spawnServer(builtExample("conformance/server"), /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
});

afterAll(async () => {
  await server?.stop();
});

/** What the client was asked while a tool ran, by method. */
interface Asked {
  elicit: string[];
  sample: string[];
  roots: number;
}

/** A client whose user answers every form with `answers`, whose LLM says "Paris", with one root. */
async function connect(
  capabilities: JsonObject,
  answers: JsonObject = {},
  era: "auto" | "legacy" = "auto",
): Promise<{ client: Connected; asked: Asked }> {
  const client = await Client.connect(new StreamableHttpClientTransport({ url: server.url }), {
    clientInfo: { name: "fixture-tools-test", version: "1.0.0" },
    capabilities,
    era,
  });
  closeLater(() => client.peer.close());
  const asked: Asked = { elicit: [], sample: [], roots: 0 };
  client
    .onElicit((params) => {
      asked.elicit.push(params.message);
      return { action: "accept", content: answers as { [key: string]: string } };
    })
    .onCreateMessage((params) => {
      const first = params.messages[0]?.content;
      asked.sample.push(first !== undefined && "text" in first ? String(first.text) : "");
      return { role: "assistant", content: { type: "text", text: "Paris" }, model: "test-model" };
    })
    .onListRoots(() => {
      asked.roots++;
      return { roots: [{ uri: "file:///test/root", name: "Test Root" }] };
    });
  return { client, asked };
}

const EVERYTHING = { elicitation: {}, sampling: {}, roots: {} };

async function call(client: Connected, name: string, args: JsonObject = {}): Promise<CallToolResult> {
  const result = await client.callTool({ name, arguments: args });
  if (!("content" in result)) throw new Error(`${name} did not answer with a CallToolResult`);
  return result;
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
}

describe("conformance fixture: the tools the 2026-07-28 scenarios call", () => {
  it("test_trigger_tool_change and test_trigger_prompt_change add, then remove, a tool and a prompt, announcing each change", async () => {
    const { client } = await connect({});
    let toolChanges = 0;
    let promptChanges = 0;
    client.onToolListChanged(() => void toolChanges++).onPromptListChanged(() => void promptChanges++);
    const toolNames = async () => (await client.listTools()).tools.map((t) => t.name);
    const promptNames = async () => (await client.listPrompts()).prompts.map((p) => p.name);
    expect(await toolNames()).not.toContain("test_extra_tool");

    expect(textOf(await call(client, "test_trigger_tool_change"))).toBe("Added test_extra_tool");
    await until(() => toolChanges === 1, 5000, "no tools/list_changed after adding");
    expect(await toolNames()).toContain("test_extra_tool");
    expect(textOf(await call(client, "test_trigger_tool_change"))).toBe("Removed test_extra_tool");
    await until(() => toolChanges === 2, 5000, "no tools/list_changed after removing");
    expect(await toolNames()).not.toContain("test_extra_tool");

    expect(textOf(await call(client, "test_trigger_prompt_change"))).toBe("Added test_extra_prompt");
    await until(() => promptChanges === 1, 5000, "no prompts/list_changed after adding");
    expect(await promptNames()).toContain("test_extra_prompt");
    expect(textOf(await call(client, "test_trigger_prompt_change"))).toBe("Removed test_extra_prompt");
    await until(() => promptChanges === 2, 5000, "no prompts/list_changed after removing");
    expect(await promptNames()).not.toContain("test_extra_prompt");
    expect(toolChanges).toBe(2);
  });

  it("test_logging_tool logs two messages at info", async () => {
    const { client } = await connect({});
    const logged: unknown[] = [];
    client.onLoggingMessage((params) => void logged.push(params.data));
    await client.setLevel({ level: "info" });
    expect(textOf(await call(client, "test_logging_tool"))).toBe("Logging tool executed successfully");
    await until(() => logged.length === 2, 5000, "the two log messages did not arrive");
    expect(logged).toEqual(["Logging tool started", "Logging tool finished"]);
  });

  it("test_custom_headers lists region and priority with x-mcp-header and echoes its arguments", async () => {
    const { client } = await connect({});
    const tool = (await client.listTools()).tools.find((t) => t.name === "test_custom_headers");
    const properties = tool?.inputSchema.properties as Record<string, Record<string, unknown>> | undefined;
    expect(properties?.region?.["x-mcp-header"]).toBe("Region");
    expect(properties?.priority?.["x-mcp-header"]).toBe("Priority");
    expect(properties?.query?.["x-mcp-header"]).toBeUndefined();
    const result = await call(client, "test_custom_headers", { region: "us-west1", priority: 42, query: "SELECT 1" });
    expect(textOf(result)).toBe("region=us-west1 priority=42 query=SELECT 1");
  });

  it("json_schema_2020_12_tool lists its schema with every 2020-12 keyword the scenario looks for", async () => {
    const { client } = await connect({});
    const tool = (await client.listTools()).tools.find((t) => t.name === "json_schema_2020_12_tool");
    const schema = tool?.inputSchema as Record<string, unknown> & { $defs?: { address?: Record<string, unknown> } };
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$defs?.address?.$anchor).toBe("addressDef");
    expect(schema.allOf).toEqual([{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }]);
    expect(Object.keys(schema)).toEqual(expect.arrayContaining(["if", "then", "else", "additionalProperties"]));
  });

  it("test_missing_capability needs sampling: without it the call fails and the client is asked nothing", async () => {
    // 2026-07-28: the request itself fails with -32021 naming the capability; 2025-11-25: the tool reports it.
    const { client, asked } = await connect({});
    await expect(call(client, "test_missing_capability")).rejects.toMatchObject({
      code: -32021,
      message: expect.stringContaining("sampling"),
    });
    const { client: legacy } = await connect({}, {}, "legacy");
    const result = await call(legacy, "test_missing_capability");
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("sampling");
    expect(asked.sample).toEqual([]);
    const { client: able } = await connect({ sampling: {} });
    expect(textOf(await call(able, "test_missing_capability"))).toBe("LLM response: Paris");
  });

  it("test_streaming_elicitation asks the user before it answers", async () => {
    const { client, asked } = await connect({ elicitation: {} }, { confirm: true });
    expect(textOf(await call(client, "test_streaming_elicitation"))).toBe(
      'Elicitation completed: action=accept, content={"confirm":true}',
    );
    expect(asked.elicit).toEqual(["Proceed?"]);
  });

  it("the input_required tools finish once the client answered what they asked", async () => {
    const { client, asked } = await connect(EVERYTHING, { name: "Alice", ok: true, color: "blue" });
    expect(textOf(await call(client, "test_input_required_result_elicitation"))).toBe("Hello, Alice!");
    expect(textOf(await call(client, "test_input_required_result_sampling"))).toBe("LLM response: Paris");
    expect(textOf(await call(client, "test_input_required_result_list_roots"))).toBe("Roots: file:///test/root");
    expect(textOf(await call(client, "test_input_required_result_request_state"))).toBe("state-ok: confirmed=true");
    expect(textOf(await call(client, "test_input_required_result_multi_round"))).toBe("Alice likes blue");
    expect(textOf(await call(client, "test_input_required_result_tampered_state"))).toBe("Confirmed: true");
    expect(asked.elicit).toEqual([
      "What is your name?",
      "Please confirm",
      "Step 1: What is your name?",
      "Step 2: What is your favorite color?",
      "Please confirm",
    ]);
    expect(asked.sample).toEqual(["What is the capital of France?"]);
    expect(asked.roots).toBe(1);
  });

  it("test_input_required_result_multiple_inputs asks the user, the LLM and the roots before answering", async () => {
    const { client, asked } = await connect(EVERYTHING, { name: "Alice" });
    expect(textOf(await call(client, "test_input_required_result_multiple_inputs"))).toBe("Paris Alice (1 roots)");
    expect(asked).toEqual({ elicit: ["What is your name?"], sample: ["Generate a greeting"], roots: 1 });
  });

  it("test_input_required_result_capabilities asks the user when it can, else the LLM", async () => {
    const { client: withUser, asked: userAsked } = await connect(EVERYTHING, { city: "Lyon" });
    expect(textOf(await call(withUser, "test_input_required_result_capabilities"))).toBe("City from the user: Lyon");
    expect(userAsked.sample).toEqual([]);
    const { client: samplingOnly, asked } = await connect({ sampling: {} });
    expect(textOf(await call(samplingOnly, "test_input_required_result_capabilities"))).toBe(
      "City from the LLM: Paris",
    );
    expect(asked.elicit).toEqual([]);
  });

  it("the prompt test_input_required_result_prompt asks the user for its context", async () => {
    const { client, asked } = await connect({ elicitation: {} }, { context: "tests" });
    const prompt = await client.getPrompt({ name: "test_input_required_result_prompt" });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Context: tests" } }]);
    expect(asked.elicit).toEqual(["What context should the prompt use?"]);
  });
});
