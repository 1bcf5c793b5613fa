// Conformance fixture server: the tools, resources and prompts the official MCP conformance suite asks for, over Streamable HTTP.
import { pathToFileURL } from "node:url";
import {
  RpcError,
  Server,
  createStreamableHttpServer,
  listenHttp,
  type CallToolRequestParams,
  type CallToolResult,
  type GetPromptResult,
  type HttpServerTransport,
  type LoggingLevel,
  type Prompt,
  type ReadResourceResult,
  type RequestContext,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "../../generated/sdk.js";

/** A 1x1 red PNG: the smallest real image the image scenarios can check. */
const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** A valid, silent WAV: RIFF header, 8 kHz mono 8-bit PCM, one sample. */
function silentWav(): string {
  const data = Buffer.from([0x80]);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]).toString("base64");
}

const NO_ARGS: Tool["inputSchema"] = { type: "object", properties: {} };

const TOOLS: Tool[] = [
  { name: "test_simple_text", description: "Returns a simple text response", inputSchema: NO_ARGS },
  { name: "test_image_content", description: "Returns an image", inputSchema: NO_ARGS },
  { name: "test_audio_content", description: "Returns an audio clip", inputSchema: NO_ARGS },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: NO_ARGS },
  { name: "test_multiple_content_types", description: "Returns text, an image and a resource", inputSchema: NO_ARGS },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs", inputSchema: NO_ARGS },
  { name: "test_tool_with_progress", description: "Reports progress 0, 50, 100 of 100", inputSchema: NO_ARGS },
  { name: "test_error_handling", description: "Always fails with isError", inputSchema: NO_ARGS },
  {
    name: "test_sampling",
    description: "Asks the client's LLM to answer a prompt",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
      required: ["prompt"],
    },
  },
  {
    name: "test_elicitation",
    description: "Asks the user for a username and email",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message to show the user" } },
      required: ["message"],
    },
  },
  {
    name: "test_elicitation_sep1034_defaults",
    description: "Elicits a form whose fields all have defaults",
    inputSchema: NO_ARGS,
  },
  {
    name: "test_elicitation_sep1330_enums",
    description: "Elicits a form with every enum schema variant",
    inputSchema: NO_ARGS,
  },
  {
    name: "test_reconnection",
    description: "Closes its SSE stream mid-call; the result comes on the resumed stream",
    inputSchema: NO_ARGS,
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    // $defs and additionalProperties are valid JSON Schema the generated Tool type does not spell out.
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    } as Tool["inputSchema"],
  },
];

const RESOURCES: Resource[] = [
  { uri: "test://static-text", name: "static-text", description: "A static text resource", mimeType: "text/plain" },
  {
    uri: "test://static-binary",
    name: "static-binary",
    description: "A static binary resource (PNG)",
    mimeType: "image/png",
  },
  {
    uri: "test://watched-resource",
    name: "watched-resource",
    description: "A resource clients can subscribe to",
    mimeType: "text/plain",
  },
];

const TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "test://template/{id}/data",
    name: "template-data",
    description: "Data for an id",
    mimeType: "application/json",
  },
];

const PROMPTS: Prompt[] = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds a resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image" },
];

const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

/** State of one MCP session: the client's log threshold and its subscriptions. */
interface SessionState {
  level: LoggingLevel;
  subscriptions: Set<string>;
}

async function callTool(
  params: CallToolRequestParams,
  context: RequestContext,
  state: SessionState,
  transport: HttpServerTransport,
): Promise<CallToolResult> {
  const log = async (level: LoggingLevel, data: string) => {
    if (LEVELS.indexOf(level) >= LEVELS.indexOf(state.level)) {
      await context.notify("notifications/message", { level, logger: "conformance", data });
    }
  };
  const args = params.arguments ?? {};
  switch (params.name) {
    case "test_simple_text":
      return text("This is a simple text response for testing.");
    case "test_image_content":
      return { content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] };
    case "test_audio_content":
      return { content: [{ type: "audio", data: silentWav(), mimeType: "audio/wav" }] };
    case "test_embedded_resource":
      return {
        content: [
          {
            type: "resource",
            resource: {
              uri: "test://embedded-resource",
              mimeType: "text/plain",
              text: "This is an embedded resource content.",
            },
          },
        ],
      };
    case "test_multiple_content_types":
      return {
        content: [
          { type: "text", text: "Multiple content types test:" },
          { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 }),
            },
          },
        ],
      };
    case "test_tool_with_logging":
      await log("info", "Tool execution started");
      await delay(50);
      await log("info", "Tool processing data");
      await delay(50);
      await log("info", "Tool execution completed");
      return text("Tool with logging executed successfully");
    case "test_tool_with_progress":
      // A no-op without a progress token, so the delays still happen.
      await context.progress(0, 100);
      await delay(50);
      await context.progress(50, 100);
      await delay(50);
      await context.progress(100, 100);
      return text("Tool with progress executed successfully");
    case "test_error_handling":
      return {
        isError: true,
        content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
      };
    case "test_sampling": {
      const prompt = typeof args.prompt === "string" ? args.prompt : "";
      const answer = await context.request("sampling/createMessage", {
        messages: [{ role: "user", content: { type: "text", text: prompt } }],
        maxTokens: 100,
      });
      const content = answer.content as { type?: string; text?: string } | undefined;
      return text(`LLM response: ${content?.type === "text" ? content.text : JSON.stringify(content)}`);
    }
    case "test_elicitation": {
      const message = typeof args.message === "string" ? args.message : "Please provide your information";
      const answer = await context.request("elicitation/create", {
        message,
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      });
      return text(`User response: action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`);
    }
    case "test_elicitation_sep1034_defaults": {
      const answer = await context.request("elicitation/create", {
        message: "Please review your details",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "Name", default: "John Doe" },
            age: { type: "integer", description: "Age", default: 30 },
            score: { type: "number", description: "Score", default: 95.5 },
            status: {
              type: "string",
              description: "Status",
              enum: ["active", "inactive", "pending"],
              default: "active",
            },
            verified: { type: "boolean", description: "Verified", default: true },
          },
        },
      });
      return text(
        `Elicitation completed: action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`,
      );
    }
    case "test_elicitation_sep1330_enums": {
      const answer = await context.request("elicitation/create", {
        message: "Please pick some options",
        requestedSchema: {
          type: "object",
          properties: {
            untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
            titledSingle: {
              type: "string",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" },
              ],
            },
            legacyEnum: {
              type: "string",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"],
            },
            untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
            titledMulti: {
              type: "array",
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" },
                ],
              },
            },
          },
        },
      });
      return text(
        `Elicitation completed: action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`,
      );
    }
    case "test_reconnection":
      // SEP-1699: let go of the connection mid-call; the client resumes with GET + Last-Event-ID for the result.
      await transport.closeSseStream(context.requestId);
      await delay(100);
      return text("Reconnection test completed successfully");
    default:
      throw new RpcError(-32602, `Unknown tool: ${params.name}`);
  }
}

function readResource(uri: string): ReadResourceResult {
  switch (uri) {
    case "test://static-text":
      return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
    case "test://static-binary":
      return { contents: [{ uri, mimeType: "image/png", blob: RED_PIXEL_PNG }] };
    case "test://watched-resource":
      return { contents: [{ uri, mimeType: "text/plain", text: "Watched resource content." }] };
  }
  const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (match) {
    const id = decodeURIComponent(match[1]);
    return {
      contents: [
        {
          uri,
          mimeType: "application/json",
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    };
  }
  // -32002: the spec's code for an unknown resource.
  throw new RpcError(-32002, `Resource not found: ${uri}`, { uri });
}

function getPrompt(name: string, args: Record<string, string>): GetPromptResult {
  switch (name) {
    case "test_simple_prompt":
      return { messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }] };
    case "test_prompt_with_arguments":
      return {
        messages: [
          {
            role: "user",
            content: {
              type: "text",
              text: `Prompt with arguments: arg1='${args.arg1 ?? ""}', arg2='${args.arg2 ?? ""}'`,
            },
          },
        ],
      };
    case "test_prompt_with_embedded_resource":
      return {
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: {
                uri: args.resourceUri ?? "test://example-resource",
                mimeType: "text/plain",
                text: "Embedded resource content for testing.",
              },
            },
          },
          { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
        ],
      };
    case "test_prompt_with_image":
      return {
        messages: [
          { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
          { role: "user", content: { type: "text", text: "Please analyze the image above." } },
        ],
      };
  }
  throw new RpcError(-32602, `Unknown prompt: ${name}`);
}

const COMPLETIONS: Record<string, string[]> = {
  arg1: ["paris", "park", "party", "test", "testing"],
  arg2: ["world", "word", "work"],
};

/** Wires one MCP session onto a freshly opened HTTP session. */
export async function connectConformanceSession(transport: HttpServerTransport): Promise<void> {
  const state: SessionState = { level: "info", subscriptions: new Set() };
  const server = Server.create({
    serverInfo: { name: "mcpgen-conformance-server", version: "0.1.0" },
    capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, logging: {}, completions: {} },
    // The progress scenario expects every value it is sent, 50 ms apart: no coalescing.
    progressInterval: 0,
  });
  server
    .onListTools(() => ({ tools: TOOLS }))
    .onCallTool((params, context) => callTool(params, context, state, transport))
    .onListResources(() => ({ resources: RESOURCES }))
    .onListResourceTemplates(() => ({ resourceTemplates: TEMPLATES }))
    .onReadResource((params) => readResource(params.uri))
    .onSubscribe((params) => {
      state.subscriptions.add(params.uri);
      return {};
    })
    .onUnsubscribe((params) => {
      state.subscriptions.delete(params.uri);
      return {};
    })
    .onListPrompts(() => ({ prompts: PROMPTS }))
    .onGetPrompt((params) => getPrompt(params.name, params.arguments ?? {}))
    .onSetLevel((params) => {
      state.level = params.level;
      return {};
    })
    .onComplete((params) => {
      const prefix = params.argument.value.toLowerCase();
      const values =
        params.ref.type === "ref/prompt"
          ? (COMPLETIONS[params.argument.name] ?? []).filter((v) => v.startsWith(prefix))
          : [];
      return { completion: { values, total: values.length, hasMore: false } };
    });
  await server.peer.connect(transport);
}

/** Serves the fixture at http://127.0.0.1:PORT/mcp; resolves with the bound port and a stop function. */
export async function startConformanceServer(port: number): Promise<{ port: number; stop: () => Promise<void> }> {
  const mcp = createStreamableHttpServer({
    path: "/mcp",
    onSession: connectConformanceSession,
    // Short, so the SEP-1699 polling scenario and clients resume quickly.
    retryMs: 500,
    onerror: (error) => console.error(`[conformance-server] ${error.message}`),
  });
  const http = await listenHttp(mcp.nodeListener, { port, host: "127.0.0.1" });
  return {
    port: http.port,
    async stop() {
      await mcp.close();
      await http.close();
    },
  };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const running = await startConformanceServer(Number(process.env.PORT ?? 3000));
  console.log(`conformance server listening on http://127.0.0.1:${running.port}/mcp`);
  const shutdown = () => void running.stop().then(() => process.exit(0));
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}
