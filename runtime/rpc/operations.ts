// The registry of in-flight operations: every request being served and every request awaiting its response.
import type { JsonObject, JsonRpcMessage, RequestId } from "./jsonrpc.js";
import type { ProgressInfo, RequestOptions } from "./peer.js";
import type { ProgressReporter } from "./progress.js";
import { StableMap } from "./stable-map.js";

export type ProgressToken = string | number;

/**
 * active: in flight. completed/failed: a response was sent or received. cancelled: either side cancelled it.
 * timedOut: our deadline passed. closed: the connection went away under it.
 */
export type OperationState = "active" | "completed" | "failed" | "cancelled" | "timedOut" | "closed";

/**
 * What inbound and outbound operations share. An operation is not tied to the transport it started on: an
 * inbound one whose output an outlet takes (a resumable request) outlives its connection, an async tool run is an
 * inbound operation no connection carries (sessions attach to it), and an outbound one with a keeper stays pending
 * across a reconnection.
 */
export abstract class Operation {
  state: OperationState = "active";
  progressToken: ProgressToken | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private abortedEarly = false;
  private earlyReason: unknown = undefined;

  constructor(
    readonly id: RequestId,
    readonly method: string,
  ) {}

  /** Created on first use: most handlers never look at it, and an AbortController per call is not free. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedEarly) this.controller.abort(this.earlyReason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.controller !== undefined) this.controller.abort(reason);
    else if (!this.abortedEarly) {
      this.abortedEarly = true;
      this.earlyReason = reason;
    }
  }
}

/**
 * Where every outgoing message of an inbound operation goes once something outlives the connection for it
 * (a resumable request): progress, notifications, server-to-client requests and the final
 * response. The session hands them over instead of sending them, and does not abort the operation when its
 * connection closes; it tells the outlet instead.
 */
export interface OperationOutlet {
  /**
   * A notification (progress, logging...) or the final response of the operation. `owned`: the runtime made the
   * message and its params for this call alone (a progress value), so the outlet may add to them instead of copying.
   */
  send(message: JsonRpcMessage, owned?: boolean): void;
  /** A request to the peer on behalf of the operation (sampling, elicitation). */
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject>;
  /** The connection the operation was attached to closed; `byApp` when our side closed it on purpose. */
  connectionClosed(op: InboundOperation, byApp: boolean): void;
  /** The peer cancelled the operation (notifications/cancelled); its signal has fired. */
  cancelled?(op: InboundOperation): void;
}

/** Keeps an outbound operation pending across a connection close (a resumable request awaiting resume). */
export interface OperationKeeper {
  /** The connection closed under the operation; it stays pending. `byApp`: our side closed it on purpose. */
  connectionClosed(op: OutboundOperation, byApp: boolean): void;
  /** The operation left the registry: it is about to settle (response, error, timeout, cancel). */
  released?(op: OutboundOperation): void;
}

/** A request the peer sent us that a handler is serving. */
export class InboundOperation extends Operation {
  /** Present only when the peer asked for progress. */
  reporter: ProgressReporter | undefined = undefined;
  /** Set when the operation outlives its connection; see OperationOutlet. */
  outlet: OperationOutlet | undefined = undefined;
}

/** A request we sent that awaits the peer's response. */
export class OutboundOperation extends Operation {
  resolve: (result: JsonObject) => void = noop;
  reject: (error: Error) => void = noop;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The per-request timeout in ms; restarted on progress when resetTimeoutOnProgress is set. */
  timeout = 0;
  maxTotalTimeout: number | undefined = undefined;
  startedAt = 0;
  /** True when the armed timer is the maxTotalTimeout bound rather than the plain timeout. */
  timerIsTotal = false;
  resetTimeoutOnProgress = false;
  onProgress: ((progress: ProgressInfo) => void) | undefined = undefined;
  callerSignal: AbortSignal | undefined = undefined;
  abortListener: (() => void) | undefined = undefined;
  /** Set when the operation must survive a connection close (a resumable request with a policy). */
  keeper: OperationKeeper | undefined = undefined;
  /** Sent with a `task` object in its params: the answer may be the task created for it. */
  taskAugmented = false;
  /** The response is handed over as it came, unchecked: the protocol layer that sent it checks it (by revision). */
  resultUnchecked = false;
}

function noop(): void {}

/** A bounded set remembering the most recent keys, oldest forgotten first. */
export class RecentSet<K> {
  private readonly set = new Set<K>();
  private readonly ring: (K | undefined)[];
  private next = 0;

  constructor(readonly limit: number) {
    this.ring = new Array<K | undefined>(Math.max(1, limit));
  }

  add(key: K): void {
    if (this.set.has(key)) return;
    const evicted = this.ring[this.next];
    if (evicted !== undefined) this.set.delete(evicted);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.ring.length;
    this.set.add(key);
  }

  has(key: K): boolean {
    return this.set.has(key);
  }

  clear(): void {
    this.set.clear();
    this.ring.fill(undefined);
    this.next = 0;
  }
}

/**
 * All operations of one session, by direction. Maps keep string and number ids apart ("1" is not 1),
 * which is what JSON-RPC requires.
 */
export class OperationRegistry {
  // StableMap: a session making one call at a time would otherwise reallocate these tables on every request.
  readonly inbound = new StableMap<RequestId, InboundOperation>();
  readonly outbound = new StableMap<RequestId, OutboundOperation>();
  /** Our outbound requests that asked for progress, by the token we put in their _meta. */
  readonly byProgressToken = new StableMap<ProgressToken, OutboundOperation>();
  /** Tokens of requests that finished recently: progress racing the response is dropped quietly. */
  readonly recentTokens: RecentSet<ProgressToken>;
  /** Ids of requests we gave up on (timeout, cancel): a late response is expected, not an error. */
  readonly abandonedIds: RecentSet<RequestId>;

  constructor(recentLimit = 256) {
    this.recentTokens = new RecentSet(recentLimit);
    this.abandonedIds = new RecentSet(recentLimit);
  }

  get size(): number {
    return this.inbound.size + this.outbound.size;
  }

  /** Forget an outbound operation and free its timer and abort listener. */
  releaseOutbound(op: OutboundOperation): void {
    this.outbound.delete(op.id);
    if (op.timer !== undefined) {
      clearTimeout(op.timer);
      op.timer = undefined;
    }
    if (op.abortListener !== undefined) {
      op.callerSignal!.removeEventListener("abort", op.abortListener);
      op.abortListener = undefined;
    }
    const token = op.progressToken;
    if (token !== undefined) {
      this.byProgressToken.delete(token);
      this.recentTokens.add(token);
    }
    const keeper = op.keeper;
    if (keeper !== undefined && keeper.released !== undefined) keeper.released(op);
  }

  /** Forget an inbound operation, unless the id was already reused by a newer request. */
  releaseInbound(op: InboundOperation): void {
    if (this.inbound.get(op.id) === op) this.inbound.delete(op.id);
    if (op.reporter !== undefined) op.reporter.stop();
  }
}
