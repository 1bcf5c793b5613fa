// The high-level server: register tools, resources and prompts once; each connect(transport) serves them on a new ServerSession.
import { ErrorCode, RpcError, type JsonObject } from "../rpc/jsonrpc.js";
import { isPlainObject as isObject } from "../rpc/jsonrpc.js";
import type { DispatchTable } from "../rpc/dispatch.js";
import type { RequestContext } from "../rpc/peer.js";
import type { Transport } from "../rpc/transport.js";
import { ServerSession, type ServerSessionOptions } from "../mcp/lifecycle.js";
import { CapabilityError, InputRequiredSignal, ReplacedAnswer, RequestRefusedError } from "../rpc/errors.js";
import { RequestStateSealer } from "../eras/2026-07-28/request-state.js";
import type { ParamHeader } from "../transports/http/modern-headers.js";
import { LISTEN, type RevisionTableMap } from "../eras/2026-07-28/wire.js";
import { Subscriptions } from "../eras/2026-07-28/subscriptions.js";
import type { ChangeFeed, ServerChange } from "../store/change-feed.js";
import { limitOption } from "../rpc/limits.js";
import { McpContext, sendLog, type McpConnection, type TaskStarter } from "./context.js";
import { compileSchema as builtInCompiler, type SchemaCompiler } from "./tool-schema.js";
import { toolContract, type Checked, type ToolContract } from "./tool-contract.js";
import type { StandardSchemaV1 } from "./standard-schema.js";
import {
  LOGGING_LEVELS,
  type McpIcon,
  type McpLoggingLevel,
  type McpPromptArgument,
  type McpToolAnnotations,
  type McpToolResult,
  type McpToolResultFor,
  type ObjectJsonSchema,
  type ToolArguments,
  type ToolInput,
  type ToolSchema,
} from "./types.js";
import { defined, errorMessage, handlerResult } from "./results.js";
import {
  DEFAULT_MAX_URI_LENGTH,
  readResource,
  resourceEntry,
  resourceUri,
  templateEntry,
  type McpResourceConfig,
  type McpResourceReader,
  type McpTemplateReader,
  type ResourceEntry,
  type TemplateEntry,
} from "./resources.js";
import {
  getPrompt,
  promptEntry,
  type McpPromptConfig,
  type McpPromptHandler,
  type PromptArguments,
  type PromptEntry,
} from "./prompts.js";

export type { McpResourceConfig, McpResourceReadResult, McpResourceReader, McpTemplateReader } from "./resources.js";
export type { McpPromptConfig, McpPromptHandler, PromptArguments } from "./prompts.js";
import type { TaskReceiver } from "../eras/2025-11-25/tasks/receiver.js";
import type { TaskControl } from "../eras/2025-11-25/tasks/task.js";
import {
  TOOLS_CALL,
  allowsTasks,
  taskSupportOption,
  taskWireForCall,
  type TaskSupport,
} from "../eras/2025-11-25/tasks/tools.js";

/** Default of McpServerInit.maxInputRounds. */
const DEFAULT_MAX_INPUT_ROUNDS = 10;

/** Session settings McpServer passes to a session factory; matches the generated `ServerOptions`. */
export type McpSessionSettings = Omit<ServerSessionOptions, "inbound" | "outbound" | "isMessage">;

/** Everything about an McpServer except how its sessions get their method tables. */
export interface McpServerInit extends Omit<McpSessionSettings, "capabilities"> {
  /**
   * Capabilities to advertise on top of what registrations imply. Declaring `tools`, `resources` or `prompts`
   * here serves that category even while empty (so tools added later can be announced with list_changed);
   * `logging` and `resources.subscribe` switch those features on.
   */
  capabilities?: JsonObject;
  /** Advertise listChanged for tools/resources/prompts and announce changes after connect; default true. */
  listChanged?: boolean;
  /** Advertise logging, answer logging/setLevel, and let handlers log through ctx.log; default false. */
  logging?: boolean;
  /** Advertise resources.subscribe and answer resources/subscribe and unsubscribe; default false. */
  subscriptions?: boolean;
  /**
   * How JSON Schema tool schemas become argument and result checks; default: a small built-in checker (type,
   * required, enum...). Standard Schemas are checked by their own `~standard.validate`.
   */
  compileSchema?: SchemaCompiler;
  /**
   * Turns a tool's Standard Schema into the JSON Schema tools/list shows, for schemas that do not give one
   * themselves through Standard JSON Schema (`~standard.jsonSchema`; zod 4 does): e.g. Valibot's `toJsonSchema`
   * from `@valibot/to-json-schema`. A tool's own `toJsonSchema` comes first. Default: none (such a tool is refused).
   */
  // Method syntax on purpose: a converter typed for one library's schemas is accepted (parameter bivariance).
  toJsonSchema?(schema: StandardSchemaV1): object;
  /** Called with every new session before its transport starts (to add handlers of your own). */
  onsession?: (session: ServerSession) => void;
  /**
   * OAuth scopes a caller's grant must hold to send a method at all (e.g. `{ "resources/read": ["files:read"] }`),
   * beside the per-tool `scopes`. Enforced by the HTTP auth hooks through `requiredScopes` (see mcpgen/auth).
   */
  methodScopes?: { readonly [method: string]: readonly string[] };
  /**
   * Where tools run as tasks (`new TaskReceiver(options)`, Node only; shared by every connection). Needed to
   * register a tool whose taskSupport is optional or required; tasks are then advertised (tasks.list,
   * tasks.cancel, tasks.requests.tools.call).
   */
  tasks?: TaskReceiver;
  /** Advertise tasks even while no tool allows them (tools added later may); default false. */
  advertiseTasks?: boolean;
  /**
   * How many times one request's handler may end with `ctx.inputRequired(...)` for a 2025-11-25 client (each time the
   * server sends the input requests and runs the handler again); one more fails the request. Default 10.
   */
  maxInputRounds?: number;
  /**
   * Where this server publishes its list changes and resource updates and hears those of the other nodes behind the
   * same endpoint (`redisStore.changeFeed()`), so a `subscriptions/listen` stream on any node hears them. Default: none.
   */
  changes?: ChangeFeed;
  /**
   * The longest resource URI served, in characters (UTF-16 code units): resources/read, subscribe and unsubscribe
   * with a longer one are answered -32602 with data `{ maxUriLength }` before any lookup or template match.
   * Default 8192; 0 or Infinity for no cap.
   */
  maxUriLength?: number;
}

/** How McpServer builds a session: either the method tables, or a factory such as the generated `Server.create`. */
export type McpServerOptions = McpServerInit &
  (
    | {
        inbound: DispatchTable;
        outbound?: DispatchTable;
        isMessage?: (value: unknown) => boolean;
        /** The tables of the revisions after the SDK's (the generated `revisionTables`); without, 2025-11-25 only. */
        revisions?: RevisionTableMap;
        createSession?: undefined;
      }
    | { createSession: (settings: McpSessionSettings) => ServerSession; inbound?: undefined }
  );

/**
 * A tool's handler: `args` as validation gave them, and a result whose structuredContent fits the outputSchema `O`
 * (when the tool has one), or a string as shorthand for one text block.
 */
export type McpToolHandler<A, O = undefined> = (
  args: A,
  ctx: McpContext,
) => McpToolResultFor<O> | string | Promise<McpToolResultFor<O> | string>;

export interface McpToolConfig<
  S extends ToolSchema = ToolSchema,
  O extends ToolSchema | undefined = ToolSchema | undefined,
> {
  title?: string;
  description?: string;
  /**
   * The arguments' schema: a JSON Schema with type "object" (written as a literal it types the handler's `args`), or a
   * Standard Schema v1 (zod 4, Valibot, ArkType; `args` is its output type). Checked before the handler runs; the
   * handler gets the validated value. Default: any object.
   */
  inputSchema?: S;
  /**
   * When present, every successful result must carry structuredContent that fits it (checked before it is sent,
   * typed for the handler). A Standard Schema's validated output is what is sent.
   */
  outputSchema?: O;
  /**
   * Turns this tool's Standard Schemas into JSON Schema, before their own Standard JSON Schema interface and the
   * server's `toJsonSchema`. Not needed for JSON Schemas, nor for libraries that implement Standard JSON Schema.
   */
  // Method syntax on purpose: a converter typed for one library's schemas is accepted (parameter bivariance).
  toJsonSchema?(schema: StandardSchemaV1): object;
  annotations?: McpToolAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /**
   * OAuth scopes a caller's grant must hold to call this tool. Over HTTP with mcpgen/auth a call without them is
   * answered 403 insufficient_scope before it reaches the handler; not listed in tools/list.
   */
  scopes?: readonly string[];
  /**
   * Whether clients may call it as a task (`optional`), must (`required`), or must not (`forbidden`, the default);
   * listed as `execution.taskSupport`. As a task the handler's `ctx.task` is set and the call outlives its connection.
   */
  taskSupport?: TaskSupport;
  /**
   * When a call of a tool that allows tasks becomes a task where the server decides (the Tasks extension of MCP
   * 2026-07-28): `"call"` (default) before the handler runs; `"handler"` when the handler calls
   * `await ctx.startTask()`, so it can first ask for input in rounds of the call itself (MRTR) and answer at once
   * when it needs no task. Where the client asked for a task (2025-11-25) the task exists from the start either way.
   */
  taskStart?: "call" | "handler";
  /**
   * Text the host may hand the model at once when the tool is called as a task (model-immediate-response); a function
   * gets the arguments as sent, not yet validated.
   */
  immediateResponse?: string | ((args: ToolInput<S>) => string);
}

/** Returned by every registration; `remove()` withdraws it (and announces the change to connected clients). */
export interface McpRegistration {
  remove(): void;
}

type Category = "tools" | "resources" | "prompts";

interface ToolEntry {
  readonly definition: JsonObject;
  readonly input: ToolContract;
  readonly output: ToolContract | undefined;
  readonly handler: McpToolHandler<never>;
  readonly scopes: readonly string[];
  readonly taskSupport: TaskSupport | undefined;
  readonly taskStart: "call" | "handler";
  readonly immediateResponse: string | ((args: never) => string) | undefined;
  /** Its parameters marked `x-mcp-header`, found once at registration (read for every tools/call over HTTP). */
  readonly headerParams: readonly ParamHeader[];
}

interface Connection extends McpConnection {
  /** Categories this connection advertised and serves. */
  readonly categories: Set<Category>;
}

const LIST_CHANGED: Readonly<Record<Category, string>> = {
  tools: "notifications/tools/list_changed",
  resources: "notifications/resources/list_changed",
  prompts: "notifications/prompts/list_changed",
};

const ANY_OBJECT: ObjectJsonSchema = { type: "object" };

/** The methods whose params name a tool to run: its scopes apply to them all. */
const TOOL_CALL_METHODS: ReadonlySet<string> = new Set(["tools/call", "tools/async/call"]);

/** A scope list as given: each an OAuth scope-token (RFC 6749 3.3), so it can go into a challenge header unquoted. */
function scopeList(what: string, scopes: readonly string[] | undefined): readonly string[] {
  if (scopes === undefined) return [];
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) {
    throw new TypeError(
      `${what}: scopes must be a list of OAuth scope tokens (visible ASCII, no spaces, quotes or backslashes)`,
    );
  }
  return Object.freeze([...new Set(scopes)]);
}

/**
 * One server definition, many connections. Registrations are shared: a tool added while clients are
 * connected is served to all of them at once, announced with list_changed where that was advertised.
 * Capabilities are computed per connection from what is registered when it starts, so a client never sees
 * a category that has no handlers, and a category without handlers is never advertised.
 */
export class McpServer {
  private readonly tools = new Map<string, ToolEntry>();
  private readonly resources = new Map<string, ResourceEntry>();
  private readonly templates = new Map<string, TemplateEntry>();
  private readonly prompts = new Map<string, PromptEntry>();
  private readonly open = new Set<Connection>();
  private readonly compile: SchemaCompiler;
  private readonly listChanged: boolean;
  private readonly logging: boolean;
  private readonly subscriptions: boolean;
  /** Open subscriptions/listen streams (MCP 2026-07-28), whichever connection carries each. */
  private readonly listens = new Subscriptions();
  private readonly extra: JsonObject;
  private readonly pendingChanges = new Set<Category>();
  private readonly methodScopes: ReadonlyMap<string, readonly string[]>;
  private readonly maxUriLength: number;
  private readonly maxInputRounds: number;
  /** Seals input-required rounds for every connection, so a retry may land on any of them (HTTP: one per request). */
  private readonly requestState: RequestStateSealer;
  /** Stops hearing the `changes` feed (on close). */
  private readonly unhear: (() => void) | undefined;
  private readonly unwatchTasks: (() => void) | undefined;
  /** Runs tools called as tasks (the `tasks` option); outlives connections. */
  readonly tasks: TaskReceiver | undefined;

  constructor(private readonly options: McpServerOptions) {
    if (options.inbound === undefined && options.createSession === undefined) {
      throw new TypeError(
        "McpServer needs the method tables (inbound, outbound, isMessage) or a createSession factory",
      );
    }
    this.compile = options.compileSchema ?? builtInCompiler;
    this.listChanged = options.listChanged !== false;
    this.extra = options.capabilities ?? {};
    this.logging = options.logging === true || this.extra.logging !== undefined;
    this.subscriptions =
      options.subscriptions === true || (isObject(this.extra.resources) && this.extra.resources.subscribe === true);
    this.methodScopes = new Map(
      Object.entries(options.methodScopes ?? {}).map(([method, scopes]) => [
        method,
        scopeList(`methodScopes[${JSON.stringify(method)}]`, scopes),
      ]),
    );
    this.tasks = options.tasks;
    this.maxUriLength = limitOption("maxUriLength", options.maxUriLength, DEFAULT_MAX_URI_LENGTH);
    this.maxInputRounds = limitOption("maxInputRounds", options.maxInputRounds, DEFAULT_MAX_INPUT_ROUNDS);
    this.requestState =
      options.requestState instanceof RequestStateSealer
        ? options.requestState
        : new RequestStateSealer(options.requestState);
    this.unhear = options.changes?.subscribe((change) => this.heard(change));
    // Extension tasks' changes reach the subscriptions/listen streams that follow them (notifications/tasks).
    this.unwatchTasks = this.tasks?.watch((taskId: string, detailed: () => JsonObject) => {
      if (this.listens.followsTasks) this.listens.taskChanged(taskId, detailed(), (error) => this.report(error));
    });
    if (options.advertiseTasks === true && this.tasks === undefined)
      throw new TypeError("advertiseTasks needs a task receiver: pass tasks: new TaskReceiver()");
  }

  // ---- registration -----------------------------------------------------------------------------------

  /**
   * Register a tool. A throwing handler becomes a result with isError: true; bad arguments too. A Standard Schema
   * that gives no JSON Schema (see `toJsonSchema`) is a TypeError.
   */
  tool<const S extends ToolSchema = ObjectJsonSchema, const O extends ToolSchema | undefined = undefined>(
    name: string,
    config: McpToolConfig<S, O>,
    handler: McpToolHandler<ToolArguments<S>, O>,
  ): McpRegistration {
    if (this.tools.has(name)) throw new Error(`Tool ${JSON.stringify(name)} is already registered`);
    const scopes = scopeList(`Tool ${JSON.stringify(name)}`, config.scopes);
    const taskSupport = taskSupportOption(name, config.taskSupport);
    if (allowsTasks(taskSupport) && this.tasks === undefined) {
      throw new TypeError(
        `Tool ${JSON.stringify(name)} allows tasks (taskSupport: ${taskSupport}): create the server with tasks: new TaskReceiver()`,
      );
    }
    const contract = (schema: ToolSchema, member: "inputSchema" | "outputSchema"): ToolContract =>
      toolContract(schema, {
        tool: name,
        member,
        compile: this.compile,
        toolConverter: config.toJsonSchema === undefined ? undefined : (s) => config.toJsonSchema!(s),
        serverConverter: this.options.toJsonSchema === undefined ? undefined : (s) => this.options.toJsonSchema!(s),
      });
    const input = contract(config.inputSchema ?? ANY_OBJECT, "inputSchema");
    const output = config.outputSchema === undefined ? undefined : contract(config.outputSchema, "outputSchema");
    const definition = defined({
      name,
      title: config.title,
      description: config.description,
      inputSchema: input.json,
      outputSchema: output?.json,
      annotations: config.annotations,
      icons: config.icons,
      execution: taskSupport === undefined ? undefined : { taskSupport },
      _meta: config._meta,
    });
    const entry: ToolEntry = {
      definition,
      input,
      output,
      handler: handler as McpToolHandler<never>,
      scopes,
      taskSupport,
      taskStart: taskStartOption(name, config.taskStart),
      immediateResponse: config.immediateResponse as ToolEntry["immediateResponse"],
      headerParams: headerParamsOf(definition.inputSchema),
    };
    this.tools.set(name, entry);
    this.changed("tools");
    return { remove: () => this.unregister(this.tools, name, entry, "tools") };
  }

  /** Register a resource at a fixed URI. */
  resource(uri: string, config: McpResourceConfig, read: McpResourceReader): McpRegistration {
    if (this.resources.has(uri)) throw new Error(`Resource ${JSON.stringify(uri)} is already registered`);
    const entry = resourceEntry(uri, config, read);
    this.resources.set(uri, entry);
    this.changed("resources");
    return { remove: () => this.unregister(this.resources, uri, entry, "resources") };
  }

  /** Register a family of resources by URI template ({name} matches one path segment, {+name} anything). */
  resourceTemplate(uriTemplate: string, config: McpResourceConfig, read: McpTemplateReader): McpRegistration {
    if (this.templates.has(uriTemplate))
      throw new Error(`Resource template ${JSON.stringify(uriTemplate)} is already registered`);
    const entry = templateEntry(uriTemplate, config, read);
    this.templates.set(uriTemplate, entry);
    this.changed("resources");
    return { remove: () => this.unregister(this.templates, uriTemplate, entry, "resources") };
  }

  /** Register a prompt; missing required arguments are refused with -32602 before `get` runs. */
  prompt<const A extends readonly McpPromptArgument[] = readonly []>(
    name: string,
    config: McpPromptConfig<A>,
    get: McpPromptHandler<PromptArguments<A>>,
  ): McpRegistration {
    if (this.prompts.has(name)) throw new Error(`Prompt ${JSON.stringify(name)} is already registered`);
    const entry = promptEntry(name, config, get);
    this.prompts.set(name, entry);
    this.changed("prompts");
    return { remove: () => this.unregister(this.prompts, name, entry, "prompts") };
  }

  private unregister<E>(map: Map<string, E>, key: string, entry: E, category: Category): void {
    if (map.get(key) !== entry) return;
    map.delete(key);
    this.changed(category);
  }

  // ---- authorization -----------------------------------------------------------------------------------

  /**
   * The scopes a caller needs for an inbound JSON-RPC message: those of its method (`methodScopes`) and, for a
   * tool call (tools/call, tools/async/call), the tool's. Empty when nothing is required or the message is not a
   * request. The HTTP transport's `authorize` hook asks this (mcpgen/auth wires it) while the body is at hand.
   */
  requiredScopes(message: unknown): string[] {
    if (!isObject(message) || typeof message.method !== "string" || !("id" in message)) return [];
    const method = message.method;
    const required = new Set(this.methodScopes.get(method));
    if (TOOL_CALL_METHODS.has(method) && isObject(message.params) && typeof message.params.name === "string") {
      for (const scope of this.tools.get(message.params.name)?.scopes ?? []) required.add(scope);
    }
    return [...required];
  }

  // ---- connections ------------------------------------------------------------------------------------

  /** Serve this definition over `transport` on a new session; resolves once the transport has started. */
  async connect(transport: Transport): Promise<ServerSession> {
    const connection = this.createConnection();
    const session = connection.session;
    this.options.onsession?.(session);
    this.open.add(connection);
    session.use({ closed: () => void this.open.delete(connection) });
    try {
      await session.connect(transport);
    } catch (error) {
      this.open.delete(connection);
      throw error;
    }
    return session;
  }

  /** Sessions currently connected. */
  get sessions(): ServerSession[] {
    return [...this.open].map((c) => c.session);
  }

  /**
   * The tool parameters marked `x-mcp-header` in a tool's inputSchema (MCP 2026-07-28: mirrored into
   * `Mcp-Param-{name}` request headers), or undefined for a tool this server does not have. Pass it to the HTTP
   * server as `headerParams: server.headerParams` so it checks those headers against the arguments.
   */
  readonly headerParams = (toolName: string): readonly ParamHeader[] | undefined =>
    this.tools.get(toolName)?.headerParams;

  /**
   * Runs a handler that may end with `ctx.inputRequired(...)` for a client that takes server requests (2025-11-25):
   * each input request is sent for real and the handler runs again with the answers, at most maxInputRounds times.
   */
  private async withRounds<T>(
    rctx: RequestContext,
    run: (round: { responses: JsonObject; state: string | undefined } | undefined) => Promise<T> | T,
  ): Promise<T> {
    let round: { responses: JsonObject; state: string | undefined } | undefined;
    for (let i = 0; ; i++) {
      try {
        return await run(round);
      } catch (error) {
        if (!(error instanceof InputRequiredSignal) || i >= this.maxInputRounds) throw error;
        const responses: JsonObject = {};
        for (const [key, request] of Object.entries(error.inputRequests))
          responses[key] = await rctx.request(request.method, request.params);
        round = { responses, state: error.requestState };
      }
    }
  }

  /** Close every connection (listen streams first get their graceful end). */
  async close(): Promise<void> {
    this.unhear?.();
    this.unwatchTasks?.();
    if (this.listens.size > 0) {
      this.listens.endAll();
      // One turn for the ended listen requests' results to be handed to their transports before those close.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Promise.allSettled([...this.open].map((c) => c.session.close()));
  }

  /** Tell every client subscribed to `uri` that the resource changed (notifications/resources/updated). */
  async resourceUpdated(uri: string): Promise<void> {
    this.options.changes?.publish({ kind: "resourceUpdated", uri });
    await this.updated(uri);
  }

  private async updated(uri: string): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const c of this.open) {
      if (c.subscriptions.has(uri) && c.session.isOpen)
        sends.push(c.session.notify("notifications/resources/updated", { uri }));
    }
    sends.push(...this.listens.resourceUpdated(uri, (error) => this.report(error)));
    await Promise.all(sends);
  }

  /** A log message to every connected client whose level filter lets it through. */
  async log(level: McpLoggingLevel, data: unknown, logger?: string): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const c of this.open) {
      // A connection of the modern era has no session to log to: its log messages belong to requests.
      if (c.session.isOpen && c.session.era !== "modern")
        sends.push(sendLog(c, (m, p) => c.session.notify(m, p), level, data, logger));
    }
    await Promise.all(sends);
  }

  /** The capabilities a session started now would advertise. */
  get capabilities(): JsonObject {
    const caps: JsonObject = Object.assign({}, this.extra);
    for (const category of ["tools", "resources", "prompts"] as const) {
      if (this.serves(category)) caps[category] = this.categoryCapability(category);
    }
    if (this.logging) caps.logging = isObject(this.extra.logging) ? this.extra.logging : {};
    if (this.tasks !== undefined && this.servesTasks()) caps.tasks = this.tasks.capabilities([TOOLS_CALL]).tasks;
    return caps;
  }

  /** Whether connections started now advertise tool tasks: a tool allows them, or advertiseTasks. */
  private servesTasks(): boolean {
    if (this.options.advertiseTasks === true) return true;
    for (const tool of this.tools.values()) if (allowsTasks(tool.taskSupport)) return true;
    return false;
  }

  private serves(category: Category): boolean {
    if (this.extra[category] !== undefined) return true;
    switch (category) {
      case "tools":
        return this.tools.size > 0;
      case "resources":
        return this.resources.size > 0 || this.templates.size > 0 || this.subscriptions;
      case "prompts":
        return this.prompts.size > 0;
    }
  }

  private categoryCapability(category: Category): JsonObject {
    const declared = this.extra[category];
    const cap: JsonObject = {};
    if (category === "resources" && this.subscriptions) cap.subscribe = true;
    if (this.listChanged) cap.listChanged = true;
    return isObject(declared) ? { ...cap, ...declared } : cap;
  }

  private createConnection(): Connection {
    const options = this.options;
    const settings: McpSessionSettings = {
      serverInfo: options.serverInfo,
      capabilities: this.capabilities,
      instructions: options.instructions,
      supportedProtocolVersions: options.supportedProtocolVersions,
      defaultTimeout: options.defaultTimeout,
      progressInterval: options.progressInterval,
      recentLimit: options.recentLimit,
      maxInFlightRequests: options.maxInFlightRequests,
      maxDetachedRequests: options.maxDetachedRequests,
      requestState: this.requestState,
      cache: options.cache,
      telemetry: options.telemetry,
      onerror: options.onerror,
      ondebug: options.ondebug,
    };
    const session =
      options.createSession !== undefined
        ? options.createSession(settings)
        : new ServerSession({
            ...settings,
            inbound: options.inbound,
            outbound: options.outbound,
            isMessage: options.isMessage,
            revisions: options.revisions,
          });
    const connection: Connection = {
      session,
      logging: this.logging,
      minLogLevel: 0,
      subscriptions: new Set(),
      categories: new Set(),
    };
    for (const category of ["tools", "resources", "prompts"] as const) {
      if (this.serves(category)) this.install(connection, category);
    }
    if (this.tasks !== undefined && this.servesTasks()) this.tasks.install(session);
    session.onRequest(LISTEN, (params, ctx) =>
      this.listens.listen(params, ctx, {
        tools: this.listChanged && this.serves("tools"),
        prompts: this.listChanged && this.serves("prompts"),
        resources: this.listChanged && this.serves("resources"),
        resourceSubscriptions: this.subscriptions && this.serves("resources"),
        task: this.tasks === undefined ? undefined : (taskId, ctx) => this.tasks!.follows(taskId, ctx),
      }),
    );
    if (this.logging) {
      session.onRequest("logging/setLevel", (params) => {
        const level = LOGGING_LEVELS.indexOf(params?.level as McpLoggingLevel);
        if (level < 0)
          throw new RpcError(ErrorCode.InvalidParams, `Unknown logging level ${JSON.stringify(params?.level)}`);
        connection.minLogLevel = level;
        session.setLogLevel(LOGGING_LEVELS[level]!);
        return {};
      });
    }
    return connection;
  }

  private install(connection: Connection, category: Category): void {
    const session = connection.session;
    connection.categories.add(category);
    switch (category) {
      case "tools":
        session.onRequest("tools/list", () => this.list(this.tools, "tools"));
        session.onRequest("tools/call", (params, ctx) => this.callTool(params, ctx, connection));
        break;
      case "resources":
        session.onRequest("resources/list", () => this.list(this.resources, "resources"));
        session.onRequest("resources/templates/list", () => this.list(this.templates, "resourceTemplates"));
        session.onRequest("resources/read", (params, ctx) =>
          this.withRounds(ctx, (round) =>
            readResource(
              this.resources,
              this.templates,
              params,
              new McpContext(ctx, connection, round),
              this.maxUriLength,
            ),
          ),
        );
        if (this.subscriptions) {
          session.onRequest("resources/subscribe", (params) => {
            connection.subscriptions.add(resourceUri("resources/subscribe", params, this.maxUriLength));
            return {};
          });
          session.onRequest("resources/unsubscribe", (params) => {
            connection.subscriptions.delete(resourceUri("resources/unsubscribe", params, this.maxUriLength));
            return {};
          });
        }
        break;
      case "prompts":
        session.onRequest("prompts/list", () => this.list(this.prompts, "prompts"));
        session.onRequest("prompts/get", (params, ctx) =>
          this.withRounds(ctx, (round) => getPrompt(this.prompts, params, new McpContext(ctx, connection, round))),
        );
        break;
    }
  }

  /**
   * After a registration change: sessions that have not answered initialize yet pick up a newly served
   * category; initialized ones that advertised listChanged get one notification per category per tick.
   */
  private changed(category: Category): void {
    // With a change feed the other nodes hear of it even when nobody is connected here.
    if (this.open.size === 0 && this.options.changes === undefined) return;
    for (const c of this.open) {
      if (!c.categories.has(category) && c.session.clientInfo === undefined && this.serves(category)) {
        c.session.registerCapabilities({ [category]: this.categoryCapability(category) });
        this.install(c, category);
      }
    }
    if (this.pendingChanges.size === 0) queueMicrotask(this.announce);
    this.pendingChanges.add(category);
  }

  private readonly announce = (): void => {
    const categories = [...this.pendingChanges];
    this.pendingChanges.clear();
    const feed = this.options.changes;
    if (feed !== undefined && this.listChanged)
      for (const category of categories) feed.publish({ kind: "listChanged", category });
    this.tell(categories);
  };

  /** Tells this node's listen streams and 2025 sessions that lists changed (here, or on another node). */
  private tell(categories: readonly Category[]): void {
    if (this.listChanged && this.listens.size > 0) {
      for (const category of categories)
        this.listens.listChanged(category, LIST_CHANGED[category], (error) => this.report(error));
    }
    for (const c of this.open) {
      const session = c.session;
      if (!session.initialized || !session.isOpen) continue;
      for (const category of categories) {
        if (!c.categories.has(category)) continue;
        const cap = session.capabilities[category];
        if (!isObject(cap) || cap.listChanged !== true) continue;
        session.notify(LIST_CHANGED[category]).catch((error: unknown) => this.report(error));
      }
    }
  }

  /** A change another node announced on the `changes` feed. */
  private heard(change: ServerChange): void {
    if (change.kind === "listChanged") this.tell([change.category]);
    else void this.updated(change.uri).catch((error: unknown) => this.report(error));
  }

  private report(error: unknown): void {
    this.options.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  // ---- request handlers ---------------------------------------------------------------------------------

  // Built per call: the in-memory transport hands the result object itself to the client.
  /** A list result: `{ [key]: definitions }`, in registration order. */
  private list(source: Map<string, { definition: JsonObject }>, key: string): JsonObject {
    const items: JsonObject[] = [];
    for (const entry of source.values()) items.push(entry.definition);
    return { [key]: items };
  }

  private async callTool(
    params: JsonObject | undefined,
    rctx: RequestContext,
    connection: Connection,
  ): Promise<JsonObject> {
    const name = params?.name;
    const tool = typeof name === "string" ? this.tools.get(name) : undefined;
    if (tool === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${String(name)}`, { name });
    // The HTTP hooks refuse such a call with 403 before it gets here; this holds where they were not wired.
    const granted = rctx.auth?.scopes;
    const missing = rctx.auth === undefined ? [] : tool.scopes.filter((s) => !granted?.includes(s));
    if (missing.length > 0) {
      throw new RpcError(ErrorCode.InvalidRequest, `Insufficient scope: tool ${name} needs ${tool.scopes.join(" ")}`, {
        requiredScopes: tool.scopes,
      });
    }
    const args = params!.arguments ?? {};
    const tasks = this.tasks;
    const wire =
      tasks === undefined
        ? undefined
        : taskWireForCall(tasks, connection.session, name as string, tool.taskSupport, params, rctx);
    if (wire === "extension" && tool.taskStart === "handler")
      return this.runToolUntilTask(tool, name as string, args, params, rctx, connection, tasks!);
    if (wire !== undefined) {
      const immediate = tool.immediateResponse;
      const text = typeof immediate === "function" ? immediate(args as never) : immediate;
      return tasks!.create(
        connection.session,
        TOOLS_CALL,
        params,
        rctx,
        (taskContext) => this.runTool(tool, name as string, args, taskContext, connection),
        text === undefined ? { wire } : { immediateResponse: text, wire },
      );
    }
    return this.runTool(tool, name as string, args, rctx, connection);
  }

  /**
   * A call the handler turns into a task (`taskStart: "handler"`): it runs as the request itself, asking in rounds of
   * the call, until `ctx.startTask()` answers the request with the task and moves the handler onto the task's
   * context; a handler that never calls it answers the request with its result.
   */
  private runToolUntilTask(
    tool: ToolEntry,
    name: string,
    args: unknown,
    params: JsonObject | undefined,
    rctx: RequestContext,
    connection: Connection,
    tasks: TaskReceiver,
  ): Promise<JsonObject> {
    return new Promise<JsonObject>((answer, fail) => {
      let run: { resolve: (result: JsonObject) => void; reject: (error: unknown) => void } | undefined;
      /** The task could not be made (a limit): the call was answered with why, and the handler's end is moot. */
      let refused = false;
      const start = async (ctx: McpContext): Promise<TaskControl | undefined> => {
        if (run !== undefined || refused) return ctx.task;
        let settle!: { resolve: (result: JsonObject) => void; reject: (error: unknown) => void };
        const outcome = new Promise<JsonObject>((resolve, reject) => (settle = { resolve, reject }));
        let bind!: (context: RequestContext) => void;
        const bound = new Promise<RequestContext>((resolve) => (bind = resolve));
        let reply: JsonObject | Promise<JsonObject>;
        try {
          reply = tasks.create(
            connection.session,
            TOOLS_CALL,
            params,
            rctx,
            (taskContext) => {
              bind(taskContext);
              return outcome;
            },
            { wire: "extension" },
          );
        } catch (error) {
          // The client is told as it would be had the task been asked for up front; the handler hears it too.
          refused = true;
          fail(error);
          throw error;
        }
        run = settle;
        ctx.rebind(await bound);
        answer(await reply);
        return ctx.task;
      };
      this.runTool(tool, name, args, rctx, connection, start).then(
        (result) => (refused ? undefined : run === undefined ? answer(result) : run.resolve(result)),
        (error: unknown) => (refused ? undefined : run === undefined ? fail(error) : run.reject(error)),
      );
    });
  }

  /** Check the arguments, run the handler, check its result (the same whether called plainly or as a task). */
  private async runTool(
    tool: ToolEntry,
    name: string,
    args: unknown,
    rctx: RequestContext,
    connection: Connection,
    startTask?: TaskStarter,
  ): Promise<JsonObject> {
    if (!isObject(args)) return toolError(`Invalid arguments for tool ${name}: arguments must be an object`);
    let checked: Checked;
    try {
      const pending = tool.input.check(args);
      checked = pending instanceof Promise ? await pending : pending;
    } catch (error) {
      // A validator that throws fails like the handler would: the tool's failure, not the caller's mistake.
      return toolError(errorMessage(error));
    }
    if (!checked.ok) return toolError(`Invalid arguments for tool ${name}: ${checked.problems.join("; ")}`);
    const value = checked.value;
    let result: McpToolResult | string;
    try {
      result = await this.withRounds(rctx, (round) =>
        tool.handler(value as never, new McpContext(rctx, connection, round, startTask)),
      );
    } catch (error) {
      // What ends the request itself (an input-required round, a refusal) is not the tool's failure.
      if (
        error instanceof ReplacedAnswer ||
        error instanceof RequestRefusedError ||
        (error instanceof CapabilityError && error.refusal !== undefined)
      )
        throw error;
      return toolError(errorMessage(error));
    }
    const answer = handlerResult(
      result,
      "content",
      toolText,
      () => `Tool ${name} returned something other than a CallToolResult`,
    );
    if (typeof result === "string") return answer;
    const output = tool.output;
    if (output === undefined || result.isError === true) return answer;
    const structured = result.structuredContent;
    let fit: Checked = { ok: false, problems: ["structuredContent is missing"] };
    if (structured !== undefined) {
      const pending = output.check(structured);
      fit = pending instanceof Promise ? await pending : pending;
    }
    if (!fit.ok) {
      throw new RpcError(
        ErrorCode.InternalError,
        `Tool ${name} returned output that does not fit its outputSchema: ${fit.problems.join("; ")}`,
      );
    }
    // A Standard Schema's output (defaults, transforms) is what its JSON Schema describes, so that is what is sent.
    return fit.value === structured ? answer : { ...answer, structuredContent: fit.value };
  }
}

function toolText(text: string): JsonObject {
  return { content: [{ type: "text", text }] };
}

function toolError(text: string): JsonObject {
  return { content: [{ type: "text", text }], isError: true };
}

/** The properties of an object schema (nested objects too) that carry `x-mcp-header`, by their path. */
function headerParamsOf(schema: unknown): readonly ParamHeader[] {
  const out: ParamHeader[] = [];
  collectHeaderParams(schema, [], out);
  return out;
}

function collectHeaderParams(schema: unknown, path: string[], out: ParamHeader[]): void {
  if (!isObject(schema) || !isObject(schema.properties)) return;
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!isObject(property)) continue;
    const header = property["x-mcp-header"];
    if (typeof header === "string") out.push({ path: [...path, name], header });
    collectHeaderParams(property, [...path, name], out);
  }
}

function taskStartOption(tool: string, value: unknown): "call" | "handler" {
  if (value === undefined || value === "call" || value === "handler") return value ?? "call";
  throw new TypeError(`Tool ${JSON.stringify(tool)}: taskStart must be "call" or "handler"`);
}
