// Conformance fixture server: the tools, resources and prompts the official MCP conformance suites ask for (2025-11-25 and 2026-07-28 scenarios), over Streamable HTTP.
import { pathToFileURL } from "node:url";
import {
  CapabilityError,
  RequestRefusedError,
  Server,
  TaskReceiver,
  createMcpServer,
  createStreamableHttpServer,
  listenHttp,
  type HttpServerTransport,
  type McpCreateMessageResult,
  type McpRegistration,
  type McpServer,
  type McpToolResult,
  type ServerSession,
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

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function text(value: string): McpToolResult {
  return { content: [{ type: "text", text: value }] };
}

/** The text of a sampling answer, or its JSON when the client answered with something else. */
function samplingText(answer: McpCreateMessageResult): string {
  const content = answer.content;
  if (!Array.isArray(content) && content.type === "text" && typeof content.text === "string") return content.text;
  return JSON.stringify(content);
}

/** One question for the user, asked as a form with a single field. */
function oneField(message: string, field: string, type: "string" | "boolean") {
  return {
    message,
    requestedSchema: { type: "object", properties: { [field]: { type } }, required: [field] },
  };
}

const COMPLETIONS: Record<string, string[]> = {
  arg1: ["paris", "park", "party", "test", "testing"],
  arg2: ["world", "word", "work"],
};

/**
 * The transport of each 2025-11-25 HTTP session, for the tool that lets go of its SSE stream mid-call (SEP-1699).
 * Weak: a session that ended takes its transport with it.
 */
type TransportOf = WeakMap<ServerSession, HttpServerTransport>;

/** The conformance server definition; every connection serves the same registrations. */
export function createConformanceServer(transports: TransportOf = new WeakMap()): McpServer {
  const server = createMcpServer({
    serverInfo: { name: "mcpgen-conformance-server", version: "0.1.0" },
    capabilities: { completions: {} },
    logging: true,
    subscriptions: true,
    // The progress scenario expects every value it is sent, 50 ms apart: no coalescing.
    progressInterval: 0,
    // Tools that allow tasks run as core tasks for 2025-11-25 clients that ask, and as Tasks-extension tasks for
    // 2026-07-28 clients that declare it. The suite's cancelled tasks end within seconds: keep them ten minutes.
    tasks: new TaskReceiver({
      maxTtlMs: 600_000,
      onerror: (error) => console.error(`[conformance-server] ${error.message}`),
    }),
    onsession: (session) => {
      new Server(session).onComplete((params) => {
        const prefix = params.argument.value.toLowerCase();
        const values =
          params.ref.type === "ref/prompt"
            ? (COMPLETIONS[params.argument.name] ?? []).filter((v) => v.startsWith(prefix))
            : [];
        return { completion: { values, total: values.length, hasMore: false } };
      });
    },
    onerror: (error) => console.error(`[conformance-server] ${error.message}`),
  });
  addContentTools(server);
  addClientRequestTools(server, transports);
  addDiagnosticTools(server);
  addInputRequiredTools(server);
  addTaskTools(server);
  addResources(server);
  addPrompts(server);
  return server;
}

/** Tools that return each kind of content, fail, log and report progress. */
function addContentTools(server: McpServer): void {
  server.tool("test_simple_text", { description: "Returns a simple text response" }, () =>
    text("This is a simple text response for testing."),
  );
  server.tool("test_image_content", { description: "Returns an image" }, () => ({
    content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }],
  }));
  server.tool("test_audio_content", { description: "Returns an audio clip" }, () => ({
    content: [{ type: "audio", data: silentWav(), mimeType: "audio/wav" }],
  }));
  server.tool("test_embedded_resource", { description: "Returns an embedded resource" }, () => ({
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
  }));
  server.tool("test_multiple_content_types", { description: "Returns text, an image and a resource" }, () => ({
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
  }));
  server.tool("test_tool_with_logging", { description: "Logs three messages while it runs" }, async (_args, ctx) => {
    await ctx.log("info", "Tool execution started", "conformance");
    await delay(50);
    await ctx.log("info", "Tool processing data", "conformance");
    await delay(50);
    await ctx.log("info", "Tool execution completed", "conformance");
    return "Tool with logging executed successfully";
  });
  server.tool("test_tool_with_progress", { description: "Reports progress 0, 50, 100 of 100" }, async (_args, ctx) => {
    // A no-op without a progress token, so the delays still happen.
    await ctx.progress(0, 100);
    await delay(50);
    await ctx.progress(50, 100);
    await delay(50);
    await ctx.progress(100, 100);
    return "Tool with progress executed successfully";
  });
  server.tool("test_error_handling", { description: "Always fails with isError" }, () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));
  server.tool(
    "json_schema_2020_12_tool",
    {
      description: "Tool with JSON Schema 2020-12 features",
      // Every keyword must reach tools/list as written ($anchor, allOf/anyOf, if/then/else since SEP-2106).
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: {
          address: {
            $anchor: "addressDef",
            type: "object",
            properties: { street: { type: "string" }, city: { type: "string" } },
          },
        },
        properties: {
          name: { type: "string" },
          address: { $ref: "#/$defs/address" },
          contactMethod: { type: "string", enum: ["phone", "email"] },
          phone: { type: "string" },
          email: { type: "string" },
        },
        allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
        if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
        then: { required: ["phone"] },
        else: { required: ["email"] },
        additionalProperties: false,
      },
    },
    (args) => `Received ${JSON.stringify(args)}`,
  );
}

/** Tools that ask the client for something while they run: sampling, elicitation, and a stream they let go of. */
function addClientRequestTools(server: McpServer, transports: TransportOf): void {
  server.tool(
    "test_sampling",
    {
      description: "Asks the client's LLM to answer a prompt",
      inputSchema: {
        type: "object",
        properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
        required: ["prompt"],
      },
    },
    async ({ prompt }, ctx) => {
      const answer = await ctx.createMessage({
        messages: [{ role: "user", content: { type: "text", text: prompt } }],
        maxTokens: 100,
      });
      return `LLM response: ${samplingText(answer)}`;
    },
  );
  server.tool(
    "test_elicitation",
    {
      description: "Asks the user for a username and email",
      inputSchema: {
        type: "object",
        properties: { message: { type: "string", description: "The message to show the user" } },
        required: ["message"],
      },
    },
    async ({ message }, ctx) => {
      const answer = await ctx.elicit({
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
      return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  );
  server.tool(
    "test_elicitation_sep1034_defaults",
    { description: "Elicits a form whose fields all have defaults" },
    async (_args, ctx) => {
      const answer = await ctx.elicit({
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
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  );
  server.tool(
    "test_elicitation_sep1330_enums",
    { description: "Elicits a form with every enum schema variant" },
    async (_args, ctx) => {
      const answer = await ctx.elicit({
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
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  );
  server.tool(
    "test_reconnection",
    { description: "Closes its SSE stream mid-call; the result comes on the resumed stream" },
    async (_args, ctx) => {
      // SEP-1699: let go of the connection mid-call; the client resumes with GET + Last-Event-ID for the result.
      await transports.get(ctx.session)?.closeSseStream(ctx.requestId);
      await delay(100);
      return "Reconnection test completed successfully";
    },
  );
}

/**
 * Tools the 2026-07-28 scenarios use to probe the server: one that needs a client capability, one that asks the user
 * while the client reads its reply stream, one that logs, two that change what is listed, one whose arguments are
 * mirrored into HTTP headers (x-mcp-header).
 */
function addDiagnosticTools(server: McpServer): void {
  server.tool(
    "test_missing_capability",
    { description: "Asks the client's LLM a question, so it needs the client's sampling capability" },
    async (_args, ctx) => {
      const answer = await ctx.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
        maxTokens: 20,
      });
      return `LLM response: ${samplingText(answer)}`;
    },
  );
  server.tool(
    "test_streaming_elicitation",
    { description: "Asks the user to confirm before it answers" },
    async (_args, ctx) => {
      const answer = await ctx.elicit(oneField("Proceed?", "confirm", "boolean"));
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  );
  server.tool("test_logging_tool", { description: "Logs two messages while it runs" }, async (_args, ctx) => {
    await ctx.log("info", "Logging tool started", "conformance");
    await ctx.log("info", "Logging tool finished", "conformance");
    return "Logging tool executed successfully";
  });

  // Each call adds the extra tool (prompt) when it is missing and removes it when present: the list changes every time.
  let extraTool: McpRegistration | undefined;
  server.tool("test_trigger_tool_change", { description: "Adds or removes the tool test_extra_tool" }, () => {
    if (extraTool !== undefined) {
      extraTool.remove();
      extraTool = undefined;
      return "Removed test_extra_tool";
    }
    extraTool = server.tool("test_extra_tool", { description: "Added by test_trigger_tool_change" }, () => "extra");
    return "Added test_extra_tool";
  });
  let extraPrompt: McpRegistration | undefined;
  server.tool("test_trigger_prompt_change", { description: "Adds or removes the prompt test_extra_prompt" }, () => {
    if (extraPrompt !== undefined) {
      extraPrompt.remove();
      extraPrompt = undefined;
      return "Removed test_extra_prompt";
    }
    extraPrompt = server.prompt("test_extra_prompt", { description: "Added by test_trigger_prompt_change" }, () => ({
      messages: [{ role: "user", content: { type: "text", text: "An extra prompt." } }],
    }));
    return "Added test_extra_prompt";
  });

  server.tool(
    "test_custom_headers",
    {
      description: "Echoes its arguments; region and priority travel as Mcp-Param-Region and Mcp-Param-Priority",
      inputSchema: {
        type: "object",
        properties: {
          region: { type: "string", description: "A region name", "x-mcp-header": "Region" },
          priority: { type: "integer", description: "A priority", "x-mcp-header": "Priority" },
          query: { type: "string", description: "Not mirrored into a header" },
        },
        required: ["region", "priority", "query"],
      },
    },
    ({ region, priority, query }) => `region=${region} priority=${priority} query=${query}`,
  );
}

/**
 * Tools and a prompt that need the client's answer before they can finish. Written the one way a handler asks the
 * client; on 2026-07-28 the questions travel as an input_required result instead of requests on the reply stream.
 */
function addInputRequiredTools(server: McpServer): void {
  server.tool(
    "test_input_required_result_elicitation",
    { description: "Asks the user's name, then greets them" },
    async (_args, ctx) => {
      // Named, so a client may answer before it is asked (the suite sends user_name on a first call).
      const answer = await ctx.elicit(oneField("What is your name?", "name", "string"), { inputKey: "user_name" });
      return `Hello, ${String(answer.content?.name ?? "stranger")}!`;
    },
  );
  server.tool(
    "test_input_required_result_sampling",
    { description: "Asks the client's LLM for the capital of France" },
    async (_args, ctx) => {
      const answer = await ctx.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
        maxTokens: 100,
      });
      return `LLM response: ${samplingText(answer)}`;
    },
  );
  server.tool(
    "test_input_required_result_list_roots",
    { description: "Lists the client's roots" },
    async (_args, ctx) => {
      const { roots } = await ctx.listRoots();
      return `Roots: ${roots.map((root) => root.uri).join(", ")}`;
    },
  );
  server.tool(
    "test_input_required_result_request_state",
    { description: "Asks the user to confirm, then reports that the round trip kept its state" },
    async (_args, ctx) => {
      const answer = await ctx.elicit(oneField("Please confirm", "ok", "boolean"));
      return `state-ok: confirmed=${String(answer.content?.ok)}`;
    },
  );
  server.tool(
    "test_input_required_result_multiple_inputs",
    { description: "Asks the user, the client's LLM and the client's roots at once" },
    async (_args, ctx) => {
      const [name, greeting, { roots }] = await Promise.all([
        ctx.elicit(oneField("What is your name?", "name", "string")),
        ctx.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
          maxTokens: 50,
        }),
        ctx.listRoots(),
      ]);
      return `${samplingText(greeting)} ${String(name.content?.name)} (${roots.length} roots)`;
    },
  );
  server.tool(
    "test_input_required_result_multi_round",
    { description: "Asks the user two questions, the second after the first is answered" },
    async (_args, ctx) => {
      const name = await ctx.elicit(oneField("Step 1: What is your name?", "name", "string"));
      const color = await ctx.elicit(oneField("Step 2: What is your favorite color?", "color", "string"));
      return `${String(name.content?.name)} likes ${String(color.content?.color)}`;
    },
  );
  server.tool(
    "test_input_required_result_tampered_state",
    { description: "Asks the user to confirm; a retry whose state was altered is refused" },
    async (_args, ctx) => {
      const answer = await ctx.elicit(oneField("Please confirm", "ok", "boolean"));
      return `Confirmed: ${String(answer.content?.ok)}`;
    },
  );
  server.tool(
    "test_input_required_result_capabilities",
    { description: "Asks the user for a city, or the client's LLM when the client cannot ask its user" },
    async (_args, ctx) => {
      try {
        const answer = await ctx.elicit(oneField("Which city?", "city", "string"));
        return `City from the user: ${String(answer.content?.city)}`;
      } catch (error) {
        if (!(error instanceof CapabilityError)) throw error;
      }
      const answer = await ctx.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "Name a city" } }],
        maxTokens: 20,
      });
      return `City from the LLM: ${samplingText(answer)}`;
    },
  );
  server.prompt(
    "test_input_required_result_prompt",
    { description: "Asks the user what context the prompt should use" },
    async (_args, ctx) => {
      const answer = await ctx.elicit(oneField("What context should the prompt use?", "context", "string"));
      return {
        messages: [{ role: "user", content: { type: "text", text: `Context: ${String(answer.content?.context)}` } }],
      };
    },
  );
}

/** Sleeps `ms`, or rejects as soon as `signal` aborts (a cancelled task stops working). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

/** The tools the Tasks extension scenarios (SEP-2663) call. */
function addTaskTools(server: McpServer): void {
  server.tool(
    "greet",
    {
      description: "Greets by name at once (never a task)",
      inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
    ({ name }) => `Hello, ${name}!`,
  );
  server.tool(
    "slow_compute",
    {
      description: "Works for the given seconds, as a task where the client takes one",
      inputSchema: {
        type: "object",
        properties: { seconds: { type: "number", minimum: 0 }, label: { type: "string" } },
        required: ["seconds"],
      },
      taskSupport: "optional",
    },
    async ({ seconds, label }, ctx) => {
      ctx.task?.status(`Computing ${label ?? "something"} for ${seconds} s`);
      await sleep(seconds * 1000, ctx.signal);
      return `Computed ${label ?? "something"} in ${seconds} s`;
    },
  );
  server.tool(
    "failing_job",
    { description: "Runs as a task and ends with a tool error after a second", taskSupport: "required" },
    async (_args, ctx) => {
      await sleep(1000, ctx.signal);
      throw new Error("The job failed (a tool execution error)");
    },
  );
  server.tool(
    "protocol_error_job",
    { description: "Runs as a task and fails with a JSON-RPC error", taskSupport: "optional" },
    async (_args, ctx) => {
      await sleep(200, ctx.signal);
      throw new RequestRefusedError(-32603, "Internal error: the job crashed");
    },
  );
  server.tool(
    "confirm_delete",
    {
      description: "Asks the user to confirm deleting a file, as a task",
      inputSchema: { type: "object", properties: { filename: { type: "string" } }, required: ["filename"] },
      taskSupport: "optional",
    },
    async ({ filename }, ctx) => {
      const answer = await ctx.elicit(oneField(`Delete ${filename}?`, "confirm", "boolean"));
      const confirmed = answer.action === "accept" && answer.content?.confirm === true;
      return confirmed ? `Deleted ${filename}` : `Kept ${filename}`;
    },
  );
  server.tool(
    "multi_input",
    { description: "Asks the user two questions at once, as a task", taskSupport: "optional" },
    async (_args, ctx) => {
      const [name, confirm] = await Promise.all([
        ctx.elicit(oneField("What is your name?", "name", "string")),
        ctx.elicit(oneField("Proceed?", "confirm", "boolean")),
      ]);
      return `${String(name.content?.name)}: ${String(confirm.content?.confirm)}`;
    },
  );
  server.tool(
    "test_tool_with_task",
    {
      description: "Asks for a name in a round of the call, then goes on as a task",
      taskSupport: "required",
      taskStart: "handler",
    },
    async (_args, ctx) => {
      const answer = await ctx.elicit(oneField("What is your name?", "name", "string"));
      await ctx.startTask();
      await sleep(100, ctx.signal);
      return `Hello, ${String(answer.content?.name)}!`;
    },
  );
}

function addResources(server: McpServer): void {
  server.resource(
    "test://static-text",
    { name: "static-text", description: "A static text resource", mimeType: "text/plain" },
    (uri) => ({
      contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }],
    }),
  );
  server.resource(
    "test://static-binary",
    { name: "static-binary", description: "A static binary resource (PNG)", mimeType: "image/png" },
    (uri) => ({ contents: [{ uri, mimeType: "image/png", blob: RED_PIXEL_PNG }] }),
  );
  server.resource(
    "test://watched-resource",
    { name: "watched-resource", description: "A resource clients can subscribe to", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri, mimeType: "text/plain", text: "Watched resource content." }] }),
  );
  server.resourceTemplate(
    "test://template/{id}/data",
    { name: "template-data", description: "Data for an id", mimeType: "application/json" },
    (uri, { id }) => ({
      contents: [
        {
          uri,
          mimeType: "application/json",
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    }),
  );
}

function addPrompts(server: McpServer): void {
  server.prompt("test_simple_prompt", { description: "A prompt without arguments" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  server.prompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with two arguments",
      arguments: [
        { name: "arg1", description: "First test argument", required: true },
        { name: "arg2", description: "Second test argument", required: true },
      ],
    },
    ({ arg1, arg2 }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
      ],
    }),
  );
  server.prompt(
    "test_prompt_with_embedded_resource",
    {
      description: "A prompt that embeds a resource",
      arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
          },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  server.prompt("test_prompt_with_image", { description: "A prompt with an image" }, () => ({
    messages: [
      { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));
}

/** Serves the fixture at http://127.0.0.1:PORT/mcp; resolves with the bound port and a stop function. */
export async function startConformanceServer(port: number): Promise<{ port: number; stop: () => Promise<void> }> {
  const transports: TransportOf = new WeakMap();
  const server = createConformanceServer(transports);
  const mcp = createStreamableHttpServer({
    path: "/mcp",
    onSession: async (transport) => {
      transports.set(await server.connect(transport), transport);
    },
    // 2026-07-28 requests mirror x-mcp-header parameters into Mcp-Param-* headers, checked against the arguments.
    headerParams: server.headerParams,
    // Short, so the SEP-1699 polling scenario and clients resume quickly.
    retryMs: 500,
    onerror: (error) => console.error(`[conformance-server] ${error.message}`),
  });
  const http = await listenHttp(mcp.nodeListener, { port, host: "127.0.0.1" });
  return {
    port: http.port,
    async stop() {
      await mcp.close();
      await server.close();
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
