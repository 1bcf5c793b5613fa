// Conformance fixture client: run by the official MCP conformance suite with the server URL as last argument; MCP_CONFORMANCE_SCENARIO picks the behaviour.
import {
  Client,
  StreamableHttpClientTransport,
  type ElicitRequestParams,
  type ElicitResult,
  type JsonObject,
} from "../../generated/sdk.js";
import {
  ClientCredentialsClient,
  JwtBearerClient,
  OAuthClient,
  requestIdJag,
  type OAuthAuthorizer,
} from "../../runtime/auth/index.js";

type ConnectedClient = Awaited<ReturnType<typeof Client.connect>>;

const CLIENT_INFO = { name: "mcpgen-conformance-client", version: "0.1.0" };

async function connect(
  url: string,
  capabilities: JsonObject = {},
  authorization?: OAuthAuthorizer,
): Promise<{ client: ConnectedClient; transport: StreamableHttpClientTransport }> {
  const transport = new StreamableHttpClientTransport(authorization === undefined ? { url } : { url, authorization });
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

  /** The envelope on every request, and a retry on the revision a -32022 names; all three client capabilities. */
  async "request-metadata"(url) {
    const { client } = await connect(url, { roots: {}, sampling: {}, elicitation: {} });
    const { tools } = await client.listTools();
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} });
    await client.peer.close();
  },

  /** MRTR: each tool answers input_required; the elicitation is answered and the call sent again until complete. */
  async "sep-2322-client-request-state"(url) {
    const { client } = await connect(url, { elicitation: { form: {} } });
    client.onElicit(() => ({ action: "accept", content: { confirmed: true } }));
    const { tools } = await client.listTools();
    await Promise.all(tools.map((tool) => client.callTool({ name: tool.name, arguments: {} })));
    await client.peer.close();
  },

  /** Every method that names something, so each one's Mcp-Method and Mcp-Name headers are seen. */
  async "http-standard-headers"(url) {
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} });
    const { resources } = await client.listResources();
    for (const resource of resources) await client.readResource({ uri: resource.uri });
    const { prompts } = await client.listPrompts();
    for (const prompt of prompts) await client.getPrompt({ name: prompt.name });
    await client.peer.close();
  },

  /** The calls the suite lists, with their x-mcp-header parameters mirrored into Mcp-Param-* headers. */
  async "http-custom-headers"(url) {
    const { client } = await connect(url);
    await client.listTools();
    for (const call of conformanceToolCalls()) await client.callTool({ name: call.name, arguments: call.arguments });
    await client.peer.close();
  },

  /** Tools whose x-mcp-header is invalid are left out of listTools(); every tool still listed is called. */
  async "http-invalid-tool-headers"(url) {
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: { region: "us-west1" } });
    await client.peer.close();
  },

  /** A network $ref in an inputSchema is data, never fetched. */
  async "json-schema-ref-no-deref"(url) {
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    console.log(JSON.stringify(tools.map((tool) => tool.name)));
    await client.peer.close();
  },

  /** The 2020-12 schema comes back byte for byte: echoed to the server as the tool received it. */
  async "json-schema-2020-12-preservation"(url) {
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")?.inputSchema;
    if (schema === undefined) throw new Error("the server offers no json_schema_2020_12_tool");
    await client.callTool({ name: "json_schema_echo", arguments: { schema } });
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

/** What the suite passes in MCP_CONFORMANCE_CONTEXT: pre-registered credentials, keys, an identity provider. */
interface ConformanceContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_issuer?: string;
  idp_token_endpoint?: string;
}

/** The tool calls a scenario's context lists (http-custom-headers), each with the arguments to send. */
function conformanceToolCalls(): { name: string; arguments: Record<string, unknown> }[] {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  const value: unknown = raw === undefined || raw === "" ? {} : JSON.parse(raw);
  const calls = (value as { toolCalls?: unknown }).toolCalls;
  if (!Array.isArray(calls)) throw new Error("MCP_CONFORMANCE_CONTEXT lists no toolCalls");
  return calls.map((call: unknown) => {
    const { name, arguments: args } = call as { name?: unknown; arguments?: unknown };
    if (typeof name !== "string" || typeof args !== "object" || args === null)
      throw new Error(`a toolCalls entry lacks name or arguments: ${JSON.stringify(call)}`);
    return { name, arguments: args as Record<string, unknown> };
  });
}

function conformanceContext(): ConformanceContext {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw === undefined || raw === "") return {};
  const value: unknown = JSON.parse(raw);
  if (typeof value !== "object" || value === null) throw new Error("MCP_CONFORMANCE_CONTEXT is not a JSON object");
  const context: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) if (typeof item === "string") context[key] = item;
  return context;
}

/**
 * The authorization server the scenario's MCP server reports in its protected resource metadata (path-based
 * well-known URI, then the root one). The suite hands pre-registered credentials over without naming their
 * issuer; this fixture, which trusts the suite's servers by construction, takes the one reported as the issuer those
 * credentials belong to. A real app configures the issuer along with the credentials instead.
 */
async function reportedIssuer(url: string): Promise<string> {
  const server = new URL(url);
  const path = server.pathname.replace(/\/+$/, "");
  const candidates = [`${server.origin}/.well-known/oauth-protected-resource${path}`];
  if (path !== "") candidates.push(`${server.origin}/.well-known/oauth-protected-resource`);
  for (const candidate of candidates) {
    const response = await fetch(candidate, { headers: { accept: "application/json" } });
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    const metadata: unknown = await response.json();
    const servers = (metadata as { authorization_servers?: unknown }).authorization_servers;
    if (Array.isArray(servers) && typeof servers[0] === "string") return servers[0];
  }
  throw new Error(`the MCP server at ${url} reports no authorization server`);
}

/** The client ID metadata document URL the suite's authorization servers expect from a client that has one. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

/**
 * The user, played headlessly: the authorization server would show a login page; the suite's answers at once
 * with a redirect to our redirect URI, whose code and state go to finishAuthorization.
 */
function interactiveClient(context: ConformanceContext, issuer: string | undefined, dpop: boolean): OAuthClient {
  const oauth: OAuthClient = new OAuthClient(
    {
      clientMetadata: { client_name: CLIENT_INFO.name, redirect_uris: ["http://localhost:3000/callback"] },
      clientMetadataUrl: CLIENT_METADATA_URL,
      clientInformation:
        context.client_id === undefined
          ? undefined
          : { client_id: context.client_id, client_secret: context.client_secret },
      async redirectToAuthorization(url) {
        const response = await fetch(url, { redirect: "manual" });
        const location = response.headers.get("location");
        await response.body?.cancel();
        if (location === null)
          throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
        await oauth.finishAuthorization(new URL(location, url));
      },
    },
    { authorizationTimeoutMs: 10_000, dpop, ...(issuer === undefined ? {} : { issuer }) },
  );
  return oauth;
}

async function authorizerFor(url: string, scenario: string, context: ConformanceContext): Promise<OAuthAuthorizer> {
  if (scenario === "auth/client-credentials-jwt") {
    if (context.client_id === undefined || context.private_key_pem === undefined)
      throw new Error("the context lacks client_id or private_key_pem");
    return new ClientCredentialsClient({
      issuer: await reportedIssuer(url),
      clientId: context.client_id,
      privateKey: { key: context.private_key_pem, algorithm: context.signing_algorithm ?? "ES256" },
    });
  }
  if (scenario === "auth/client-credentials-basic") {
    if (context.client_id === undefined || context.client_secret === undefined)
      throw new Error("the context lacks client_id or client_secret");
    return new ClientCredentialsClient({
      issuer: await reportedIssuer(url),
      clientId: context.client_id,
      clientSecret: context.client_secret,
    });
  }
  if (scenario === "auth/cross-app-access-complete-flow") {
    const { client_id, client_secret, idp_client_id, idp_id_token, idp_issuer, idp_token_endpoint } = context;
    if (
      client_id === undefined ||
      idp_client_id === undefined ||
      idp_id_token === undefined ||
      idp_token_endpoint === undefined
    ) {
      throw new Error("the context lacks the client or identity provider details");
    }
    return new JwtBearerClient({
      issuer: await reportedIssuer(url),
      clientId: client_id,
      clientSecret: client_secret,
      // SEP-990: the enterprise identity provider turns the user's ID token into a grant for this MCP server.
      assertion: ({ issuer, resource }) =>
        requestIdJag({
          tokenEndpoint: idp_token_endpoint,
          issuer: idp_issuer,
          clientId: idp_client_id,
          idToken: idp_id_token,
          audience: issuer,
          resource,
        }),
    });
  }
  // Pre-registered credentials (auth/pre-registration) belong to the scenario's authorization server. The DPoP
  // scenarios (SEP-1932) want sender-constrained tokens, which this client asks for only when told to.
  const issuer = context.client_secret === undefined ? undefined : await reportedIssuer(url);
  return interactiveClient(context, issuer, scenario.startsWith("auth/dpop"));
}

/** Every authorization scenario: connect (authorizing on the first 401), list the tools and call each one. */
async function authorized(url: string, scenario: string): Promise<void> {
  const { client } = await connect(url, {}, await authorizerFor(url, scenario, conformanceContext()));
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const result = await client.callTool({ name: tool.name, arguments: {} });
    console.log(JSON.stringify(result.content));
  }
  await client.peer.close();
}

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const run = scenario.startsWith("auth/") ? (target: string) => authorized(target, scenario) : scenarios[scenario];
  if (!url || !/^https?:\/\//.test(url))
    throw new Error("usage: client.js <server-url> (with MCP_CONFORMANCE_SCENARIO set)");
  if (!run)
    throw new Error(
      `unsupported scenario ${JSON.stringify(scenario)}; supported: ${Object.keys(scenarios).join(", ")} and auth/*`,
    );
  await run(url);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
