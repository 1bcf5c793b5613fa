// Serving an operation another node runs (shared store): its record and queue, its queue followed live, signals to
// its node, answers to its server-to-client requests proxied there, the order of competing attachments, and its
// ending written in place of a node that stopped.
import {
  ErrorCode,
  RpcError,
  type JsonObject,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
} from "../rpc/jsonrpc.js";
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

/**
 * The signal that carries the peer's answer to server-to-client request `id` back to the node that made it,
 * whichever way the answer reached this node (a proxied request on the session, a request relayed through a
 * handler's context).
 */
export function answerSignal(id: RequestId, answer: { result: JsonObject } | { error: unknown }): OwnerSignal {
  if ("result" in answer) return { type: "answer", id, message: { jsonrpc: "2.0", id, result: answer.result } };
  const error = answer.error;
  const rpc =
    error instanceof RpcError
      ? error
      : new RpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
  return { type: "answer", id, message: { jsonrpc: "2.0", id, error: rpc.toJSON() } };
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
    return known(await this.shared.get(key), kind, principal, unknown, matches);
  }

  /**
   * The record (checked as `record` does) and the queue after `afterSeq`, read at once: what a node answers from
   * when the operation's own messages say where it stands (its latest state, its final response), and the seq to
   * follow it on from.
   */
  async read(
    key: string,
    kind: StoredOperation["kind"],
    principal: string | undefined,
    unknown: () => Error,
    afterSeq = 0,
  ): Promise<{ record: StoredOperation; queue: QueuedMessage[] }> {
    const shared = this.shared;
    const [stored, queue] = await Promise.all([shared.get(key), shared.readAfter(key, afterSeq)]);
    return { record: known(stored, kind, principal, unknown), queue };
  }

  /**
   * Ends, in its node's place, an operation whose node stopped renewing its lease, so that every node then reads
   * one ending instead of each making up its own. Only the first node to claim the operation writes it: `ending`
   * (its last messages, the final response last) after `afterSeq`, the last seq the caller read, then `status`
   * with this node as the operation's node, so followers stop hearing it lost and read the ending. False for any
   * later claim: another node writes (or wrote) the ending, to be read back. It spends a claim, so it suits only
   * operations whose claims rank nothing else.
   */
  async takeOver(
    key: string,
    afterSeq: number,
    ending: readonly JsonRpcMessage[],
    status: StoredOperation["status"],
  ): Promise<boolean> {
    const shared = this.shared;
    if ((await shared.claim(key)) !== 1) return false;
    const writes = ending.map((message, i) => () => shared.append(key, { seq: afterSeq + 1 + i, message }));
    writes.push(() => shared.update(key, { status, node: shared.nodeId }));
    // A store that keeps call order takes them all at once; any other, one after the other.
    if (shared.ordered === true) await Promise.all(writes.map((write) => write()));
    else for (const write of writes) await write();
    return true;
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
    op.resolve = (result) => tell(answerSignal(id, { result }));
    op.reject = (error) => tell(answerSignal(id, { error }));
    session.operations.outbound.set(id, op);
    return op;
  }
}

/** `stored` when it is an operation of `kind` bound to `principal` and passing `matches`; else `unknown()`, thrown. */
function known(
  stored: StoredOperation | undefined,
  kind: StoredOperation["kind"],
  principal: string | undefined,
  unknown: () => Error,
  matches?: (stored: StoredOperation) => boolean,
): StoredOperation {
  if (stored === undefined || stored.kind !== kind || stored.principal !== principal) throw unknown();
  if (matches !== undefined && !matches(stored)) throw unknown();
  return stored;
}
