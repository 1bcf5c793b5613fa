// Serving an operation another node runs (shared store): its record, its queue followed live, signals to its node,
// answers to its server-to-client requests proxied there, and the order of competing attachments.
import { ErrorCode, RpcError, type JsonRpcResponse, type RequestId } from "../rpc/jsonrpc.js";
import { OutboundOperation } from "../rpc/operations.js";
import type { Session } from "../rpc/session/session.js";
import type { Following, OwnerSignal, QueuedMessage, SharedOperationStore, StoredOperation } from "../store/types.js";
import type { DurableEngine, DurableOperation } from "./engine.js";
import { SURVIVES_CLOSE } from "./input.js";
import { isResponse } from "./messages.js";

/**
 * An attachment's rank is the client's attempt number times this, plus its claim in the shared store: a later
 * attempt always outranks an earlier one; between attachments of the same attempt (a client that does not number
 * them) the later claim wins. Exact integers for any attempt count a client could reach.
 */
export const CLAIMS_PER_ATTEMPT = 2 ** 32;

/** The rank of an attachment (see CLAIMS_PER_ATTEMPT); the node running the operation honours only the highest. */
export function attemptRank(attempt: number, claim: number): number {
  return attempt * CLAIMS_PER_ATTEMPT + claim;
}

/** What a follow of another node's operation hears; exactly one of final, lost and closed ends it. */
export interface RemoteFollowEvents {
  /** Each message before the final response, in seq order. */
  message(item: QueuedMessage): void;
  /** The final response (result or error). */
  final(response: JsonRpcResponse): void;
  /** The operation can no longer finish: its node stopped renewing its lease, or its record is gone. */
  lost(reason: string): void;
  /** The engine closed (server shutdown). */
  closed(): void;
  /** Runs first on every ending, whichever it is (the follower's cleanup). */
  ended?(): void;
}

/** A live follow of another node's operation. */
export interface RemoteFollow {
  readonly ended: boolean;
  /** Stop following; `then` runs unless the follow had already ended. */
  end(then?: () => void): void;
}

/** What a node serving other nodes' operations shares, whatever the protocol: one per engine on a shared store. */
export class RemoteOperations<T extends DurableOperation> {
  constructor(
    private readonly engine: DurableEngine<T>,
    readonly shared: SharedOperationStore,
  ) {}

  /** The engine's remote side, when its store is shared between nodes. */
  static of<T extends DurableOperation>(engine: DurableEngine<T>): RemoteOperations<T> | undefined {
    return engine.shared === undefined ? undefined : new RemoteOperations(engine, engine.shared);
  }

  /**
   * The stored record of an operation of `kind`, bound to `principal` and passing `matches`; else `unknown()` is
   * thrown, the same for every miss.
   */
  async record(
    key: string,
    kind: StoredOperation["kind"],
    principal: string | undefined,
    unknown: () => Error,
    matches?: (stored: StoredOperation) => boolean,
  ): Promise<StoredOperation> {
    const stored = await this.shared.get(key);
    if (stored === undefined || stored.kind !== kind || stored.principal !== principal) throw unknown();
    if (matches !== undefined && !matches(stored)) throw unknown();
    return stored;
  }

  /** Signal the node running an operation (best effort; a failure is reported, not thrown). */
  tell(node: string | undefined, key: string, signal: OwnerSignal): void {
    if (node === undefined) return;
    const shared = this.shared;
    this.engine.writes.write(() => shared.signal(node, key, signal));
  }

  /** The next attachment number of an operation across all nodes (0 once its record is gone). */
  claim(key: string): Promise<number> {
    return Promise.resolve(this.shared.claim(key));
  }

  /** Follow an operation's queue from `afterSeq` until its final response, its loss, end() or the engine's close. */
  follow(key: string, afterSeq: number, events: RemoteFollowEvents): RemoteFollow {
    let ended = false;
    let following: Following | undefined = undefined;
    let unregister: () => void = () => undefined;
    const end = (then?: () => void): void => {
      if (ended) return;
      ended = true;
      following?.close();
      unregister();
      events.ended?.();
      then?.();
    };
    following = this.shared.follow(key, afterSeq, {
      message: (item) => {
        if (ended) return;
        const message = item.message;
        if (isResponse(message)) end(() => events.final(message));
        else events.message(item);
      },
      lost: (reason) => end(() => events.lost(reason)),
    });
    if (ended) following.close();
    else unregister = this.engine.following(() => end(() => events.closed()));
    return {
      get ended() {
        return ended;
      },
      end,
    };
  }

  /**
   * Stands in, on `session`, for a server-to-client request another node made: the answer the peer gives here goes
   * to that node through `tell`.
   */
  proxy(session: Session, id: RequestId, method: string, tell: (signal: OwnerSignal) => void): OutboundOperation {
    const op = new OutboundOperation(id, method);
    op.keeper = SURVIVES_CLOSE;
    op.resolve = (result) => tell({ type: "answer", id, message: { jsonrpc: "2.0", id, result } });
    op.reject = (error) => {
      const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, error.message);
      tell({ type: "answer", id, message: { jsonrpc: "2.0", id, error: rpc.toJSON() } });
    };
    session.operations.outbound.set(id, op);
    return op;
  }
}
