// A 2026-07-28 client's requests: the envelope and headers on each, the result's resultType, input-required rounds answered by the app's handlers, tools' mirrored parameters, tasks of the Tasks extension.
import { ErrorCode, RpcError, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import type { DispatchTable, MethodSpec } from "../../rpc/dispatch.js";
import type { RequestContext, RequestHandler, RequestOptions } from "../../rpc/peer.js";
import { InvalidResultError } from "../../rpc/errors.js";
import { limitOption } from "../../rpc/limits.js";
import { LOGGING_LEVELS } from "../../mcp/logging.js";
import {
  CLIENT_CAPABILITIES_META,
  CLIENT_INFO_META,
  LOG_LEVEL_META,
  ModernErrorCode,
  PROTOCOL_VERSION_META,
  SERVER_INFO_META,
} from "./envelope.js";
import { DISCOVER } from "./wire.js";
import { mirroredParams, requestHeaders, type MirroredParam } from "./request-headers.js";
import type { ResponseCache } from "./response-cache.js";
import { TASKS_EXTENSION } from "./tasks-extension.js";
import {
  DEFAULT_MAX_TASK_INPUTS,
  ExtensionTask,
  TASKS_CANCEL,
  TASKS_GET,
  TASKS_UPDATE,
  TaskPace,
  taskIntentOf,
  taskView,
  type TaskLink,
} from "./client-task.js";

/** Input-required rounds one request may take by default before the client gives up on it. */
export const DEFAULT_MAX_INPUT_ROUNDS = 10;

const TOOLS_LIST = "tools/list";
const TOOLS_CALL = "tools/call";
/** What the app may call on either era that this revision spells differently (see ModernClientWire.request). */
const SET_LEVEL = "logging/setLevel";
const PING = "ping";
/** The Tasks extension's requests: not in the revision's tables, sent only while the client declares it. */
const TASK_REQUESTS: ReadonlySet<string> = new Set([TASKS_GET, TASKS_UPDATE, TASKS_CANCEL]);
/** How a task of a plain call is followed when the caller said nothing (a plain call's abort cancels it). */
const PLAIN_FOLLOW = { pace: new TaskPace({}), cancelOnAbort: true };

/** What the wire needs of the client session it speaks for. */
export interface ModernClientHost {
  readonly clientInfo: JsonObject;
  readonly capabilities: JsonObject;
  /** Sends one request as is; its result comes back unchecked (this wire checks it against the revision). */
  send(method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Promise<JsonObject>;
  /** The app's handler for a request the server may ask inside an input-required result (`onElicit`...). */
  handler(method: string): RequestHandler | undefined;
  /** The session's own spec of such a request (to check the server's params before the app's handler sees them). */
  inboundSpec(method: string): MethodSpec | undefined;
  /** Warnings (a tool dropped for invalid `x-mcp-header`). */
  warn(error: Error): void;
  /** The session's own spec of a request it sends: its result guard is the one the app's types follow. */
  resultSpec(method: string): MethodSpec | undefined;
  /** Whether the app listens to log messages (then they are asked for, at every level, until it sets a level). */
  wantsLogs(): boolean;
}

export interface ModernClientOptions {
  /** The revision's client-to-server table (its generated `clientToServer`): which requests exist, their results. */
  readonly table?: DispatchTable;
  /** Rounds one request may take; default 10. */
  readonly maxInputRounds?: number;
  /** Where complete cacheable results are kept for their `ttlMs` (shared across the wires of one session). */
  readonly cache?: ResponseCache;
  /** Declare the Tasks extension in every envelope and take a task for an answer to tools/call; default true. */
  readonly tasksExtension?: boolean;
  /** Input requests one task may make over its life before the client cancels it; default 1000. */
  readonly maxTaskInputs?: number;
}

/** Why an input-required request was given up: the server kept asking past the round limit. */
export class InputRoundsExceededError extends RpcError {
  constructor(method: string, rounds: number) {
    super(ErrorCode.InternalError, `${method}: the server still asked for input after ${rounds} rounds`, { rounds });
    this.name = "InputRoundsExceededError";
  }
}

/**
 * The 2026-07-28 wire of one client. Each request carries the envelope (revision, capabilities, client info, the log
 * level once the app set one) and, for HTTP, its mirrored headers; its result must say `resultType`. An
 * `input_required` result is answered through the handlers the app registered, and the request sent again under a
 * new id with `inputResponses` and the server's `requestState` as it came, until complete or the round limit.
 */
export class ModernClientWire {
  /** The least severe log level the app asked for (logging/setLevel); undefined: none, so no log messages. */
  logLevel: string | undefined;
  private readonly maxInputRounds: number;
  /** Mirrored parameters of each tool listed so far, by name. */
  private readonly mirrors = new Map<string, readonly MirroredParam[]>();
  /** The capabilities every envelope declares: the app's, and the Tasks extension unless it is off. */
  private readonly declared: JsonObject;
  /** What the tasks of the extension send through and ask of this wire; undefined while the extension is off. */
  private readonly tasks: TaskLink | undefined;

  constructor(
    private readonly host: ModernClientHost,
    readonly protocolVersion: string,
    private readonly options: ModernClientOptions = {},
  ) {
    const rounds = options.maxInputRounds ?? DEFAULT_MAX_INPUT_ROUNDS;
    if (!Number.isInteger(rounds) || rounds < 1)
      throw new RangeError(`maxInputRounds must be a positive integer, got ${String(rounds)}`);
    this.maxInputRounds = rounds;
    const maxInputs = limitOption("maxTaskInputs", options.maxTaskInputs, DEFAULT_MAX_TASK_INPUTS, Infinity, 1);
    if (options.tasksExtension === false) {
      this.declared = host.capabilities;
      this.tasks = undefined;
    } else {
      this.declared = withTasksExtension(host.capabilities);
      this.tasks = {
        send: (method, params, sendOptions) => this.extensionRequest(method, params, sendOptions),
        answer: (key, request, signal) => this.answerOne(key, request, signal),
        complete: (method, result) => this.taskResult(method, result),
        maxInputs,
      };
    }
  }

  /** Whether `method` is a request of the Tasks extension this client declares (not a core capability's). */
  isExtensionRequest(method: string): boolean {
    return this.tasks !== undefined && TASK_REQUESTS.has(method);
  }

  /** The envelope every request carries in `_meta`. */
  envelope(): JsonObject {
    const meta: JsonObject = {
      [PROTOCOL_VERSION_META]: this.protocolVersion,
      [CLIENT_CAPABILITIES_META]: this.declared,
      [CLIENT_INFO_META]: this.host.clientInfo,
    };
    // A server sends no log messages on a request without a level: an app that listens to them and set no level
    // hears every level, as a 2025-11-25 server's default has it.
    const level = this.logLevel ?? (this.host.wantsLogs() ? "debug" : undefined);
    if (level !== undefined) meta[LOG_LEVEL_META] = level;
    return meta;
  }

  /** `params` with the envelope added to its `_meta` (the caller's own `_meta` members kept). */
  stamp(params: JsonObject | undefined): JsonObject {
    const own = params?._meta;
    const meta = isPlainObject(own) ? Object.assign({}, own, this.envelope()) : this.envelope();
    return Object.assign({}, params, { _meta: meta });
  }

  /** The headers `method` goes out with (the HTTP binding's; other transports ignore them). */
  headers(method: string, params: JsonObject | undefined): Record<string, string> {
    const tool = method === TOOLS_CALL && typeof params?.name === "string" ? params.name : undefined;
    return requestHeaders(
      this.protocolVersion,
      method,
      params,
      tool === undefined ? undefined : this.mirrors.get(tool),
    );
  }

  /** Whether the revision has notification `method` (any, when its table is unknown). */
  hasNotification(method: string): boolean {
    const table = this.options.table;
    return table === undefined || (Object.hasOwn(table, method) && table[method]!.kind === "notification");
  }

  /** One request of the app, through as many input rounds as the server needs. */
  async request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    if (method === SET_LEVEL) return this.setLevel(params);
    // The revision has no ping; its cheapest request tells as much about the server being there.
    if (method === PING) {
      await this.host.send(DISCOVER, this.stamp(undefined), withHeaders(options, this.headers(DISCOVER, undefined)));
      return {};
    }
    const tasks = this.tasks;
    if (tasks !== undefined) {
      taskIntentOf(options)?.link?.(tasks);
      if (TASK_REQUESTS.has(method)) return this.extensionRequest(method, params ?? {}, options);
    }
    const spec = this.spec(method);
    if (this.options.table !== undefined && spec === undefined)
      throw new RpcError(ErrorCode.MethodNotFound, `${method} is not a request of MCP ${this.protocolVersion}`, {
        method,
      });
    const cache = this.options.cache;
    const hit = cache?.get(method, params);
    // A copy: the cache keeps its own frozen value, and the app may change what it is given.
    if (hit !== undefined) return this.delivered(method, completed(structuredClone(hit) as JsonObject));
    let relisted = false;
    let round: JsonObject = {};
    for (let rounds = 0; ;) {
      const wireParams = this.stamp(Object.assign({}, params, round));
      let result: JsonObject;
      try {
        result = await this.host.send(method, wireParams, withHeaders(options, this.headers(method, wireParams)));
      } catch (error) {
        // A tool's mirrored parameters changed since it was listed: list again once and retry (the binding's advice).
        if (isHeaderMismatch(error) && method === TOOLS_CALL && !relisted) {
          relisted = true;
          await this.relistTools(options?.signal);
          continue;
        }
        throw error;
      }
      const checked = this.check(method, spec, result);
      if (checked.resultType === "task") return this.taskCreated(method, checked, options);
      if (result.resultType !== "input_required") {
        // Only an answer to the request as the app made it: a retry's answer depended on its input responses.
        if (cache !== undefined && rounds === 0 && typeof result.ttlMs === "number" && result.ttlMs > 0)
          cache.store(method, params, structuredClone(result));
        return this.delivered(method, checked);
      }
      if (++rounds > this.maxInputRounds) throw new InputRoundsExceededError(method, this.maxInputRounds);
      round = await this.answer(method, result, options?.signal);
    }
  }

  private delivered(method: string, result: JsonObject): JsonObject {
    return method === TOOLS_LIST ? this.toolsListed(result) : result;
  }

  /**
   * A complete tools/list result, less the tools whose `x-mcp-header` marks are invalid (each reported through
   * `warn`); the valid ones' mirrored parameters are kept for their calls.
   */
  toolsListed(result: JsonObject): JsonObject {
    if (!Array.isArray(result.tools)) return result;
    const kept: unknown[] = [];
    for (const tool of result.tools) {
      if (!isPlainObject(tool) || typeof tool.name !== "string") {
        kept.push(tool);
        continue;
      }
      const params = mirroredParams(tool.inputSchema);
      if (typeof params === "string") {
        this.mirrors.delete(tool.name);
        this.host.warn(new Error(`tool "${tool.name}" left out of tools/list: ${params}`));
        continue;
      }
      if (params.length > 0) this.mirrors.set(tool.name, params);
      else this.mirrors.delete(tool.name);
      kept.push(tool);
    }
    return kept.length === result.tools.length ? result : Object.assign({}, result, { tools: kept });
  }

  private setLevel(params: JsonObject | undefined): JsonObject {
    const level = params?.level;
    if (typeof level !== "string" || !(LOGGING_LEVELS as readonly string[]).includes(level))
      throw new RpcError(
        ErrorCode.InvalidParams,
        `logging/setLevel: level must be one of ${LOGGING_LEVELS.join(", ")}`,
      );
    // This revision has no such request: the level travels in the envelope of every request from now on.
    this.logLevel = level;
    return {};
  }

  private spec(method: string): MethodSpec | undefined {
    const table = this.options.table;
    return table !== undefined && Object.hasOwn(table, method) ? table[method] : undefined;
  }

  /**
   * A result as this revision may send it: a `resultType` this client knows (absent is "complete": the specification
   * requires that of clients, for servers that predate it), an input-required result shaped as one, and a complete
   * one, less this revision's own members, satisfying the session's guard for the method (the one results of
   * 2025-11-25 meet: the app reads the same type on either era). Returns what the app gets.
   */
  private check(method: string, spec: MethodSpec | undefined, result: JsonObject): JsonObject {
    const kind = result.resultType;
    const invalid = (pointer: string, message: string) =>
      new InvalidResultError(method, "", result, [{ pointer, message }]);
    if (kind === "input_required") {
      if (spec?.resultType?.split(" | ").includes("InputRequiredResult") === false)
        throw invalid("/resultType", `${method} may not answer input_required`);
      if (result.inputRequests !== undefined && !isPlainObject(result.inputRequests))
        throw invalid("/inputRequests", "must be an object");
      if (result.requestState !== undefined && typeof result.requestState !== "string")
        throw invalid("/requestState", "must be a string");
      if (result.inputRequests === undefined && result.requestState === undefined)
        throw invalid("", "an input_required result carries inputRequests or requestState");
      return result;
    }
    // The Tasks extension's CreateTaskResult: only where the envelope declared it, only for the request it covers.
    if (kind === "task" && this.tasks !== undefined && method === TOOLS_CALL) {
      taskView(method, result, false);
      return withoutServerInfo(result);
    }
    if (kind !== undefined && kind !== "complete")
      throw invalid("/resultType", `has resultType ${JSON.stringify(kind)}, which this client does not know`);
    const complete = completed(result);
    const guard = this.host.resultSpec(method) ?? spec;
    if (guard?.isResult !== undefined && !guard.isResult(guard === spec ? withKind(result) : complete)) {
      const issues = guard.explainResult?.(guard === spec ? withKind(result) : complete);
      throw new InvalidResultError(method, "", result, Array.isArray(issues) ? issues : []);
    }
    return complete;
  }

  /**
   * A CreateTaskResult (checked). A caller that follows the task itself (requestAsTask: it was given the link) gets it
   * as it came; any other call follows it here and resolves with the task's result, as the plain call would have.
   */
  private taskCreated(
    method: string,
    created: JsonObject,
    options: RequestOptions | undefined,
  ): JsonObject | Promise<JsonObject> {
    const intent = taskIntentOf(options);
    if (intent?.link !== undefined) return created;
    const follow = intent?.follow ?? PLAIN_FOLLOW;
    const task = new ExtensionTask<JsonObject>(this.tasks, method, taskView(method, created, false), {
      ...follow,
      ...(options?.signal === undefined ? {} : { signal: options.signal }),
      ...(options?.timeout === undefined ? {} : { timeout: options.timeout }),
    });
    return task.result();
  }

  /**
   * tasks/get, tasks/update or tasks/cancel: the envelope and headers as on any request; the answer is the extension's
   * own (not in the revision's tables), so only its `resultType` ("complete") is checked and taken off, with the
   * server's identity. Its `ttlMs` is the task's, not a cache hint, and stays.
   */
  private async extensionRequest(
    method: string,
    params: JsonObject,
    options: RequestOptions | undefined,
  ): Promise<JsonObject> {
    const wireParams = this.stamp(params);
    const result = await this.host.send(method, wireParams, withHeaders(options, this.headers(method, wireParams)));
    const kind = result.resultType;
    if (kind !== undefined && kind !== "complete")
      throw new InvalidResultError(method, "", result, [
        { pointer: "/resultType", message: `must be "complete", got ${JSON.stringify(kind)}` },
      ]);
    const { resultType: _kind, ...rest } = result;
    return withoutServerInfo(rest);
  }

  /** A task's inlined result, as a complete result of `method` answered directly would reach the app. */
  private taskResult(method: string, result: JsonObject): JsonObject {
    const kind = result.resultType;
    if (kind !== undefined && kind !== "complete")
      throw new InvalidResultError(method, "", result, [
        { pointer: "/result/resultType", message: `a task's result is complete, not ${JSON.stringify(kind)}` },
      ]);
    return this.check(method, this.spec(method), result);
  }

  /** This round's answers: each input request given to the app's handler for its method, all at once. */
  private async answer(method: string, result: JsonObject, signal: AbortSignal | undefined): Promise<JsonObject> {
    const next: JsonObject = {};
    if (typeof result.requestState === "string") next.requestState = result.requestState;
    const asked = result.inputRequests;
    if (asked === undefined) return next;
    if (!isPlainObject(asked))
      throw new InvalidResultError(method, "", result, [{ pointer: "/inputRequests", message: "must be an object" }]);
    const keys = Object.keys(asked);
    const answers = await Promise.all(keys.map((key) => this.answerOne(key, asked[key], signal)));
    const responses: JsonObject = {};
    keys.forEach((key, i) => (responses[key] = answers[i]!));
    next.inputResponses = responses;
    return next;
  }

  private async answerOne(key: string, request: unknown, signal: AbortSignal | undefined): Promise<JsonObject> {
    if (!isPlainObject(request) || typeof request.method !== "string")
      throw new RpcError(ErrorCode.InvalidParams, `input request "${key}" has no method`, { inputKey: key });
    const method = request.method;
    const params = request.params === undefined ? undefined : request.params;
    const handler = this.host.handler(method);
    if (handler === undefined)
      throw new RpcError(
        ErrorCode.MethodNotFound,
        `the server asked for ${method} (input "${key}"), which this client has no handler for`,
        { inputKey: key, method },
      );
    const spec = this.host.inboundSpec(method);
    if (params !== undefined && !isPlainObject(params))
      throw new RpcError(ErrorCode.InvalidParams, `input request "${key}": params must be an object`, {
        inputKey: key,
      });
    if (spec?.isParams !== undefined && !spec.isParams(params))
      throw new RpcError(ErrorCode.InvalidParams, `input request "${key}" (${method}) has invalid params`, {
        inputKey: key,
        issues: spec.explainParams?.(params) ?? [],
      });
    return handler(params, inputContext(key, method, signal));
  }

  /** Every page of tools/list again, for fresh mirrored parameters. */
  private async relistTools(signal: AbortSignal | undefined): Promise<void> {
    // The server's own answer, not the cache's: the stale list is what failed.
    this.options.cache?.invalidate("notifications/tools/list_changed", undefined);
    let cursor: unknown;
    do {
      const page = await this.request(TOOLS_LIST, cursor === undefined ? undefined : { cursor }, { signal });
      cursor = page.nextCursor;
    } while (typeof cursor === "string");
  }
}

/**
 * A complete result as the app sees it on either era: without the members only this revision's wire carries
 * (`resultType`, the cache hints `ttlMs` and `cacheScope`, the server's identity in `_meta`), so the same app code
 * reads the same result from a server of either era.
 */
function completed(result: JsonObject): JsonObject {
  const { resultType: _kind, ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  return withoutServerInfo(rest);
}

/** `result` without the server's identity in `_meta` (a copy when it had one). */
function withoutServerInfo(result: JsonObject): JsonObject {
  const meta = result._meta;
  if (!isPlainObject(meta) || !Object.hasOwn(meta, SERVER_INFO_META)) return result;
  const { [SERVER_INFO_META]: _info, ...others } = meta;
  const rest = Object.assign({}, result);
  if (Object.keys(others).length === 0) delete rest._meta;
  else rest._meta = others;
  return rest;
}

/** The app's capabilities with the Tasks extension declared beside its own extensions. */
function withTasksExtension(capabilities: JsonObject): JsonObject {
  const extensions = isPlainObject(capabilities.extensions) ? capabilities.extensions : {};
  return Object.assign({}, capabilities, { extensions: Object.assign({}, extensions, { [TASKS_EXTENSION]: {} }) });
}

/** A result checked by this revision's own guard: `resultType` present, as the revision's schema requires. */
function withKind(result: JsonObject): JsonObject {
  return result.resultType === undefined ? Object.assign({}, result, { resultType: "complete" }) : result;
}

/** The options with this revision's headers added to the app's own (the revision's win on a clash). */
function withHeaders(options: RequestOptions | undefined, headers: Record<string, string>): RequestOptions {
  if (options === undefined) return { headers };
  return Object.assign({}, options, {
    headers: options.headers === undefined ? headers : { ...options.headers, ...headers },
  });
}

function isHeaderMismatch(error: unknown): boolean {
  return error instanceof RpcError && error.code === ModernErrorCode.HeaderMismatch;
}

/** What an app handler answering an input request is given: its key as the id; it can send nothing itself. */
function inputContext(key: string, method: string, signal: AbortSignal | undefined): RequestContext {
  const refuse = () =>
    Promise.reject(new RpcError(ErrorCode.InvalidRequest, "an input request cannot send messages of its own"));
  return {
    requestId: key,
    method,
    // Made per call, not once at load: workerd refuses an AbortController in a module's global scope.
    signal: signal ?? new AbortController().signal,
    progress: () => Promise.resolve(),
    request: refuse,
    notify: refuse,
  };
}
