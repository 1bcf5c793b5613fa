// Conformance fixture client: run by the official MCP conformance suite with the server URL as last argument; MCP_CONFORMANCE_SCENARIO picks the behaviour.
import { Client, StreamableHttpClientTransport, type ElicitRequestParams, type ElicitResult, type JsonObject } from "../../generated/sdk.js";

type ConnectedClient = Awaited<ReturnType<typeof Client.connect>>;

const CLIENT_INFO = { name: "mcpgen-conformance-client", version: "0.1.0" };

async function connect(url: string, capabilities: JsonObject = {}): Promise<{ client: ConnectedClient; transport: StreamableHttpClientTransport }> {
  const transport = new StreamableHttpClientTransport({ url });
  const client = await Client.connect(transport, {
    clientInfo: CLIENT_INFO,
    capabilities,
    onerror: (error) => console.error(`[conformance-client] ${error.message}`),
  });
  return { client, transport };
}

/**
 * SEP-1034: a form field the user leaves untouched takes the schema's default. This client's "user" accepts
 * the form without typing anything, so every field with a default gets it.
 */
function applyElicitationDefaults(params: ElicitRequestParams, content: Record<string, unknown> = {}): ElicitResult {
  if (params.mode === "url") return { action: "decline" };
  const filled: Record<string, unknown> = { ...content };
  for (const [name, schema] of Object.entries(params.requestedSchema.properties)) {
    const fallback = (schema as { default?: unknown }).default;
    if (filled[name] === undefined && fallback !== undefined) filled[name] = fallback;
  }
  return { action: "accept", content: filled as ElicitResult["content"] };
}

const scenarios: Record<string, (url: string) => Promise<void>> = {
  async initialize(url) {
    const { client } = await connect(url);
    await client.peer.close();
  },

  async tools_call(url) {
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    for (const tool of tools) {
      if (tool.name === "add_numbers") {
        const result = await client.callTool({ name: tool.name, arguments: { a: 5, b: 3 } });
        console.log(JSON.stringify(result.content));
      }
    }
    await client.peer.close();
  },

  async "elicitation-sep1034-client-defaults"(url) {
    const { client } = await connect(url, { elicitation: { form: {} } });
    client.onElicit((params) => applyElicitationDefaults(params));
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "test_client_elicitation_defaults");
    if (!tool) throw new Error("the server offers no test_client_elicitation_defaults tool");
    const result = await client.callTool({ name: tool.name, arguments: {} });
    console.log(JSON.stringify(result.content));
    await client.peer.close();
  },

  async "sse-retry"(url) {
    const { client } = await connect(url);
    await client.listTools();
    // The server closes the POST stream before answering; the transport waits `retry` ms and resumes with GET.
    const result = await client.callTool({ name: "test_reconnection", arguments: {} });
    console.log(JSON.stringify(result.content));
    await client.peer.close();
  },
};

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const run = scenarios[scenario];
  if (!url || !/^https?:\/\//.test(url)) throw new Error("usage: client.js <server-url> (with MCP_CONFORMANCE_SCENARIO set)");
  if (!run) throw new Error(`unsupported scenario ${JSON.stringify(scenario)}; supported: ${Object.keys(scenarios).join(", ")}`);
  await run(url);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack ?? error.message : String(error));
    process.exit(1);
  },
);
