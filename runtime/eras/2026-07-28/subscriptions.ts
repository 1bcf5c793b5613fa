// subscriptions/listen streams (MCP 2026-07-28): who listens for which changes, the acknowledgement first, then
// every change notification tagged with the subscription's id, until the client goes or the server ends it.
import { isPlainObject, type JsonObject, type RequestId } from "../../rpc/jsonrpc.js";
import type { RequestContext } from "../../rpc/peer.js";
import { TASK_NOTIFICATION, missingTasksExtension, taskWireOf } from "./tasks-extension.js";

export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** What a listen request may ask for, by the filter's field names. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** notifications/tasks for these tasks (the Tasks extension). */
  taskIds?: string[];
}

/** The change kinds a server can tell of (what it serves), for the acknowledged subset. */
export interface Offered {
  readonly tools: boolean;
  readonly prompts: boolean;
  readonly resources: boolean;
  readonly resourceSubscriptions: boolean;
  /**
   * Whether the listener may follow this task (Tasks extension): a task it can see, whose changes this server hears;
   * undefined when the server runs no tasks.
   */
  readonly task?: (taskId: string, ctx: RequestContext) => boolean;
}

const LIST_FIELD = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const;

interface Listener {
  readonly id: RequestId;
  readonly filter: SubscriptionFilter;
  readonly ctx: RequestContext;
  /** Ends the listen request with its graceful result (server shutdown). */
  readonly end: () => void;
}

/** Every open listen stream of one server, whichever connection carries it. */
export class Subscriptions {
  private readonly listeners = new Set<Listener>();

  get size(): number {
    return this.listeners.size;
  }

  /**
   * Serves one subscriptions/listen request: acknowledges the subset of `requested` the server honours, then holds the
   * request open. Resolves with the graceful closing result when the server ends it; a client that cancels (or whose
   * stream closes) aborts it, and nothing more is sent.
   */
  listen(params: JsonObject | undefined, ctx: RequestContext, offered: Offered): Promise<JsonObject> {
    const requested = isPlainObject(params?.notifications) ? params.notifications : {};
    const filter: SubscriptionFilter = {};
    for (const kind of ["tools", "prompts", "resources"] as const) {
      if (offered[kind] && requested[LIST_FIELD[kind]] === true) filter[LIST_FIELD[kind]] = true;
    }
    const uris = requested.resourceSubscriptions;
    if (offered.resourceSubscriptions && Array.isArray(uris))
      filter.resourceSubscriptions = uris.filter((u): u is string => typeof u === "string");
    const taskIds = requested.taskIds;
    if (Array.isArray(taskIds) && taskIds.length > 0) {
      // The extension says: a listen for task notifications from a client that did not declare it is refused.
      if (taskWireOf(ctx.peerIdentity) !== "extension") throw missingTasksExtension("notifications.taskIds");
      const follows = offered.task;
      if (follows !== undefined)
        filter.taskIds = [...new Set(taskIds.filter((t): t is string => typeof t === "string" && follows(t, ctx)))];
    }
    const meta = { [SUBSCRIPTION_ID_META]: ctx.requestId };
    return new Promise<JsonObject>((resolve) => {
      const listener: Listener = {
        id: ctx.requestId,
        filter,
        ctx,
        end: () => {
          this.listeners.delete(listener);
          resolve({ _meta: meta });
        },
      };
      if (ctx.signal.aborted) return;
      ctx.signal.addEventListener("abort", () => this.listeners.delete(listener), { once: true });
      // The acknowledgement goes first; what the stream carries later follows it on the same transport, in order.
      ctx.notify(ACKNOWLEDGED, { _meta: meta, notifications: filter as JsonObject }).catch(() => undefined);
      this.listeners.add(listener);
    });
  }

  /** A list changed: tell every stream that asked for it. */
  listChanged(kind: "tools" | "prompts" | "resources", method: string, report: (error: unknown) => void): void {
    const field = LIST_FIELD[kind];
    for (const l of this.listeners) {
      if (l.filter[field] !== true) continue;
      l.ctx.notify(method, { _meta: { [SUBSCRIPTION_ID_META]: l.id } }).catch(report);
    }
  }

  /** A resource changed: tell every stream subscribed to its URI. */
  resourceUpdated(uri: string, report: (error: unknown) => void): Promise<void>[] {
    const sends: Promise<void>[] = [];
    for (const l of this.listeners) {
      if (l.filter.resourceSubscriptions?.includes(uri) !== true) continue;
      sends.push(
        l.ctx.notify("notifications/resources/updated", { _meta: { [SUBSCRIPTION_ID_META]: l.id }, uri }).catch(report),
      );
    }
    return sends;
  }

  /** A task changed: every stream following it gets its state as tasks/get would give it now. */
  taskChanged(taskId: string, detailed: JsonObject, report: (error: unknown) => void): void {
    for (const l of this.listeners) {
      if (l.filter.taskIds?.includes(taskId) !== true) continue;
      l.ctx.notify(TASK_NOTIFICATION, { ...detailed, _meta: { [SUBSCRIPTION_ID_META]: l.id } }).catch(report);
    }
  }

  /** Whether any stream follows a task (a change is then worth describing). */
  get followsTasks(): boolean {
    for (const l of this.listeners) if (l.filter.taskIds !== undefined && l.filter.taskIds.length > 0) return true;
    return false;
  }

  /** Ends every stream gracefully (the server is closing). */
  endAll(): void {
    for (const l of [...this.listeners]) l.end();
  }
}
