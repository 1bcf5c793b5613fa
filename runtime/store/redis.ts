// Operation store in Redis, shared by every node behind a load balancer; the only runtime module that imports ioredis.
import { isServerChange, type ChangeFeed, type ServerChange } from "./change-feed.js";
import { randomBytes } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import type { JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";
import type {
  FollowEvents,
  Following,
  OwnerSignal,
  QueuedMessage,
  SharedOperationStore,
  StoredOperation,
  StoredStatus,
} from "./types.js";

export interface RedisOperationStoreOptions {
  /** redis://host:port/db; ignored when `client` is given. Default: ioredis' default (127.0.0.1:6379). */
  url?: string;
  /** More ioredis options for the connections this store opens. */
  redis?: RedisOptions;
  /** A connection to use for commands (the store duplicates it for its subscriptions); the app closes it. */
  client?: Redis;
  /** Prefix of every key and channel; default "mcpgen:". Nodes of one cluster share it. */
  prefix?: string;
  /** This node's id; default random. Two live nodes must not share one. */
  nodeId?: string;
  /**
   * Milliseconds a node stays presumed alive after its last lease renewal (renewed every third of it).
   * Operations of a node whose lease lapsed read as failed. Default 10 000.
   */
  leaseMs?: number;
  /** Seconds a record outlives its end or its node when the operation gives no keepFor; default 600. */
  keepFor?: number;
  /** Milliseconds between extensions of the expiry of running operations' records; default 60 000. */
  renewMs?: number;
  onerror?: (error: Error) => void;
}

/** Why a follower stops when the operation's node is gone; resume and get answer with it. */
export const NODE_LOST_REASON = "the node running this request stopped; the request failed";

interface Follower {
  readonly key: string;
  last: number;
  readonly events: FollowEvents;
  reading: boolean;
  again: boolean;
  closed: boolean;
}

// Append: the entry id is the sequence number, so readers resume after any seq and trims need no lookup. The stream
// gets an expiry on its first entry (a node dying right after must not leave it forever); the wake-up is
// published after the entry exists.
const APPEND_SCRIPT = `
redis.call('XADD', KEYS[1], '0-' .. ARGV[1], 'm', ARGV[2])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1`;

/** HINCRBY would create a record that expired, without an expiry of its own: only count on one that exists. */
const CLAIM_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'epoch', 1)`;

type RedisWithAppend = Redis & {
  mcpgenAppend(queue: string, wake: string, seq: number, message: string, ttlMs: number): Promise<unknown>;
  mcpgenClaim(record: string): Promise<number>;
};

const STATUSES = new Set<string>(["processing", "completed", "failed"]);

/**
 * Operation state (a hash), message queue (a stream whose entry ids are the sequence numbers) and liveness (one
 * lease key per node, renewed every third of leaseMs) in Redis. Every key expires: a running operation's records
 * are extended while its node lives; a finished one's last keepFor seconds unless its node deletes them first.
 * Followers on other nodes are woken by pub/sub and re-read the stream, so a missed wake-up only delays them
 * until the next lease check.
 */
export class RedisOperationStore implements SharedOperationStore {
  readonly nodeId: string;
  readonly ordered = true;
  readonly prefix: string;
  /** The pub/sub channel of the change feed (see changeFeed). */
  private readonly changesChannel: string;
  readonly leaseMs: number;
  private readonly keepForMs: number;
  private readonly renewMs: number;
  private readonly redis: RedisWithAppend;
  private readonly sub: Redis;
  private readonly ownsClient: boolean;
  private readonly onerror: ((error: Error) => void) | undefined;
  /** Running operations of this node, with the ms their records must outlive a renewal by. */
  private readonly owned = new Map<string, number>();
  private readonly followers = new Map<string, Set<Follower>>();
  private readonly subscribed = new Map<string, Promise<unknown>>();
  private readonly signalListeners = new Set<(key: string, signal: OwnerSignal) => void>();
  private signalSubscription: Promise<unknown> | undefined = undefined;
  private readonly changeListeners = new Set<(change: ServerChange) => void>();
  private changeSubscription: Promise<unknown> | undefined = undefined;
  private leaseTimer: ReturnType<typeof setInterval>;
  private renewTimer: ReturnType<typeof setInterval>;
  private watchTimer: ReturnType<typeof setInterval> | undefined = undefined;
  private closed = false;

  constructor(options: RedisOperationStoreOptions = {}) {
    this.prefix = options.prefix ?? "mcpgen:";
    this.changesChannel = `${this.prefix}changes`;
    this.nodeId = options.nodeId ?? randomBytes(8).toString("hex");
    this.leaseMs = options.leaseMs ?? 10_000;
    this.keepForMs = (options.keepFor ?? 600) * 1000;
    this.renewMs = options.renewMs ?? 60_000;
    this.onerror = options.onerror;
    const base =
      options.client ??
      (options.url !== undefined ? new Redis(options.url, options.redis ?? {}) : new Redis(options.redis ?? {}));
    this.ownsClient = options.client === undefined;
    this.redis = base as RedisWithAppend;
    this.redis.defineCommand("mcpgenAppend", { numberOfKeys: 2, lua: APPEND_SCRIPT });
    this.redis.defineCommand("mcpgenClaim", { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    this.sub = base.duplicate();
    this.sub.on("message", (channel: string, payload: string) => this.heard(channel, payload));
    for (const connection of [this.redis, this.sub]) connection.on("error", (error: Error) => this.report(error));
    this.renewLease();
    this.leaseTimer = setInterval(() => this.renewLease(), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.leaseTimer.unref();
    this.renewTimer = setInterval(() => this.renewRecords(), this.renewMs);
    this.renewTimer.unref();
  }

  // ---- keys ----

  private opKey(key: string): string {
    return `${this.prefix}op:${key}`;
  }
  private queueKey(key: string): string {
    return `${this.prefix}q:${key}`;
  }
  private wakeChannel(key: string): string {
    return `${this.prefix}w:${key}`;
  }
  private leaseKey(node: string): string {
    return `${this.prefix}node:${node}`;
  }
  private nodeChannel(node: string): string {
    return `${this.prefix}n:${node}`;
  }

  // ---- OperationStore ----

  async create(key: string, operation: StoredOperation): Promise<void> {
    const keepMs = operation.keepFor !== undefined ? operation.keepFor * 1000 : this.keepForMs;
    const fields: Record<string, string> = {
      kind: operation.kind,
      requestId: JSON.stringify(operation.requestId),
      status: operation.status,
      pendingInput: String(operation.pendingInput),
      keepFor: String(keepMs),
    };
    if (operation.principal !== undefined) fields.principal = operation.principal;
    if (operation.node !== undefined) fields.node = operation.node;
    const running = operation.status === "processing" && operation.node === this.nodeId;
    if (running) this.owned.set(key, keepMs);
    const ttl = running ? keepMs + 2 * this.renewMs : keepMs;
    await this.redis.multi().hset(this.opKey(key), fields).pexpire(this.opKey(key), ttl).exec();
  }

  async get(key: string): Promise<StoredOperation | undefined> {
    const replies = await this.redis.multi().hgetall(this.opKey(key)).xlen(this.queueKey(key)).exec();
    const hash = replies?.[0]?.[1] as Record<string, string> | null | undefined;
    if (hash === null || hash === undefined || hash.kind === undefined) return undefined;
    const operation = this.parse(hash);
    operation.queued = Number(replies?.[1]?.[1] ?? 0);
    if (operation.status === "processing" && operation.node !== undefined && !(await this.nodeAlive(operation.node))) {
      operation.status = "failed";
      operation.lost = true;
    }
    return operation;
  }

  async update(key: string, patch: Partial<StoredOperation>): Promise<void> {
    const fields: Record<string, string> = {};
    if (patch.status !== undefined) fields.status = patch.status;
    if (patch.pendingInput !== undefined) fields.pendingInput = String(patch.pendingInput);
    if (patch.node !== undefined) fields.node = patch.node;
    if (patch.principal !== undefined) fields.principal = patch.principal;
    if (Object.keys(fields).length === 0) return;
    const batch = this.redis.multi().hset(this.opKey(key), fields);
    if (patch.status !== undefined && patch.status !== "processing") {
      // Finished: it no longer needs its node, and its records last keepFor unless its node deletes them sooner.
      const keepMs = this.owned.get(key) ?? this.keepForMs;
      this.owned.delete(key);
      batch.pexpire(this.opKey(key), keepMs).pexpire(this.queueKey(key), keepMs);
    }
    await batch.exec();
  }

  async append(key: string, item: QueuedMessage): Promise<void> {
    const ttl = (this.owned.get(key) ?? this.keepForMs) + 2 * this.renewMs;
    await this.redis.mcpgenAppend(
      this.queueKey(key),
      this.wakeChannel(key),
      item.seq,
      JSON.stringify(item.message),
      ttl,
    );
  }

  async readAfter(key: string, afterSeq: number): Promise<QueuedMessage[]> {
    return this.range(key, afterSeq, undefined);
  }

  async confirm(key: string, seq: number): Promise<void> {
    if (seq <= 0) return;
    await this.redis.xtrim(this.queueKey(key), "MINID", `0-${seq + 1}`);
  }

  async delete(key: string): Promise<void> {
    this.owned.delete(key);
    await this.redis.del(this.opKey(key), this.queueKey(key));
  }

  /** Operations recorded under this prefix, by every node (a SCAN: for tests and metrics, not for hot paths). */
  async count(): Promise<number> {
    let cursor = "0";
    let n = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${this.prefix}op:*`, "COUNT", 1000);
      cursor = next;
      n += keys.length;
    } while (cursor !== "0");
    return n;
  }

  /** Every key under this prefix (operations, queues, node leases): for leak checks. */
  async keys(): Promise<string[]> {
    const all: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${this.prefix}*`, "COUNT", 1000);
      cursor = next;
      all.push(...keys);
    } while (cursor !== "0");
    return all;
  }

  // ---- SharedOperationStore ----

  follow(key: string, afterSeq: number, events: FollowEvents): Following {
    const follower: Follower = { key, last: afterSeq, events, reading: false, again: false, closed: false };
    let set = this.followers.get(key);
    if (set === undefined) this.followers.set(key, (set = new Set()));
    set.add(follower);
    let subscription = this.subscribed.get(key);
    if (subscription === undefined) {
      subscription = this.sub.subscribe(this.wakeChannel(key));
      this.subscribed.set(key, subscription);
    }
    if (this.watchTimer === undefined) {
      this.watchTimer = setInterval(() => void this.watch(), Math.max(10, Math.floor(this.leaseMs / 3)));
      this.watchTimer.unref();
    }
    // Read once subscribed: whatever is appended after the read wakes us, whatever came before it is read.
    subscription.then(
      () => this.pull(follower),
      (error: unknown) => this.report(error),
    );
    return { close: () => this.unfollow(follower) };
  }

  async claim(key: string): Promise<number> {
    return Number(await this.redis.mcpgenClaim(this.opKey(key)));
  }

  async signal(node: string, key: string, signal: OwnerSignal): Promise<void> {
    await this.redis.publish(this.nodeChannel(node), JSON.stringify({ key, ...signal }));
  }

  onSignal(listener: (key: string, signal: OwnerSignal) => void): () => void {
    this.signalListeners.add(listener);
    this.signalSubscription ??= this.sub
      .subscribe(this.nodeChannel(this.nodeId))
      .catch((error: unknown) => this.report(error));
    return () => this.signalListeners.delete(listener);
  }

  /** Resolves once this node listens for signals (an owner must not miss the first attach). */
  async ready(): Promise<void> {
    await this.signalSubscription;
    await this.redis.ping();
  }

  /** Stop renewing (this node's operations then read as failed on other nodes) and close the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.leaseTimer);
    clearInterval(this.renewTimer);
    if (this.watchTimer !== undefined) clearInterval(this.watchTimer);
    for (const set of this.followers.values()) for (const f of set) f.closed = true;
    this.followers.clear();
    await this.redis.del(this.leaseKey(this.nodeId)).catch(() => undefined);
    this.sub.disconnect();
    if (this.ownsClient) await this.redis.quit().catch(() => undefined);
  }

  /** Stop renewing and drop the connections without a word, as a crash would (its lease then lapses on its own). */
  abandon(): void {
    this.closed = true;
    clearInterval(this.leaseTimer);
    clearInterval(this.renewTimer);
    if (this.watchTimer !== undefined) clearInterval(this.watchTimer);
    this.followers.clear();
    this.sub.disconnect();
    if (this.ownsClient) this.redis.disconnect();
  }

  // ---- internals ----

  private parse(hash: Record<string, string>): StoredOperation {
    const status = (STATUSES.has(hash.status) ? hash.status : "failed") as StoredStatus;
    const operation: StoredOperation = {
      kind: hash.kind === "async" || hash.kind === "task" || hash.kind === "extension-task" ? hash.kind : "resumable",
      requestId: JSON.parse(hash.requestId) as RequestId,
      status,
      pendingInput: Number(hash.pendingInput ?? 0),
    };
    if (hash.principal !== undefined) operation.principal = hash.principal;
    if (hash.node !== undefined) operation.node = hash.node;
    if (hash.keepFor !== undefined) operation.keepFor = Number(hash.keepFor) / 1000;
    return operation;
  }

  private async nodeAlive(node: string): Promise<boolean> {
    if (node === this.nodeId && !this.closed) return true;
    return (await this.redis.exists(this.leaseKey(node))) === 1;
  }

  private async range(key: string, afterSeq: number, count: number | undefined): Promise<QueuedMessage[]> {
    const entries =
      count === undefined
        ? await this.redis.xrange(this.queueKey(key), `(0-${afterSeq}`, "+")
        : await this.redis.xrange(this.queueKey(key), `(0-${afterSeq}`, "+", "COUNT", count);
    const out: QueuedMessage[] = [];
    for (const [id, fields] of entries) {
      const seq = Number(id.slice(2));
      const raw = fields[1];
      if (raw === undefined) continue;
      out.push({ seq, message: JSON.parse(raw) as JsonRpcMessage });
    }
    return out;
  }

  private pull(follower: Follower): Promise<void> {
    if (follower.closed) return Promise.resolve();
    if (follower.reading) {
      follower.again = true;
      return Promise.resolve();
    }
    follower.reading = true;
    const step = async (): Promise<void> => {
      for (;;) {
        follower.again = false;
        const items = await this.range(follower.key, follower.last, 512);
        for (const item of items) {
          if (follower.closed) return;
          if (item.seq <= follower.last) continue;
          follower.last = item.seq;
          follower.events.message(item);
        }
        if (follower.closed || (items.length < 512 && !follower.again)) return;
      }
    };
    return step()
      .catch((error: unknown) => this.report(error))
      .finally(() => {
        follower.reading = false;
      });
  }

  private unfollow(follower: Follower): void {
    follower.closed = true;
    const set = this.followers.get(follower.key);
    if (set === undefined || !set.delete(follower) || set.size > 0) return;
    this.followers.delete(follower.key);
    this.subscribed.delete(follower.key);
    if (!this.closed)
      this.sub.unsubscribe(this.wakeChannel(follower.key)).catch((error: unknown) => this.report(error));
    if (this.followers.size === 0 && this.watchTimer !== undefined) {
      clearInterval(this.watchTimer);
      this.watchTimer = undefined;
    }
  }

  /** Every third of the lease: catch up on anything a lost wake-up hid, and fail followers whose node is gone. */
  private async watch(): Promise<void> {
    const keys = [...this.followers.keys()];
    if (keys.length === 0) return;
    try {
      const batch = this.redis.pipeline();
      for (const key of keys) batch.hmget(this.opKey(key), "status", "node");
      const replies = (await batch.exec()) ?? [];
      const nodes = new Map<string, boolean>();
      for (const [, reply] of replies) {
        const node = (reply as (string | null)[] | null)?.[1];
        if (typeof node === "string") nodes.set(node, true);
      }
      // Independent round trips go out together (one connection pipelines them), not one after another.
      await Promise.all([...nodes.keys()].map(async (node) => nodes.set(node, await this.nodeAlive(node))));
      const checks: Promise<void>[] = [];
      for (let i = 0; i < keys.length; i++) {
        const set = this.followers.get(keys[i]);
        if (set === undefined) continue;
        const [status, node] = (replies[i]?.[1] ?? [null, null]) as (string | null)[];
        const gone = status === null;
        const lost = gone || (status === "processing" && node !== null && nodes.get(node) === false);
        for (const follower of [...set]) {
          // Each follower gets what is queued before it hears that the request is lost.
          checks.push(
            this.pull(follower).then(() => {
              if (lost && !follower.closed) {
                this.unfollow(follower);
                follower.events.lost(gone ? "the request is gone (expired or deleted)" : NODE_LOST_REASON);
              }
            }),
          );
        }
      }
      await Promise.all(checks);
    } catch (error) {
      this.report(error);
    }
  }

  private heard(channel: string, payload: string): void {
    const prefix = this.prefix;
    if (channel === this.changesChannel) return this.heardChange(payload);
    if (channel.startsWith(`${prefix}w:`)) {
      const set = this.followers.get(channel.slice(prefix.length + 2));
      if (set !== undefined) for (const follower of set) void this.pull(follower);
      return;
    }
    if (channel === this.nodeChannel(this.nodeId)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload);
      } catch {
        return;
      }
      if (typeof parsed !== "object" || parsed === null || typeof (parsed as { key?: unknown }).key !== "string")
        return;
      const { key, ...signal } = parsed as { key: string } & OwnerSignal;
      for (const listener of [...this.signalListeners]) listener(key, signal);
    }
  }

  /**
   * A change feed over this store's Redis (pub/sub on `<prefix>changes`): what McpServer's `changes` option takes so
   * that every node's listen streams hear a change raised on any node. Best effort, as pub/sub is.
   */
  changeFeed(): ChangeFeed {
    const channel = this.changesChannel;
    const origin = this.nodeId;
    return {
      publish: (change) => {
        if (this.closed) return;
        this.redis.publish(channel, JSON.stringify({ origin, change })).catch((error: unknown) => this.report(error));
      },
      subscribe: (listener) => {
        this.changeListeners.add(listener);
        if (this.changeSubscription === undefined) {
          this.changeSubscription = this.sub.subscribe(channel);
          this.changeSubscription.catch((error: unknown) => this.report(error));
        }
        return () => this.changeListeners.delete(listener);
      },
    };
  }

  /** Resolves once this node hears the change feed (a change published before then is not heard here). */
  async changesReady(): Promise<void> {
    await this.changeSubscription;
  }

  private heardChange(payload: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return;
    }
    const { origin, change } = (parsed ?? {}) as { origin?: unknown; change?: unknown };
    if (origin === this.nodeId || !isServerChange(change)) return;
    for (const listener of [...this.changeListeners]) listener(change);
  }

  private renewLease(): void {
    if (this.closed) return;
    this.redis.set(this.leaseKey(this.nodeId), "1", "PX", this.leaseMs).catch((error: unknown) => this.report(error));
  }

  private renewRecords(): void {
    if (this.closed || this.owned.size === 0) return;
    const batch = this.redis.pipeline();
    for (const [key, keepMs] of this.owned) {
      const ttl = keepMs + 2 * this.renewMs;
      batch.pexpire(this.opKey(key), ttl).pexpire(this.queueKey(key), ttl);
    }
    batch.exec().catch((error: unknown) => this.report(error));
  }

  private report(error: unknown): void {
    if (this.closed) return;
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}
