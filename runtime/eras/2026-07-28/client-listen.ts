// A 2026-07-28 client's notifications: the app's list-changed handlers and resource subscriptions carried on subscriptions/listen, and each listen's acknowledgment.
import { ErrorCode, RpcError, isPlainObject, type JsonObject, type RequestId } from "../../rpc/jsonrpc.js";
import type { RequestOptions } from "../../rpc/peer.js";
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { hasCapability } from "../../mcp/capabilities.js";
import {
  ListenSubscriptions,
  type ListChangedKind,
  type ListenFilter,
  type ListenOptions,
} from "./client-subscriptions.js";
import type { ModernClientWire } from "./client-wire.js";
import { LISTEN } from "./wire.js";

const SUBSCRIBE = "resources/subscribe";
const UNSUBSCRIBE = "resources/unsubscribe";
export const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
/** The list-changed notifications this revision delivers only on subscriptions/listen, by what they list. */
const LIST_CHANGED: ReadonlyMap<string, ListChangedKind> = new Map([
  ["notifications/tools/list_changed", "tools"],
  ["notifications/prompts/list_changed", "prompts"],
  ["notifications/resources/list_changed", "resources"],
]);

/** What the listen glue needs of the client session. */
export interface ClientListenHost {
  /** The wire the client speaks now, if it speaks 2026-07-28. */
  wire(): ModernClientWire | undefined;
  /** The server's capabilities, when it said them (undefined when pinned without a probe). */
  serverCapabilities(): JsonObject | undefined;
  /** The id the next request will carry: a listen's id is its subscription id. */
  nextRequestId(): RequestId;
  send(method: string, params: JsonObject, options: RequestOptions): Promise<JsonObject>;
  warn(error: Error): void;
}

/**
 * Which changes the app asked to hear (handlers registered, resources subscribed), kept on one subscriptions/listen
 * stream once the client speaks 2026-07-28; the app may ask before, and on 2025-11-25 nothing here runs.
 */
export class ClientListen {
  private listener: ListenSubscriptions | undefined;
  /** The list-changed kinds the app has handlers for. */
  private readonly kinds = new Set<ListChangedKind>();
  /** Each open listen's acknowledgment callback, by the listen request's id. */
  private readonly acks = new Map<RequestId, (ack: ListenFilter) => void>();

  private readonly readyWaitMs: number;

  constructor(
    private readonly host: ClientListenHost,
    private readonly options: ListenOptions | undefined,
  ) {
    this.readyWaitMs = limitOption("listen.maxReadyWaitMs", options?.maxReadyWaitMs, 2000, MAX_TIMER_MS);
  }

  /** Whether `method` is resources/subscribe or unsubscribe, which this revision carries on the listen stream. */
  static isSubscription(method: string): boolean {
    return method === SUBSCRIBE || method === UNSUBSCRIBE;
  }

  /** The client speaks 2026-07-28 from now on: the stream opens for what the app asked so far. */
  start(): void {
    if (this.listener !== undefined) return;
    this.listener = new ListenSubscriptions(
      { listen: (filter, options) => this.listen(filter, options), warn: (error) => this.host.warn(error) },
      this.options,
    );
    for (const kind of this.kinds) if (this.announced(kind)) this.listener.setListChanged(kind, true);
  }

  /** A notification handler was registered (true) or removed (false). */
  handler(method: string, registered: boolean): void {
    const kind = LIST_CHANGED.get(method);
    if (kind === undefined) return;
    if (registered) this.kinds.add(kind);
    else this.kinds.delete(kind);
    if (!registered || this.announced(kind)) this.listener?.setListChanged(kind, registered);
  }

  /** resources/subscribe or unsubscribe: done once a listen with (or without) the URI was acknowledged. */
  async subscription(method: string, params: JsonObject | undefined): Promise<JsonObject> {
    const uri = params?.uri;
    if (typeof uri !== "string") throw new RpcError(ErrorCode.InvalidParams, `${method}: uri must be a string`);
    if (this.listener === undefined) throw new RpcError(ErrorCode.InternalError, `${method}: no listen stream yet`);
    if (method === SUBSCRIBE) await this.listener.subscribe(uri);
    else await this.listener.unsubscribe(uri);
    return {};
  }

  /** notifications/subscriptions/acknowledged: settles the listen it names. */
  acknowledged(params: unknown): void {
    if (!isPlainObject(params) || !isPlainObject(params._meta)) return;
    const id = params._meta[SUBSCRIPTION_ID_META];
    if (typeof id !== "string" && typeof id !== "number") return;
    const notifications = isPlainObject(params.notifications) ? params.notifications : {};
    this.acks.get(id)?.(notifications as ListenFilter);
  }

  /** See ClientSession.subscriptionsReady. */
  settled(): Promise<void> {
    return this.listener?.settled() ?? Promise.resolve();
  }

  /**
   * Undefined when every listen asked for is acknowledged; else a promise that resolves when it is or after
   * `maxReadyWaitMs` (a request made meanwhile waits for it, so that the changes it causes are heard).
   */
  ready(): Promise<void> | undefined {
    const listener = this.listener;
    if (listener === undefined || listener.isSettled() || this.readyWaitMs === 0) return undefined;
    // A waiter that outlives the wait is harmless: the listener resolves every waiter once nothing is on its way.
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.readyWaitMs);
      void listener.settled().then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close(): void {
    this.listener?.close();
  }

  /** A new connection (recovery): the listen is sent again at once. */
  reconnected(): void {
    this.listener?.restart();
  }

  /** Whether the server may announce changes of `kind` (unknown capabilities, as when pinned: it may). */
  private announced(kind: ListChangedKind): boolean {
    const capabilities = this.host.serverCapabilities();
    return capabilities === undefined || hasCapability(capabilities, `${kind}.listChanged`);
  }

  /** One subscriptions/listen request, open until the server ends it or `signal` (a change of filter) aborts it. */
  private async listen(
    filter: ListenFilter,
    options: { signal: AbortSignal; onAcknowledged: (ack: ListenFilter) => void },
  ): Promise<void> {
    const wire = this.host.wire();
    if (wire === undefined) throw new RpcError(ErrorCode.InternalError, "the client no longer speaks this revision");
    const params = wire.stamp({ notifications: filter as JsonObject });
    const id = this.host.nextRequestId();
    this.acks.set(id, options.onAcknowledged);
    try {
      await this.host.send(LISTEN, params, {
        signal: options.signal,
        timeout: MAX_TIMER_MS,
        headers: wire.headers(LISTEN, params),
      });
    } finally {
      this.acks.delete(id);
    }
  }
}
