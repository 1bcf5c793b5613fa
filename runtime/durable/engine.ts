// The durable-operation engine: operations that outlive their connection, held by store key and found by token.
import { IdleWaiters } from "../rpc/idle-waiters.js";
import { StableMap } from "../rpc/stable-map.js";
import {
  isSharedStore,
  isSyncStore,
  type OperationStore,
  type OwnerSignal,
  type SharedOperationStore,
  type SyncOperationStore,
} from "../store/types.js";
import { isPresentedToken, TokenScheme } from "./token.js";
import { WriteOrder } from "./writes.js";

/**
 * What every durable operation is to the engine, whatever protocol made it (a resumable request, an async tool
 * run, a task): a store key derived from its token, what the token scheme kept of that token, the principal it is
 * bound to, and whether it was freed.
 */
export interface DurableOperation {
  readonly key: string;
  readonly keptToken: string;
  readonly principal: string | undefined;
  readonly freed: boolean;
}

/**
 * Holds the operations one protocol manager runs on this node, in one store: the token scheme that fits the store,
 * write ordering for it, the table by key, idle waiting, the signals other nodes send about them, and the follows
 * this node serves for operations other nodes run (all ended by close()).
 */
export class DurableEngine<T extends DurableOperation> {
  readonly store: OperationStore;
  /** The store, when it is synchronous: written without ordering, records written through directly. */
  readonly direct: SyncOperationStore | undefined;
  /** The store, when it is shared between nodes. */
  readonly shared: SharedOperationStore | undefined;
  readonly tokens: TokenScheme;
  readonly writes: WriteOrder<T>;
  private readonly held = new StableMap<string, T>();
  private readonly idleWaiters = new IdleWaiters();
  private readonly follows = new Set<() => void>();
  private readonly stopSignals: (() => void) | undefined;

  constructor(
    store: OperationStore,
    report: (error: unknown) => void,
    /** A signal from another node about an operation held here (freed ones are not passed on). */
    signalled?: (operation: T, signal: OwnerSignal) => void,
  ) {
    this.store = store;
    this.direct = isSyncStore(store) ? store : undefined;
    this.shared = isSharedStore(store) ? store : undefined;
    // Keys by prefix (the token kept in this process) only where everything stays in this process.
    this.tokens = new TokenScheme(this.direct !== undefined);
    this.writes = new WriteOrder(store, report);
    if (this.shared !== undefined && signalled !== undefined) {
      this.stopSignals = this.shared.onSignal((key, signal) => {
        const operation = this.held.get(key);
        if (operation !== undefined && !operation.freed) signalled(operation, signal);
      });
    }
  }

  /** Operations held here (running, or finished and kept). */
  get size(): number {
    return this.held.size;
  }

  values(): T[] {
    return [...this.held.values()];
  }

  get(key: string): T | undefined {
    return this.held.get(key);
  }

  has(key: string): boolean {
    return this.held.has(key);
  }

  add(operation: T): void {
    this.held.set(operation.key, operation);
  }

  /** Forget an operation (its store record is the caller's to delete); wakes idle() once nothing is held. */
  remove(operation: T): void {
    if (this.held.get(operation.key) === operation) this.held.delete(operation.key);
    this.idleWaiters.settle(this.held.size === 0);
  }

  /**
   * The operation a presented token names, if held here, not freed and bound to `principal`: found by key, then the
   * whole token matched in constant time. Every miss looks the same to the caller.
   */
  find(token: unknown, principal: string | undefined): T | undefined {
    if (!isPresentedToken(token)) return undefined;
    const operation = this.held.get(this.tokens.keyOf(token));
    if (operation === undefined || operation.freed || operation.principal !== principal) return undefined;
    return this.tokens.matches(operation.keptToken, token) ? operation : undefined;
  }

  /** The store key of a token this node does not hold, when the store is shared (else undefined: served here). */
  remoteKey(token: unknown, alsoHeld?: (key: string) => boolean): string | undefined {
    if (this.shared === undefined || !isPresentedToken(token)) return undefined;
    const key = this.tokens.keyOf(token);
    return this.held.has(key) || alsoHeld?.(key) === true ? undefined : key;
  }

  /** Registers a follow of another node's operation, ended by close(); returns the function that unregisters it. */
  following(end: () => void): () => void {
    this.follows.add(end);
    return () => void this.follows.delete(end);
  }

  /** Resolves once nothing is held. */
  idle(): Promise<void> {
    return this.idleWaiters.wait(this.held.size === 0);
  }

  /** Stop hearing signals and end every follow (shutdown); the caller then frees what it holds. */
  close(): void {
    this.stopSignals?.();
    for (const end of [...this.follows]) end();
  }
}
