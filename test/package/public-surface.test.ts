// The runtime's public surface: the values mcpgen/runtime and mcpgen/web export, and no @internal declaration in the published .d.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { PUBLISHED } from "../../packages/published.mjs";
import { repoRoot } from "../kit/paths.js";

/**
 * The values of runtime/web.ts (mcpgen/web, and the browser build of mcpgen/runtime). Adding one is a deliberate
 * change to the API: add it here in the same commit. Everything else a runtime module exports serves the runtime.
 */
const WEB_VALUES = [
  "CONNECTION_LOST_CODE",
  "CapabilityError",
  "ClientSession",
  "ConnectionClosedError",
  "DEFAULT_AUTHORIZATION_RETRIES",
  "DEFAULT_MAX_EXPLAIN_DEPTH",
  "DEFAULT_MAX_EXPLAINED_ISSUES",
  "DEFAULT_MAX_INPUT_ROUNDS",
  "DEFAULT_MAX_TASK_INPUTS",
  "DEFAULT_MAX_IN_FLIGHT_REQUESTS",
  "DEFAULT_MAX_SESSIONS",
  "DEFAULT_MAX_TASK_POLL_INTERVAL_MS",
  "DEFAULT_MAX_TOOL_LIST_PAGES",
  "DEFAULT_MAX_TRACKED_TOOLS",
  "DEFAULT_MIN_TASK_POLL_INTERVAL_MS",
  "DEFAULT_PROBE_TIMEOUT_MS",
  "DEFAULT_PROGRESS_INTERVAL_MS",
  "DEFAULT_REQUEST_TIMEOUT_MS",
  "DEFAULT_SESSION_IDLE_TIMEOUT_MS",
  "DEFAULT_TASK_POLL_INTERVAL_MS",
  "ErrorCode",
  "EventReplayError",
  "InputRoundsExceededError",
  "HttpServerTransport",
  "HttpStatusError",
  "InMemoryEventStore",
  "InMemoryLink",
  "InMemoryTransport",
  "InvalidResultError",
  "LATEST_PROTOCOL_VERSION",
  "LOGGING_LEVELS",
  "LocalErrorCode",
  "LoggingDisabledError",
  "MODEL_IMMEDIATE_RESPONSE_META",
  "McpContext",
  "McpServer",
  "MemoryOperationStore",
  "ProcessExitedError",
  "ProgressOrderError",
  "ProtocolVersionError",
  "RELATED_TASK_META",
  "RESUMABLE_FAILED_CODE",
  "RequestCancelledError",
  "RequestRefusedError",
  "RequestTimeoutError",
  "ResumeFailedError",
  "RpcError",
  "SUPPORTED_PROTOCOL_VERSIONS",
  "ServerSession",
  "Session",
  "SessionExpiredError",
  "SessionStateKey",
  "StreamLostError",
  "StreamableHttpClientTransport",
  "TaskCancelledError",
  "TaskInputsExceededError",
  "TaskHandle",
  "UndeliverableMessageError",
  "attachTask",
  "checkHostAndOrigin",
  "compileSchema",
  "createInMemoryPair",
  "createStreamableHttpServer",
  "explainSchema",
  "formatBaggage",
  "formatTraceparent",
  "formatTracestate",
  "hasCapability",
  "isJsonRpcMessage",
  "parseBaggage",
  "parseTraceparent",
  "parseTracestate",
  "readTraceContext",
  "requestAsTask",
  "requestOrTask",
  "requestPeer",
  "resumableClient",
  "resumerOf",
  "watchToolTaskSupport",
  "withTraceContext",
];

/** What runtime/index.ts (mcpgen/runtime, and mcpgen through the generated SDK) adds: the parts that need Node. */
const NODE_VALUES = [
  "AsyncCallRejectedError",
  "AsyncToolCall",
  "AsyncTools",
  "DEFAULT_BUSY_POLL_MICROS",
  "DEFAULT_HTTP_SERVER_TIMEOUTS",
  "DEFAULT_INHERITED_ENV_VARS",
  "DEFAULT_MAX_LINE_BYTES",
  "DEFAULT_STDERR_TAIL_BYTES",
  "DEFAULT_STDERR_TAIL_LINES",
  "FrameTooLargeError",
  "InvalidJsonLineError",
  "InvalidUtf8Error",
  "ResumableRequests",
  "StdioClientTransport",
  "StdioServerTransport",
  "TaskReceiver",
  "callToolAsync",
  "callToolPreferAsync",
  "createHttpServer",
  "defaultChildEnvironment",
  "joinToolAsync",
  "listenHttp",
  "serverSupportsAsync",
];

describe("the runtime's value exports", () => {
  it.each([
    ["runtime/web.ts", () => import("../../runtime/web.js"), WEB_VALUES],
    ["runtime/index.ts", () => import("../../runtime/index.js"), [...WEB_VALUES, ...NODE_VALUES]],
  ])("%s exports exactly the committed list", async (_, load, expected) => {
    expect(Object.keys(await load()).sort()).toEqual([...expected].sort());
  });
});

/** Every .ts/.d.ts file under a folder, relative to it. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(suffix));
}

/** The name of a declaration, or undefined for one without a plain name (a constructor, an index signature). */
function nameOf(node: ts.Node): string | undefined {
  if (ts.isVariableStatement(node)) return node.declarationList.declarations.map((d) => d.name.getText()).join(",");
  const name = (node as { name?: ts.Node }).name;
  return name !== undefined && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) ? name.text : undefined;
}

/**
 * Top-level declarations and members of classes and interfaces, as "name" or "Container.member", with whether
 * the declaration's own doc comment carries @internal.
 */
function declarations(file: string): { key: string; internal: boolean }[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { key: string; internal: boolean }[] = [];
  const internal = (node: ts.Node) => ts.getJSDocTags(node).some((tag) => tag.tagName.text === "internal");
  for (const statement of source.statements) {
    const name = nameOf(statement);
    if (name === undefined) continue;
    out.push({ key: name, internal: internal(statement) });
    if (ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement))
      for (const member of statement.members) {
        const memberName = nameOf(member);
        if (memberName !== undefined) out.push({ key: `${name}.${memberName}`, internal: internal(member) });
      }
  }
  return out;
}

describe("stripInternal", () => {
  const pkg = PUBLISHED.mcpgen;
  const dist = join(pkg, "dist");
  /** Each published folder (dist/runtime, dist/generated) and the sources it is built from. */
  const folders = ["runtime", "generated"];

  it("no declaration tagged @internal in the sources reaches the published .d.ts", () => {
    if (!existsSync(dist)) throw new Error(`${relative(repoRoot, dist)} is missing: run \`npm run build\` first`);
    const tagged: string[] = [];
    const leaked: string[] = [];
    for (const folder of folders)
      for (const file of filesUnder(join(repoRoot, folder), ".ts")) {
        if (file.endsWith(".d.ts")) continue;
        const internal = declarations(join(repoRoot, folder, file))
          .filter((d) => d.internal)
          .map((d) => d.key);
        tagged.push(...internal);
        const built = join(dist, folder, file.replace(/\.ts$/, ".d.ts"));
        if (!existsSync(built)) continue;
        const published = new Set(declarations(built).map((d) => d.key));
        leaked.push(...internal.filter((key) => published.has(key)).map((key) => `${folder}/${file}: ${key}`));
      }
    // The check means something only while the sources tag some declarations (timer callbacks, protocol internals).
    expect(tagged.length).toBeGreaterThan(0);
    expect(leaked).toEqual([]);
  });

  it("no published .d.ts mentions @internal", () => {
    if (!existsSync(dist)) throw new Error(`${relative(repoRoot, dist)} is missing: run \`npm run build\` first`);
    const mentions = filesUnder(dist, ".d.ts").filter((f) => readFileSync(join(dist, f), "utf8").includes("@internal"));
    expect(mentions).toEqual([]);
  });
});
