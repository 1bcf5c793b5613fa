// The one task receiver: requests run as durable tasks (quotas, ttl, states, the shared store), served over core Tasks' wire (MCP 2025-11-25) and the Tasks extension's (MCP 2026-07-28).
import { ErrorCode, RpcError, type JsonObject } from "../../../rpc/jsonrpc.js";
import type { RequestContext, RequestHandler } from "../../../rpc/peer.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";
import { clientKey } from "../../../mcp/quotas.js";
import { readProgressToken } from "../../../rpc/progress.js";
import { SessionStateKey, type Session } from "../../../rpc/session/session.js";
import { hasCapability } from "../../../mcp/lifecycle.js";
import { DurableEngine } from "../../../durable/engine.js";
import { mintToken } from "../../../durable/token.js";
import { MemoryOperationStore } from "../../../store/memory.js";
import type { OperationStore, StoredOperation } from "../../../store/types.js";
import { TASKS_CANCEL, TASKS_GET, TASKS_LIST, TASKS_RESULT, canTransition, type TaskStatus } from "./protocol.js";
import { taskCapabilities, taskCapabilityOf } from "./methods.js";
import { Task, type TaskWireKind } from "./task.js";
import { CoreTaskWire } from "./core-wire.js";
import { ExtensionTaskWire, type TaskWatcher } from "../../2026-07-28/tasks-wire.js";
import { TASKS_UPDATE, inputResponsesOf, missingTasksExtension, taskWireOf } from "../../2026-07-28/tasks-extension.js";
import { SharedTasks, outcomeOf, type SharedTaskOptions } from "./remote.js";

/** Runs the request a task stands for, with the task's context; returns the request's own result. */
export type TaskRunner = (context: RequestContext) => Promise<JsonObject> | JsonObject;

export interface TaskReceiverOptions {
  /**
   * Where tasks are recorded (runtime/store/*): each task is a durable operation with its state in the record.
   * Default: an in-memory store.
   */
  store?: OperationStore;
  /**
   * Longest ttl granted, ms: a requestor asking for more (or for none, with defaultTtlMs above it) gets this.
   * null: no cap (a task may then be kept until shutdown). Default 3 600 000 (1 h).
   */
  maxTtlMs?: number | null;
  /** ttl when the requestor asks for none, ms; null: unlimited (only when maxTtlMs is null). Default: maxTtlMs. */
  defaultTtlMs?: number | null;
  /** pollInterval suggested to requestors, ms; default 1000. */
  pollIntervalMs?: number;
  /**
   * Tasks not yet terminal at once per requestor (its principal, or its session when there is none); past it a
   * task-augmented request is refused with -32000 until one ends. Default 100.
   */
  maxActivePerRequestor?: number;
  /**
   * Terminal tasks kept for their result per requestor; past it the oldest of them is freed before its ttl ends.
   * Default 1000.
   */
  maxKeptPerRequestor?: number;
  /**
   * Tasks held per client, running or kept: per principal, else per client address (the transport's, IPv6 by
   * its /64), else per session. At it, a new task first frees that client's longest-finished task; when all of
   * them still run, creation is refused with -32000 (data `{ maxTasksPerPrincipal }`) while other clients go on.
   * Counted in this process (with a shared store, per node). Default 1000; 0 for no limit.
   */
  maxTasksPerPrincipal?: number;
  /**
   * Tasks held in this process, all clients, running or kept: the last line behind maxTasksPerPrincipal; past it
   * creation is refused. Default 10 000.
   */
  maxTasks?: number;
  /** Tasks per tasks/list page; default 50. */
  pageSize?: number;
  /** Send notifications/tasks/status to the requestor's connection on every change; default true. */
  statusNotifications?: boolean;
  /** With a store shared between nodes (runtime/store/redis.ts): how tasks other nodes run are served. */
  shared?: SharedTaskOptions;
  onerror?: (error: Error) => void;
}

/** Options of one task creation. */
export interface CreateTaskOptions {
  /**
   * The wire the task is created on: "core" (default; a request that asked for a task with `params.task`) or
   * "extension" (MCP 2026-07-28's Tasks extension: the server decided, and the request declared the extension).
   */
  wire?: TaskWireKind;
  /** Text for the host to hand the model at once (the model-immediate-response `_meta` of CreateTaskResult). */
  immediateResponse?: string;
}

const DEFAULT_MAX_TTL_MS = 3_600_000;
export const DEFAULT_MAX_TASKS_PER_PRINCIPAL = 1000;

/** The one answer to an unknown, expired, or someone else's task id. */
function unknownTask(): RpcError {
  return new RpcError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
}

function errorOf(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  return new RpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
}

/**
 * Whether a tasks/* request comes on the extension's wire; -32021 when it comes on 2026-07-28 without declaring the
 * extension. False: a 2025-11-25 request (core Tasks).
 */
function onExtension(context: RequestContext, method: string): boolean {
  const wire = taskWireOf(context.peerIdentity);
  if (wire === "gated") throw missingTasksExtension(method);
  return wire === "extension";
}

/** Per-session identity of a requestor without principal or session id (stdio, in-memory links). */
const anonymousKey = new SessionStateKey<string>("tasks-requestor", () => `c:${mintToken()}`);

/**
 * What the receiver is to the wires that serve its tasks (core Tasks, the Tasks extension): the tasks by
 * token, the shared store, who a request comes from, and the changes only the receiver makes.
 */
export interface TaskCore {
  readonly engine: DurableEngine<Task>;
  /** With a store shared between nodes: the tasks other nodes run. */
  readonly shared: SharedTasks | undefined;
  /** Tasks per tasks/list page. */
  readonly pageSize: number;
  /** The one answer to an unknown, expired, or someone else's task id. */
  unknown(): RpcError;
  /** Who a core request comes from: its principal, else its session id, else its session. */
  requestorOf(session: Session, context: RequestContext): string;
  /** Who a task created or named by this request belongs to, on `wire`. */
  ownerOf(session: Session | undefined, context: RequestContext, wire: TaskWireKind): string;
  /** A requestor's tasks, in creation order. */
  tasksOf(requestor: string): Iterable<Task>;
  /** Cancel a task that has not ended (its handler's signal aborts). */
  cancel(task: Task, message: string): void;
  /** A notification on a session, when it is still open. */
  send(session: Session, method: string, params: JsonObject): void;
}

/** What one client holds (see maxTasksPerPrincipal): how many tasks, and the finished ones, longest-finished first. */
interface ClientTasks {
  held: number;
  readonly finished: Set<Task>;
}

/**
 * Runs task-augmented requests as tasks and answers tasks/get, tasks/result, tasks/list and tasks/cancel for every
 * session it is installed on. Tasks outlive the connection that created them: the same principal (or, without one,
 * the same session id) finds them again from any connection. Another requestor's task id reads as unknown. A task
 * without a principal can be reached from its session alone, so it is freed when that session ends.
 */
export class TaskReceiver {
  private readonly engine: DurableEngine<Task>;
  private readonly maxTtl: number | null;
  private readonly defaultTtl: number | null;
  private readonly pollInterval: number;
  private readonly maxActive: number;
  private readonly maxKept: number;
  private readonly maxTasks: number;
  private readonly maxPerClient: number;
  private readonly pageSize: number;
  private readonly onerror: ((error: Error) => void) | undefined;
  /** Each requestor's tasks in creation order, and how many of them are not terminal. */
  private readonly byRequestor = new Map<string, { tasks: Set<Task>; active: number }>();
  /** What each client holds, by Task.client. */
  private readonly byClient = new Map<string, ClientTasks>();
  /** The requestors without principal that made tasks on a session: their tasks go when it ends. */
  private readonly boundTo = new WeakMap<Session, Set<string>>();
  private nextSeq = 1;
  /** With a store shared between nodes: tasks recorded there, and served for other nodes' tasks. */
  private readonly shared: SharedTasks | undefined;
  /** What the receiver is to its two wires (the tasks, who asks, cancelling, the shared store). */
  private readonly core: TaskCore;
  /** Core Tasks (MCP 2025-11-25) and the Tasks extension (MCP 2026-07-28) over the tasks held here. */
  private readonly coreWire: CoreTaskWire;
  private readonly extensionWire: ExtensionTaskWire;
  /** created/completed/failed/cancelled: transitions into that status; expired: freed at the end of their ttl. */
  readonly stats = { created: 0, refused: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, evicted: 0 };

  constructor(options: TaskReceiverOptions = {}) {
    this.maxTtl = options.maxTtlMs === null ? null : limitOption("maxTtlMs", options.maxTtlMs, DEFAULT_MAX_TTL_MS);
    const defaultTtl =
      options.defaultTtlMs === null
        ? null
        : options.defaultTtlMs === undefined
          ? this.maxTtl
          : limitOption("defaultTtlMs", options.defaultTtlMs, 0);
    this.defaultTtl = this.cap(defaultTtl);
    this.pollInterval = limitOption("pollIntervalMs", options.pollIntervalMs, 1000);
    this.maxActive = limitOption("maxActivePerRequestor", options.maxActivePerRequestor, 100);
    this.maxKept = limitOption("maxKeptPerRequestor", options.maxKeptPerRequestor, 1000);
    this.maxTasks = limitOption("maxTasks", options.maxTasks, 10_000);
    this.maxPerClient = limitOption(
      "maxTasksPerPrincipal",
      options.maxTasksPerPrincipal,
      DEFAULT_MAX_TASKS_PER_PRINCIPAL,
    );
    this.pageSize = Math.max(1, limitOption("pageSize", options.pageSize, 50));
    this.onerror = options.onerror;
    this.engine = new DurableEngine<Task>(
      options.store ?? new MemoryOperationStore(),
      (error) => this.report(error),
      (task, signal) => this.shared?.signalled(task, signal),
    );
    this.shared = SharedTasks.over(this.engine, {
      ...options.shared,
      unknown: unknownTask,
      report: (error) => this.report(error),
      pageSize: this.pageSize,
      maxTtlMs: this.maxTtl ?? undefined,
      cancel: (key, reason) => {
        const task = this.engine.get(key);
        if (task !== undefined) this.cancelTask(task, reason);
      },
      attach: (key, context) => {
        const task = this.engine.get(key);
        return task === undefined ? undefined : this.coreWire.attach(task, context);
      },
      inputs: (key, responses) => {
        const task = this.engine.get(key);
        // Checked as tasks/update checks them: they crossed from another node.
        if (task !== undefined) this.extensionWire.answer(task, inputResponsesOf({ inputResponses: responses }));
      },
    });
    const receiver = this;
    this.core = {
      engine: this.engine,
      shared: this.shared,
      pageSize: this.pageSize,
      unknown: unknownTask,
      requestorOf: (session, context) => this.requestorOf(session, context),
      ownerOf: (session, context, wire) => this.ownerOf(session, context, wire),
      tasksOf: (requestor) => receiver.byRequestor.get(requestor)?.tasks ?? [],
      cancel: (task, message) => this.cancelTask(task, message),
      send: (session, method, params) => this.send(session, method, params),
    };
    this.coreWire = new CoreTaskWire(this.core, options.statusNotifications !== false);
    this.extensionWire = new ExtensionTaskWire(this.core);
  }

  /** Tasks held: running, or terminal and kept for their result. */
  get size(): number {
    return this.engine.size;
  }

  /** The store tasks are recorded in. */
  get store(): OperationStore {
    return this.engine.store;
  }

  /** Resolves once no task is held. */
  idle(): Promise<void> {
    return this.engine.idle();
  }

  /** The `tasks` capability for serving `methods` as tasks (merge into the capabilities the session advertises). */
  capabilities(methods: readonly string[]): JsonObject {
    return taskCapabilities(methods);
  }

  /**
   * Answer tasks/get, tasks/result, tasks/list and tasks/cancel on `session`, and run `methods` as tasks when a
   * request carries `params.task` and the session advertises task support for that method (else `task` is ignored,
   * as the spec asks of a receiver that did not declare it). Call it after registering the handlers of `methods`
   * (a client's sampling/createMessage and elicitation/create handlers); their results become the tasks' results.
   */
  install(session: Session, methods: readonly string[] = []): void {
    const remote = (method: string, params: JsonObject | undefined, context: RequestContext) =>
      this.shared?.serve(method, params, this.requestorOf(session, context), context);
    const core = this.coreWire;
    const extension = this.extensionWire;
    // tasks/get and tasks/cancel are both wires' methods: the request's own wire says which answers.
    session.onRequest(TASKS_GET, (params, ctx) =>
      onExtension(ctx, TASKS_GET)
        ? extension.get(session, params, ctx)
        : (remote(TASKS_GET, params, ctx) ?? core.get(session, params, ctx)),
    );
    session.onRequest(TASKS_CANCEL, (params, ctx) =>
      onExtension(ctx, TASKS_CANCEL)
        ? extension.cancel(session, params, ctx)
        : (remote(TASKS_CANCEL, params, ctx) ?? core.cancel(session, params, ctx)),
    );
    session.onRequest(TASKS_UPDATE, (params, ctx) => {
      if (!onExtension(ctx, TASKS_UPDATE))
        throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${TASKS_UPDATE}`);
      return extension.update(session, params, ctx);
    });
    session.onRequest(
      TASKS_RESULT,
      (params, ctx) => remote(TASKS_RESULT, params, ctx) ?? core.result(session, params, ctx),
    );
    session.onRequest(TASKS_LIST, (params, ctx) => remote(TASKS_LIST, params, ctx) ?? core.list(session, params, ctx));
    for (const method of methods) {
      const capability = taskCapabilityOf(method);
      if (capability === undefined)
        throw new TypeError(`${method} cannot be task-augmented (no capability in the spec)`);
      const handler: RequestHandler | undefined = session.requestHandler(method);
      if (handler === undefined)
        throw new Error(`Register a handler for ${method} before installing the task receiver`);
      session.onRequest(method, (params, context) => {
        if (!this.wantsTask(session, method, params)) return handler(params, context);
        return this.create(session, method, params, context, (taskContext) => handler(params, taskContext));
      });
    }
  }

  /** Whether `params` asks for a task and `session` advertises task support for `method`. */
  wantsTask(session: Session, method: string, params: JsonObject | undefined): boolean {
    const task = params?.task;
    if (typeof task !== "object" || task === null || Array.isArray(task)) return false;
    const capability = taskCapabilityOf(method);
    const advertised = (session as { capabilities?: unknown }).capabilities;
    return (
      capability !== undefined &&
      typeof advertised === "object" &&
      advertised !== null &&
      hasCapability(advertised as JsonObject, capability)
    );
  }

  /**
   * Create a task for a task-augmented request and start `run` with the task's context; returns the
   * CreateTaskResult to answer the request with. The task ends when `run` settles: its result (a failure when the
   * method says so, e.g. a tool result with isError) or its error is what tasks/result then returns.
   */
  create(
    session: Session,
    method: string,
    params: JsonObject | undefined,
    origin: RequestContext,
    run: TaskRunner,
    options: CreateTaskOptions = {},
  ): JsonObject | Promise<JsonObject> {
    const wire = options.wire ?? "core";
    const owner = this.ownerOf(session, origin, wire);
    const client = clientKey(origin.principal, origin.clientAddress) ?? owner;
    // Without a principal an extension task belongs to whoever holds its id; it counts against its client.
    const requestor = wire === "extension" && origin.principal === undefined ? client : owner;
    const mine = this.byRequestor.get(requestor);
    if (mine !== undefined && mine.active >= this.maxActive) {
      this.stats.refused++;
      throw new RpcError(
        ErrorCode.ServerBusy,
        `Too many tasks running for this requestor (limit ${this.maxActive}); try again once one has ended`,
        { maxActivePerRequestor: this.maxActive },
      );
    }
    if (!this.makeRoomFor(client)) {
      this.stats.refused++;
      throw new RpcError(
        ErrorCode.ServerBusy,
        `Too many tasks held for this client (maxTasksPerPrincipal ${this.maxPerClient}); try again once one has ended`,
        { maxTasksPerPrincipal: this.maxPerClient },
      );
    }
    if (this.engine.size >= this.maxTasks) {
      this.stats.refused++;
      throw new RpcError(ErrorCode.ServerBusy, `Too many tasks held on this server (limit ${this.maxTasks})`, {
        maxTasks: this.maxTasks,
      });
    }
    const meta = params?.task as JsonObject | undefined;
    const ttl = this.grant(meta?.ttl);
    const token = mintToken();
    const key = this.engine.tokens.keyOf(token);
    const task = new Task(
      this.host,
      token,
      key,
      this.engine.tokens.kept(token),
      owner,
      client,
      this.nextSeq++,
      method,
      ttl,
      this.pollInterval,
      session,
      wire,
      requestor,
    );
    const context = task.contextFor(origin, wire === "core" ? readProgressToken(params) : undefined);
    this.engine.add(task);
    const entry = mine ?? { tasks: new Set<Task>(), active: 0 };
    entry.tasks.add(task);
    entry.active++;
    if (mine === undefined) this.byRequestor.set(requestor, entry);
    const holds = this.byClient.get(client);
    if (holds === undefined) this.byClient.set(client, { held: 1, finished: new Set() });
    else holds.held++;
    // A core task without principal is reachable from its session alone; an extension task by its id from anywhere.
    if (origin.principal === undefined && wire === "core") this.bind(session, owner);
    this.stats.created++;
    const record: StoredOperation = {
      kind: "task",
      requestId: origin.requestId,
      status: "processing",
      pendingInput: 0,
      task: task.state,
    };
    if (origin.principal !== undefined) record.principal = origin.principal;
    if (ttl !== null) record.keepFor = Math.ceil(ttl / 1000);
    const recorded = this.shared?.open(task, origin.requestId, task.state);
    if (recorded === undefined) this.engine.writes.write(() => this.engine.store.create(key, record));
    if (ttl !== null) this.armExpiry(task, task.createdAt + ttl);
    // The request is answered with CreateTaskResult first; the handler starts on the next turn.
    Promise.resolve()
      .then(() => run(context))
      .then(
        (result) => {
          // The extension keeps "failed" for JSON-RPC errors: a tool result with isError completes the task.
          const failed = wire === "core" && this.coreWire.fails(method, result);
          this.finish(task, failed ? "failed" : "completed", result, undefined);
        },
        (error: unknown) => this.finish(task, "failed", undefined, errorOf(error)),
      );
    const reply =
      wire === "extension" ? this.extensionWire.created(task) : this.coreWire.created(task, options.immediateResponse);
    // The task exists for every node before its id is given out (the extension requires it; core Tasks benefits).
    return recorded === undefined ? reply : recorded.then(() => reply);
  }

  /**
   * Hear every change of the extension's tasks held here, as tasks/get would describe the task now (for
   * notifications/tasks on subscriptions/listen streams). Returns the function that stops it.
   */
  watch(listener: TaskWatcher): () => void {
    return this.extensionWire.watch(listener);
  }

  /** Whether the requestor of `context` may follow an extension task held here by its id (listen's taskIds). */
  follows(taskId: string, context: RequestContext): boolean {
    return this.extensionWire.follows(taskId, context);
  }

  /** Cancel every task and free it (shutdown). */
  close(): void {
    this.shared?.close();
    this.engine.close();
    for (const task of this.engine.values()) {
      this.cancelTask(task, "The server is shutting down.");
      this.free(task);
    }
  }

  // ---- the task's life ----

  /** The handler's outcome: the task ends with it unless it already ended (cancelled stays cancelled). */
  private finish(task: Task, status: TaskStatus, result: JsonObject | undefined, error: RpcError | undefined): void {
    // The status machine decides: a task cancelled (or expired) meanwhile keeps its status and its answer.
    if (task.freed || !canTransition(task.status, status)) return;
    task.result = result;
    task.error = error;
    let message: string | undefined = undefined;
    if (status === "failed") {
      message = error !== undefined ? error.message : (textOf(result) ?? "The request did not complete successfully");
    }
    this.transition(task, status, message);
  }

  private cancelTask(task: Task, message: string): void {
    if (!canTransition(task.status, "cancelled")) return;
    task.error = new RpcError(ErrorCode.InvalidRequest, `Task cancelled: ${message}`, { status: "cancelled" });
    this.transition(task, "cancelled", message);
    task.stop(new RequestCancelledError(task.method, message));
  }

  /** The receiver's side of a task's changes (kept apart so tasks never reach the receiver's other members). */
  private readonly host = {
    transition: (task: Task, to: TaskStatus, message?: string) => this.transition(task, to, message),
    touched: (task: Task) => this.changed(task),
    // On the extension's wire input requests wait in the task for tasks/get to list them.
    pump: (task: Task) => (task.wire === "core" ? this.coreWire.pump(task) : undefined),
    notifyRequestor: (task: Task, method: string, params: JsonObject) =>
      this.coreWire.notifyRequestor(task, method, params),
  };

  /** Move `task` to `to` when the spec's status machine allows it; false (nothing changes) when it does not. */
  transition(task: Task, to: TaskStatus, message?: string): boolean {
    if (task.freed || !canTransition(task.status, to)) return false;
    task.status = to;
    if (message !== undefined) task.statusMessage = message;
    if (task.terminal) {
      if (to === "completed") this.stats.completed++;
      else if (to === "failed") this.stats.failed++;
      else this.stats.cancelled++;
      const mine = this.byRequestor.get(task.requestor);
      if (mine !== undefined) mine.active--;
      this.byClient.get(task.client)?.finished.add(task);
      task.dropInputs(new RequestCancelledError(task.method, `task ${to}`));
      this.trimKept(task.requestor);
    }
    this.changed(task);
    if (task.terminal) task.wakeAll();
    return true;
  }

  /** Record the task's new state and tell its requestor. */
  private changed(task: Task): void {
    task.lastUpdatedAt = Math.max(Date.now(), task.lastUpdatedAt);
    const state = task.state;
    const status =
      task.status === "completed"
        ? "completed"
        : task.status === "working" || task.status === "input_required"
          ? "processing"
          : "failed";
    const patch: Partial<StoredOperation> = {
      status,
      pendingInput: task.inputs.length,
      task: state,
    };
    if (this.shared !== undefined) {
      const recorded = task.wire === "extension" ? this.extensionWire.recorded(task, state) : state;
      this.shared.record(task.key, recorded, task.terminal ? outcomeOf(task) : undefined);
    } else this.engine.writes.write(() => this.engine.store.update(task.key, patch));
    if (task.wire === "core") this.coreWire.changed(task, state);
    else this.extensionWire.changed(task);
  }

  private send(session: Session, method: string, params: JsonObject): void {
    if (!session.isOpen) return;
    session.notify(method, params).catch(() => undefined);
  }

  private armExpiry(task: Task, at: number): void {
    const delay = at - Date.now();
    task.expiry = setTimeout(
      () => {
        task.expiry = undefined;
        if (Date.now() < at) return this.armExpiry(task, at);
        this.stats.expired++;
        this.cancelTask(task, "The task's ttl ended.");
        this.free(task);
      },
      Math.min(Math.max(0, delay), MAX_TIMER_MS),
    );
    task.expiry.unref?.();
  }

  /** Past maxKeptPerRequestor terminal tasks, the requestor's oldest terminal ones go now. */
  private trimKept(owner: string): void {
    const mine = this.byRequestor.get(owner);
    if (mine === undefined) return;
    let kept = mine.tasks.size - mine.active;
    if (kept <= this.maxKept) return;
    for (const task of mine.tasks) {
      if (kept <= this.maxKept) break;
      if (!task.terminal) continue;
      this.stats.evicted++;
      kept--;
      // After the status change that ended it has been told.
      queueMicrotask(() => this.free(task));
    }
  }

  /** Forget a task: its record, its timer, its place in its requestor's list; waiting tasks/result calls wake. */
  private free(task: Task): void {
    if (task.freed) return;
    if (!task.terminal) this.cancelTask(task, "The task was dropped.");
    task.freed = true;
    if (task.expiry !== undefined) clearTimeout(task.expiry);
    task.expiry = undefined;
    const mine = this.byRequestor.get(task.requestor);
    if (mine !== undefined && mine.tasks.delete(task) && mine.tasks.size === 0) this.byRequestor.delete(task.requestor);
    const holds = this.byClient.get(task.client);
    if (holds !== undefined) {
      holds.finished.delete(task);
      if (--holds.held === 0) this.byClient.delete(task.client);
    }
    if (this.shared !== undefined) this.shared.free(task.key);
    else this.engine.writes.write(() => this.engine.store.delete(task.key));
    this.engine.remove(task);
    task.wakeAll();
  }

  /**
   * Whether `client` may hold one more task: below its quota, or at it with a finished task to free (its
   * longest-finished, as maxKeptPerRequestor would later). False: all it holds still run.
   */
  private makeRoomFor(client: string): boolean {
    const holds = this.byClient.get(client);
    if (this.maxPerClient === 0 || holds === undefined || holds.held < this.maxPerClient) return true;
    const oldest = holds.finished.values().next();
    if (oldest.done === true) return false;
    this.stats.evicted++;
    this.free(oldest.value);
    return true;
  }

  /** `owner` (a requestor without principal) made a task on `session`: its tasks are freed when the session ends. */
  private bind(session: Session, owner: string): void {
    let owners = this.boundTo.get(session);
    if (owners === undefined) {
      owners = new Set();
      this.boundTo.set(session, owners);
      const bound = owners;
      // Nobody can name these tasks once the session is gone (a new session has another id): holding them on
      // until their ttl would only keep the client's quota and the server's memory taken.
      session.use({
        closed: () => {
          for (const requestor of bound) {
            for (const task of [...(this.byRequestor.get(requestor)?.tasks ?? [])]) this.free(task);
          }
          bound.clear();
        },
      });
    }
    owners.add(owner);
  }

  // ---- who asks ----

  /** The requestor a request comes from: its principal, else its session id, else the session object itself. */
  private requestorOf(session: Session, context: RequestContext): string {
    if (context.principal !== undefined) return `p:${context.principal}`;
    if (context.sessionId !== undefined) return `s:${context.sessionId}`;
    return session.state(anonymousKey);
  }

  /**
   * Who a task created by this request belongs to: on the core wire its requestor; on the extension's its principal,
   * else whoever holds its id (2026-07-28 has no session to bind it to: the unguessable id is the credential).
   */
  private ownerOf(session: Session | undefined, context: RequestContext, wire: TaskWireKind): string {
    if (wire === "core") return this.requestorOf(session!, context);
    return context.principal === undefined ? "x:" : `p:${context.principal}`;
  }

  /** The ttl granted for a requested one: capped by maxTtlMs; the default when none (or nonsense) was asked for. */
  private grant(requested: unknown): number | null {
    if (typeof requested !== "number" || !Number.isFinite(requested) || requested < 0) return this.defaultTtl;
    return this.cap(Math.floor(requested));
  }

  private cap(ttl: number | null): number | null {
    if (this.maxTtl === null) return ttl;
    return ttl === null ? this.maxTtl : Math.min(ttl, this.maxTtl);
  }

  private report(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}

/** The first text content of a result (a failed tool's message), for statusMessage. */
function textOf(result: JsonObject | undefined): string | undefined {
  const content = result?.content;
  if (!Array.isArray(content)) return undefined;
  for (const item of content) {
    if (typeof item === "object" && item !== null && (item as JsonObject).type === "text") {
      const text = (item as JsonObject).text;
      if (typeof text === "string") return text;
    }
  }
  return undefined;
}
