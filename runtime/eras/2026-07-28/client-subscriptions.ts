// A 2026-07-28 client's subscriptions/listen stream, kept in line with what the app wants: re-listened on change without a gap, re-opened with backoff when lost.
import { isPlainObject } from "../../rpc/jsonrpc.js";
import { ConnectionClosedError, RequestCancelledError } from "../../rpc/errors.js";
import { MAX_TIMER_MS, limitOption } from "../../rpc/limits.js";
import { LISTEN } from "./wire.js";

/** What the listen streams need of the client session they run on. */
export interface ListenHost {
  /** Sends subscriptions/listen (the host stamps the envelope); resolves when the server ends it gracefully, rejects when the stream is lost or refused. */
  listen(
    filter: ListenFilter,
    options: { signal: AbortSignal; onAcknowledged: (ack: ListenFilter) => void },
  ): Promise<void>;
  /** Problems worth telling the app (a re-listen failing, a filter the server did not honour). */
  warn(error: Error): void;
}

/** The `notifications` filter of a listen request (and of its acknowledgment), by the specification's field names. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

export interface ListenOptions {
  /** The first re-listen's delay after a stream ended, ms, before jitter; default 500. */
  initialDelayMs?: number;
  /** The longest delay between re-listens, ms, before jitter; default 30000. */
  maxDelayMs?: number;
  /** How much each failed re-listen multiplies the delay by; default 2. */
  factor?: number;
  /** How many resource URIs may be subscribed at once; default 1000 (each is one more entry on every listen). */
  maxResourceSubscriptions?: number;
  /** A number in [0, 1) for the jitter; default Math.random (tests pin it). */
  random?: () => number;
  /**
   * How long a request made right after the app asked for more (a handler registered, a resource subscribed) waits
   * for the listen that carries it to be acknowledged, ms, so that a change the request causes is heard as it would
   * be on 2025-11-25; default 2000, 0 not at all. Past it the request goes anyway.
   */
  maxReadyWaitMs?: number;
}

export type ListChangedKind = "tools" | "prompts" | "resources";

const LIST_FIELD = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const;

const LIST_FIELDS = Object.values(LIST_FIELD);

/** The server acknowledged a listen with less than it asked for; `missing` names what it left out. */
export class ListenNotHonouredError extends Error {
  constructor(
    readonly requested: ListenFilter,
    readonly granted: ListenFilter,
    readonly missing: readonly string[],
  ) {
    super(`The server did not honour ${missing.join(", ")} of ${LISTEN}; those changes will not be notified`);
    this.name = "ListenNotHonouredError";
  }
}

/** One subscriptions/listen request of ours, from sending to its end. */
interface Stream {
  /** What it asked for, normalized (see want()). */
  readonly filter: ListenFilter;
  /** The filter's canonical JSON: equal wants, equal keys. */
  readonly key: string;
  readonly controller: AbortController;
  /** What the server's acknowledgment granted; undefined until then. */
  acked: ListenFilter | undefined;
  /** Aborted by us: its end is no loss. */
  aborted: boolean;
  /** Ended by the server or the transport. */
  ended: boolean;
}

/** A subscribe() or unsubscribe() waiting for the stream to catch up. */
interface Waiter {
  readonly uri: string;
  /** subscribe(): waits for an acknowledged stream with the URI; unsubscribe(): for no live stream with it. */
  readonly present: boolean;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * The client's listen stream, following what the app wants. One stream is wanted at a time, for every list-changed
 * kind the app handles and every resource URI it subscribed; none when nothing is wanted. Changes made in the same
 * tick make one new listen. The new stream is opened before the old one is aborted, which happens once the new one is
 * acknowledged, so no notification falls between them (the old one may still deliver what the app just dropped, until
 * then). A stream that ends while still wanted, gracefully or not, is listened again after a jittered exponential
 * delay, which starts over once a stream is acknowledged; while a delay runs, changes wait for it (the server just
 * failed). The retry timer is not unref'd: an app that wants notifications keeps its process alive until close().
 */
export class ListenSubscriptions {
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly factor: number;
  private readonly maxResourceSubscriptions: number;
  private readonly random: () => number;

  private readonly kinds = new Set<ListChangedKind>();
  private readonly uris = new Set<string>();
  private readonly waiters = new Set<Waiter>();
  /** Callers of settled(), until the acknowledged stream is the one the wants call for. */
  private readonly readyWaiters = new Set<() => void>();
  /** The acknowledged stream notifications come on. */
  private serving: Stream | undefined;
  /** The newest stream, sent and not yet acknowledged; it replaces `serving` once it is. */
  private opening: Stream | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Re-listens since the last acknowledgment: the backoff's exponent. */
  private attempt = 0;
  private scheduled = false;
  private closed = false;
  /** The requested and granted filters last warned about, so a re-listen of the same filter does not warn again. */
  private warnedFor: string | undefined;

  constructor(
    private readonly host: ListenHost,
    options: ListenOptions = {},
  ) {
    this.initialDelayMs = limitOption("initialDelayMs", options.initialDelayMs, 500, MAX_TIMER_MS, 1);
    this.maxDelayMs = limitOption("maxDelayMs", options.maxDelayMs, 30_000, MAX_TIMER_MS, 1);
    if (this.maxDelayMs < this.initialDelayMs)
      throw new RangeError(
        `maxDelayMs must not be below initialDelayMs (${this.initialDelayMs}), got ${this.maxDelayMs}`,
      );
    // Not limitOption: a factor need not be whole (1.5 is common); below 1 the delay would shrink as failures grow.
    const factor = options.factor ?? 2;
    if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1)
      throw new RangeError(`factor must be a finite number of at least 1, got ${String(factor)}`);
    this.factor = factor;
    this.maxResourceSubscriptions = limitOption("maxResourceSubscriptions", options.maxResourceSubscriptions, 1000);
    const random = options.random ?? Math.random;
    if (typeof random !== "function") throw new TypeError("random must be a function");
    this.random = random;
  }

  /** The filter the current stream's acknowledgment granted, if any. */
  get acknowledged(): ListenFilter | undefined {
    return this.serving?.acked;
  }

  /** Which list-changed kinds the app has handlers for ("tools" | "prompts" | "resources"); changing it re-listens. */
  setListChanged(kind: ListChangedKind, wanted: boolean): void {
    if (!Object.hasOwn(LIST_FIELD, kind))
      throw new TypeError(`kind must be one of ${Object.keys(LIST_FIELD).join(", ")}, got ${String(kind)}`);
    if (this.closed || this.kinds.has(kind) === wanted) return;
    if (wanted) this.kinds.add(kind);
    else this.kinds.delete(kind);
    this.schedule();
  }

  /** Adds a resource URI; resolves once a listen including it was acknowledged (rejects if closed first or over the max). */
  subscribe(uri: string): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    if (typeof uri !== "string" || uri === "")
      return Promise.reject(new TypeError(`a resource URI must be a non-empty string, got ${String(uri)}`));
    if (!this.uris.has(uri)) {
      if (this.uris.size >= this.maxResourceSubscriptions)
        return Promise.reject(
          new RangeError(
            `cannot subscribe to ${uri}: already subscribed to maxResourceSubscriptions (${this.maxResourceSubscriptions}) resources`,
          ),
        );
      this.uris.add(uri);
      this.schedule();
    }
    // An unsubscribe of it still waiting is undone: there is nothing left for it to wait for.
    this.settleWhere((w) => w.uri === uri && !w.present, undefined);
    return this.wait(uri, true);
  }

  /** Removes it; resolves once the listen without it is acknowledged (or at once when nothing is wanted any more). */
  unsubscribe(uri: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.uris.delete(uri)) this.schedule();
    // A subscribe of it still waiting will never see it acknowledged now.
    this.settleWhere(
      (w) => w.uri === uri && w.present,
      new RequestCancelledError(LISTEN, `${uri} was unsubscribed before a listen including it was acknowledged`),
    );
    return this.wait(uri, false);
  }

  /**
   * Resolves once the server acknowledged a stream with everything wanted so far (at once when nothing is wanted or
   * after close): a change made after it goes out reaches the app.
   */
  settled(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise<void>((resolve) => this.readyWaiters.add(resolve));
  }

  /**
   * Whether no listen asked for is on its way: everything wanted was acknowledged, or the last attempt failed and a
   * retry waits for its backoff (nothing to wait for then), or the subscriptions were closed.
   */
  isSettled(): boolean {
    if (this.closed || this.scheduled) return this.closed;
    // Asked on every request of the client: the common answer (nothing on its way) without building the filter.
    if (this.opening === undefined) return true;
    const want = this.want();
    return want === undefined || this.serving?.key === JSON.stringify(want);
  }

  /** After a new connection: listen again at once, whatever the backoff had reached (the server forgot the old one). */
  restart(): void {
    if (this.closed) return;
    this.stopRetry();
    this.attempt = 0;
    this.abort(this.opening);
    this.abort(this.serving);
    this.schedule();
  }

  /** Aborts every stream and re-listen; pending subscribes reject, pending unsubscribes resolve. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopRetry();
    this.abort(this.opening);
    this.abort(this.serving);
    this.settleWhere((w) => w.present, closedError());
    this.settleWhere((w) => !w.present, undefined);
    this.settle();
  }

  /** Coalesces the changes of this tick into one sync. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.sync();
    });
  }

  /** Opens the stream the wants call for, if the newest one is not it already; closes every stream when none is wanted. */
  private sync(): void {
    if (this.closed) return;
    const want = this.want();
    if (want === undefined) {
      this.stopRetry();
      this.abort(this.opening);
      this.abort(this.serving);
    } else {
      const key = JSON.stringify(want);
      if (this.serving?.key === key) {
        // Back to what the acknowledged stream has: whatever was on its way to replace it is moot.
        this.stopRetry();
        this.abort(this.opening);
      } else if (this.retryTimer === undefined && this.opening?.key !== key) {
        this.abort(this.opening);
        this.open(want, key);
      }
    }
    this.settle();
  }

  /** The filter the app's wants make: only what is wanted, URIs sorted and unique; undefined when nothing is. */
  private want(): ListenFilter | undefined {
    const filter: ListenFilter = {};
    for (const kind of ["tools", "prompts", "resources"] as const)
      if (this.kinds.has(kind)) filter[LIST_FIELD[kind]] = true;
    if (this.uris.size > 0) filter.resourceSubscriptions = [...this.uris].sort();
    return Object.keys(filter).length === 0 ? undefined : filter;
  }

  private open(filter: ListenFilter, key: string): void {
    const stream: Stream = {
      filter,
      key,
      controller: new AbortController(),
      acked: undefined,
      aborted: false,
      ended: false,
    };
    this.opening = stream;
    let listening: Promise<void>;
    try {
      // A copy: the host may keep or change what it is given, and `filter` is what the stream is compared by.
      listening = this.host.listen(copyFilter(filter), {
        signal: stream.controller.signal,
        onAcknowledged: (ack) => this.acknowledge(stream, ack),
      });
    } catch (error) {
      listening = Promise.reject(error);
    }
    Promise.resolve(listening).then(
      () => this.end(stream, undefined),
      (error: unknown) => this.end(stream, error === undefined ? new Error("stream lost") : error),
    );
  }

  private acknowledge(stream: Stream, ack: unknown): void {
    if (this.closed || stream.aborted || stream.ended || stream.acked !== undefined) return;
    stream.acked = readFilter(ack);
    this.attempt = 0;
    if (this.opening === stream) {
      const old = this.serving;
      this.serving = stream;
      this.opening = undefined;
      // Only now: until the new stream was acknowledged, the old one was the one delivering notifications.
      this.abort(old);
    }
    this.checkGranted(stream);
    this.settle();
  }

  /** A stream ended without our abort: `error` undefined for the server's graceful end. */
  private end(stream: Stream, error: unknown): void {
    if (this.closed || stream.aborted) return;
    stream.ended = true;
    const wasServing = this.serving === stream;
    if (wasServing) this.serving = undefined;
    else if (this.opening === stream) this.opening = undefined;
    else return;
    // A newer stream already on its way takes over; otherwise listen again, unless nothing is wanted any more.
    const delay = this.opening === undefined && this.want() !== undefined ? this.retry() : undefined;
    const then = delay === undefined ? "" : `; listening again in ${delay} ms`;
    if (error !== undefined) {
      const what = stream.acked === undefined ? "was refused or failed" : "was lost";
      this.host.warn(new Error(`${LISTEN} ${what}: ${messageOf(error)}${then}`, { cause: error }));
    } else if (stream.acked === undefined) {
      // A graceful end is the server's to make, but one before any acknowledgment granted nothing.
      this.host.warn(new Error(`${LISTEN} ended before the server acknowledged it${then}`));
    }
    this.settle();
  }

  /** Starts the backoff's timer (unless it runs already); its delay, ms. */
  private retry(): number | undefined {
    if (this.retryTimer !== undefined) return undefined;
    const base = Math.min(this.maxDelayMs, this.initialDelayMs * this.factor ** this.attempt);
    // Jittered down to 50-100%, so clients dropped together do not all come back at once.
    const delay = Math.max(1, Math.round(base * (0.5 + 0.5 * this.random())));
    this.attempt++;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.sync();
    }, delay);
    return delay;
  }

  private stopRetry(): void {
    if (this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private abort(stream: Stream | undefined): void {
    if (stream === undefined) return;
    stream.aborted = true;
    if (this.opening === stream) this.opening = undefined;
    if (this.serving === stream) this.serving = undefined;
    stream.controller.abort();
  }

  /** Warns, once per requested filter and answer, when the acknowledgment left out something asked for. */
  private checkGranted(stream: Stream): void {
    const granted = stream.acked!;
    const missing: string[] = LIST_FIELDS.filter((field) => stream.filter[field] === true && granted[field] !== true);
    const kept = new Set(granted.resourceSubscriptions ?? []);
    const dropped = (stream.filter.resourceSubscriptions ?? []).filter((uri) => !kept.has(uri));
    if (dropped.length > 0) missing.push(`resourceSubscriptions (${dropped.join(", ")})`);
    if (missing.length === 0) {
      this.warnedFor = undefined;
      return;
    }
    const mark = `${stream.key}\n${JSON.stringify(granted)}`;
    if (this.warnedFor === mark) return;
    this.warnedFor = mark;
    this.host.warn(new ListenNotHonouredError(copyFilter(stream.filter), copyFilter(granted), missing));
  }

  private wait(uri: string, present: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.add({ uri, present, resolve, reject });
      this.settle();
    });
  }

  /** Resolves the waiters the streams now satisfy. */
  private settle(): void {
    if (this.readyWaiters.size > 0 && this.isSettled()) {
      for (const resolve of this.readyWaiters) resolve();
      this.readyWaiters.clear();
    }
    for (const w of this.waiters) {
      const done = w.present
        ? this.serving?.filter.resourceSubscriptions?.includes(w.uri) === true
        : !includes(this.serving, w.uri) && !includes(this.opening, w.uri);
      if (!done) continue;
      this.waiters.delete(w);
      w.resolve();
    }
  }

  private settleWhere(which: (w: Waiter) => boolean, error: Error | undefined): void {
    for (const w of this.waiters) {
      if (!which(w)) continue;
      this.waiters.delete(w);
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
  }
}

function includes(stream: Stream | undefined, uri: string): boolean {
  return stream?.filter.resourceSubscriptions?.includes(uri) === true;
}

/** An acknowledgment's filter as the wire gave it, read with guards: only `true` flags, only string URIs. */
function readFilter(ack: unknown): ListenFilter {
  const filter: ListenFilter = {};
  if (!isPlainObject(ack)) return Object.freeze(filter);
  for (const field of LIST_FIELDS) if (ack[field] === true) filter[field] = true;
  const uris = ack.resourceSubscriptions;
  if (Array.isArray(uris))
    filter.resourceSubscriptions = Object.freeze(
      [...new Set(uris.filter((u): u is string => typeof u === "string"))].sort(),
    ) as string[];
  return Object.freeze(filter);
}

function copyFilter(filter: ListenFilter): ListenFilter {
  const copy: ListenFilter = { ...filter };
  if (filter.resourceSubscriptions !== undefined) copy.resourceSubscriptions = [...filter.resourceSubscriptions];
  return copy;
}

function closedError(): ConnectionClosedError {
  return new ConnectionClosedError("The listen subscriptions were closed before the subscription was acknowledged");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
