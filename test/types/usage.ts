// Compile-only usage checks: narrowing, typed stubs and type errors that must stay errors. Checked by tsc in types.test.ts.
import type { Peer } from "../../runtime/index.js";
import { Client, Server, isServerNotification, isClientRequest, isContentBlock } from "../../generated/index.js";
import type {
  CallToolResult,
  ParamsOf,
  ResultOf,
  ClientRequestMethod,
  ServerRequestMethod,
  ListToolsResult,
  TextContent,
} from "../../generated/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_ok?: T): void {}

export function narrowing(m: unknown): string {
  if (isServerNotification(m)) {
    switch (m.method) {
      case "notifications/progress":
        return `${m.params.progressToken}:${m.params.progress}/${m.params.total ?? "?"}`;
      case "notifications/message":
        return m.params.level;
      case "notifications/requests/resumePolicy":
        return m.params.resumeToken;
      case "notifications/resources/updated":
        return m.params.uri;
      default:
        // @ts-expect-error: progressToken exists only on progress notifications
        return String(m.params?.progressToken);
    }
  }
  if (isClientRequest(m)) {
    if (m.method === "tools/call") return m.params.name;
    if (m.method === "tools/async/get") return String(m.params.token);
  }
  if (isContentBlock(m) && m.type === "text") {
    const text: TextContent = m;
    return text.text;
  }
  return "";
}

export async function stubs(peer: Peer): Promise<void> {
  const client = new Client(peer);
  const result = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
  assertType<Equal<typeof result, CallToolResult>>();
  const tools = await client.listTools();
  assertType<Equal<typeof tools, ListToolsResult>>();
  // @ts-expect-error: `name` is required
  await client.callTool({ arguments: {} });
  // @ts-expect-error: `name` must be a string
  await client.callTool({ name: 42 });
  // @ts-expect-error: no such request on the client
  await client.createMessage({ messages: [], maxTokens: 1 });

  const server = new Server(peer);
  server.onCallTool(async (params) => {
    const name: string = params.name;
    return { content: [{ type: "text", text: name }] };
  });
  // @ts-expect-error: a tool result needs `content`
  server.onCallTool(() => ({ structuredContent: {} }));
  const sampled = await server.createMessage({ messages: [], maxTokens: 10 });
  assertType<Equal<typeof sampled.role, "assistant" | "user">>();
  await server.notifyResumePolicy({ requestId: 0, resumeToken: "t", minWait: 1 });
}

export function maps(): void {
  assertType<Equal<ParamsOf<"tools/call">, import("../../generated/index.js").CallToolRequestParams>>();
  assertType<Equal<ResultOf<"tools/async/call">, import("../../generated/index.js").CallToolAsyncResult>>();
  assertType<Equal<ResultOf<"tools/async/get">, CallToolResult>>();
  const m: ClientRequestMethod = "requests/resume";
  const s: ServerRequestMethod = "elicitation/create";
  // @ts-expect-error: the server does not send tools/call
  const bad: ServerRequestMethod = "tools/call";
  (void m, s, bad);
}
