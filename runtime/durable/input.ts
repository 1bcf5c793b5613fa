// Server-to-client requests a durable operation made that still await an answer: they outlive connections, follow
// the operation from session to session, and may be answered through another node.
import { randomBytes } from "node:crypto";
import type { JsonObject, JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";
import { OutboundOperation, type OperationKeeper } from "../rpc/operations.js";
import { RequestCancelledError } from "../rpc/errors.js";
import type { Session } from "../rpc/session/session.js";
import { asResponse, outcome } from "./messages.js";

/** Keeps such a request pending when its connection closes: a later attachment carries its answer. */
export const SURVIVES_CLOSE: OperationKeeper = { connectionClosed() {} };

/** Ids no peer request id collides with: one random prefix per process, then a counter. */
const ID_PREFIX = `mcpgen-in-${randomBytes(3).toString("hex")}-`;
let idCounter = 0;

export interface PendingRequest {
  op: OutboundOperation;
  /** The request as sent (stamped), re-sent to a later attachment. */
  message: JsonRpcMessage;
  /** Its seq in the operation's queue. */
  seq: number;
}

const NONE: ReadonlyMap<RequestId, PendingRequest> = new Map();

/** The unanswered server-to-client requests of one operation, by id (the map is made on first use: most have none). */
export class PendingRequests {
  private map: Map<RequestId, PendingRequest> | undefined = undefined;

  get size(): number {
    return this.map === undefined ? 0 : this.map.size;
  }

  values(): IterableIterator<PendingRequest> {
    return (this.map ?? NONE).values();
  }

  get(id: RequestId): PendingRequest | undefined {
    return this.map?.get(id);
  }

  /**
   * A new request to the peer, not yet sent: its operation and the promise of its answer. However it settles (an
   * answer here or from another node, the caller's abort, the operation's end) it leaves this set and `changed` runs;
   * an abort also takes it off the session `current()` names.
   */
  create(
    method: string,
    signal: AbortSignal | undefined,
    changed: () => void,
    current: () => Session | undefined,
  ): { op: OutboundOperation; promise: Promise<JsonObject> } {
    const id = `${ID_PREFIX}${idCounter++}`;
    const op = new OutboundOperation(id, method);
    op.keeper = SURVIVES_CLOSE;
    // The caller's abort listener goes once answered: a long-lived signal kept one closure per answered request.
    const settled = (): void => {
      this.map?.delete(id);
      changed();
      if (op.abortListener !== undefined) {
        signal?.removeEventListener("abort", op.abortListener);
        op.abortListener = undefined;
      }
    };
    const promise = new Promise<JsonObject>((resolve, reject) => {
      op.resolve = (result) => {
        settled();
        resolve(result);
      };
      op.reject = (error) => {
        settled();
        reject(error);
      };
    });
    if (signal !== undefined) {
      op.callerSignal = signal;
      op.abortListener = () => {
        if (this.map?.get(id)?.op !== op) return;
        op.state = "cancelled";
        const outbound = current()?.operations.outbound;
        if (outbound?.get(id) === op) outbound.delete(id);
        op.reject(new RequestCancelledError(method, signal.reason));
      };
      signal.addEventListener("abort", op.abortListener, { once: true });
    }
    return { op, promise };
  }

  /** The request was queued as `message` under `seq`: it now waits for its answer. */
  add(pending: PendingRequest): void {
    (this.map ??= new Map()).set(pending.op.id, pending);
  }

  /** The answer to one of them, relayed by the node the peer answered on. */
  answer(id: RequestId | undefined, message: unknown): void {
    const pending = id === undefined ? undefined : this.map?.get(id);
    const response = asResponse(message);
    if (pending === undefined || response === undefined || pending.op.state !== "active") return;
    const op = pending.op;
    let result: JsonObject;
    try {
      result = outcome(response);
    } catch (error) {
      op.state = "failed";
      op.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    op.state = "completed";
    op.resolve(result);
  }

  /** The session now carries them: their answers arrive there. */
  register(session: Session): void {
    if (this.size === 0) return;
    const outbound = session.operations.outbound;
    for (const { op } of this.values()) outbound.set(op.id, op);
  }

  /** The session no longer carries them (unless newer requests took the ids). */
  unregister(session: Session): void {
    if (this.size === 0) return;
    const outbound = session.operations.outbound;
    for (const { op } of this.values()) if (outbound.get(op.id) === op) outbound.delete(op.id);
  }

  /**
   * Every request still waiting is rejected: cancelled for `reason` when the operation ended, or with `reason()`
   * when only the way they went out is gone (a relay that stopped), so that their caller, telling that error
   * apart, may send them again another way.
   */
  rejectAll(reason: string | (() => Error)): void {
    if (this.size === 0) return;
    const pending = [...this.values()];
    this.map!.clear();
    for (const { op } of pending)
      op.reject(typeof reason === "string" ? new RequestCancelledError(op.method, reason) : reason());
  }
}
