// The requests a session sends: ids, the table of those awaiting an answer, timeouts, cancellation, response matching.
import {
  ErrorCode,
  RpcError,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type RequestId,
} from "../jsonrpc.js";
import type { MethodSpec } from "../dispatch.js";
import { SENT, type SendOptions, type Transport } from "../transport.js";
import type { ProgressInfo, RequestOptions } from "../peer.js";
import { InvalidResultError, RequestCancelledError, RequestTimeoutError, rpcErrorOf } from "../errors.js";
import { OutboundOperation, type OperationRegistry } from "../operations.js";
import { PROGRESS_NOTIFICATION, withProgressToken } from "../progress.js";
import type { SessionLink } from "./link.js";
import { reasonText, withIssues } from "./validation.js";

export const CANCELLED_NOTIFICATION = "notifications/cancelled";
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

type Fields = { [key: string]: unknown };

/** The session's outbound side: one per session. */
export class OutboundRequests {
  /** The id the next request will carry (ids are handed out in order, one per request). */
  nextId = 0;

  constructor(
    private readonly link: SessionLink,
    private readonly operations: OperationRegistry,
    /** Methods we send; when an entry has `isResult`, responses are checked with it. */
    private readonly specs: ReadonlyMap<string, MethodSpec>,
    private readonly defaultTimeout: number,
    /** Methods whose cancellation is never sent (the call still rejects locally). */
    private readonly uncancellable: ReadonlySet<string>,
  ) {}

  /** Send a request that the session already allowed; settles with its response. */
  start(
    transport: Transport,
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
    relatedRequestId: RequestId | undefined,
    checkResult = true,
  ): Promise<JsonObject> {
    const signal = options?.signal;
    if (signal !== undefined && signal.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));

    const id = this.nextId++;
    const op = new OutboundOperation(id, method);
    if (!checkResult) op.resultUnchecked = true;
    if (params !== undefined && isPlainObject(params.task)) op.taskAugmented = true;
    let wireParams = params;
    let timeout = this.defaultTimeout;
    if (options !== undefined) {
      if (options.timeout !== undefined) timeout = options.timeout;
      op.maxTotalTimeout = options.maxTotalTimeout;
      // A token is needed to hear progress even when only the timeout reset cares about it.
      if (options.onProgress !== undefined || options.resetTimeoutOnProgress === true) {
        op.progressToken = id;
        op.onProgress = options.onProgress;
        op.resetTimeoutOnProgress = options.resetTimeoutOnProgress === true;
        wireParams = withProgressToken(params, id);
        this.operations.byProgressToken.set(id, op);
      }
    }
    op.timeout = timeout;
    op.startedAt = Date.now();
    const promise = new Promise<JsonObject>((resolve, reject) => {
      op.resolve = resolve;
      op.reject = reject;
    });
    this.operations.outbound.set(id, op);
    this.armTimeout(op);
    if (signal !== undefined) {
      op.callerSignal = signal;
      op.abortListener = () => this.cancel(op, signal.reason);
      signal.addEventListener("abort", op.abortListener, { once: true });
    }
    const message: JsonRpcRequest =
      wireParams === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params: wireParams };
    const headers = options?.headers;
    this.transmit(
      transport,
      op,
      message,
      relatedRequestId === undefined
        ? headers === undefined
          ? undefined
          : { headers }
        : headers === undefined
          ? { relatedRequestId }
          : { relatedRequestId, headers },
    );
    return promise;
  }

  /** Register a still pending operation again before its request is re-sent under its id (see Session.resendAs). */
  reinstate(op: OutboundOperation): void {
    if (this.operations.outbound.get(op.id) !== op) this.operations.outbound.set(op.id, op);
    if (op.progressToken !== undefined) this.operations.byProgressToken.set(op.progressToken, op);
  }

  /** Not async: a transport that returns SENT costs no promise reaction per request. */
  private transmit(
    transport: Transport,
    op: OutboundOperation,
    message: JsonRpcRequest,
    options: SendOptions | undefined,
  ): void {
    let sent: Promise<void>;
    try {
      sent = transport.send(message, options);
    } catch (error) {
      this.failSend(op, error);
      return;
    }
    if (sent !== SENT) sent.catch((error: unknown) => this.failSend(op, error));
  }

  private failSend(op: OutboundOperation, error: unknown): void {
    if (op.state !== "active") return;
    op.state = "failed";
    this.operations.releaseOutbound(op);
    op.reject(error instanceof Error ? error : new Error(String(error)));
  }

  private armTimeout(op: OutboundOperation): void {
    let delay = op.timeout;
    op.timerIsTotal = false;
    if (op.maxTotalTimeout !== undefined) {
      const remaining = op.maxTotalTimeout - (Date.now() - op.startedAt);
      if (remaining <= delay) {
        delay = remaining;
        op.timerIsTotal = true;
      }
    }
    op.timer = setTimeout(onRequestTimeout, delay > 0 ? delay : 0, this, op);
  }

  /** @internal timer callback */
  expire(op: OutboundOperation): void {
    op.timer = undefined;
    if (op.state !== "active") return;
    op.state = "timedOut";
    this.operations.releaseOutbound(op);
    this.operations.abandonedIds.add(op.id);
    const error = op.timerIsTotal
      ? new RequestTimeoutError(op.method, op.maxTotalTimeout!, true)
      : new RequestTimeoutError(op.method, op.timeout);
    this.sendCancelled(op, error.message);
    op.reject(error);
  }

  private cancel(op: OutboundOperation, reason: unknown): void {
    if (op.state !== "active") return;
    op.state = "cancelled";
    this.operations.releaseOutbound(op);
    this.operations.abandonedIds.add(op.id);
    const error = new RequestCancelledError(op.method, reason);
    this.sendCancelled(op, reasonText(reason));
    op.reject(error);
  }

  private sendCancelled(op: OutboundOperation, reason: string | undefined): void {
    const transport = this.link.openTransport;
    if (transport === undefined || this.uncancellable.has(op.method)) return;
    const params: JsonObject = reason === undefined ? { requestId: op.id } : { requestId: op.id, reason };
    transport
      .send({ jsonrpc: "2.0", method: CANCELLED_NOTIFICATION, params })
      .catch((e: unknown) => this.link.reportError(e));
  }

  /** notifications/progress for one of our requests. */
  progress(params: JsonObject | undefined): void {
    if (params === undefined) return;
    const token = params.progressToken;
    const progress = params.progress;
    if ((typeof token !== "string" && typeof token !== "number") || typeof progress !== "number") {
      this.link.debug({ kind: "invalid-notification-params", method: PROGRESS_NOTIFICATION, detail: params });
      return;
    }
    const op = this.operations.byProgressToken.get(token);
    if (op === undefined) {
      if (this.operations.recentTokens.has(token)) this.link.debug({ kind: "late-progress", detail: token });
      else this.link.reportError(new Error(`Progress for unknown token ${JSON.stringify(token)}`));
      return;
    }
    if (op.resetTimeoutOnProgress && op.timer !== undefined && !op.timerIsTotal) {
      clearTimeout(op.timer);
      this.armTimeout(op);
    }
    const onProgress = op.onProgress;
    if (onProgress === undefined) return;
    const info: ProgressInfo = { progress };
    if (typeof params.total === "number") info.total = params.total;
    if (typeof params.message === "string") info.message = params.message;
    try {
      onProgress(info);
    } catch (error) {
      this.link.reportError(error);
    }
  }

  /** A well-formed response: settle the request it answers. */
  response(m: Fields): void {
    const id = m.id as RequestId | undefined;
    const op = id === undefined ? undefined : this.operations.outbound.get(id);
    if (op === undefined) {
      if (id !== undefined && this.operations.abandonedIds.has(id)) {
        this.link.debug({ kind: "late-response", id });
      } else if (id === undefined) {
        const e = m.error as JsonRpcErrorObject;
        this.link.reportError(new RpcError(e.code, `Peer reported: ${e.message}`, e.data));
      } else {
        this.link.reportError(new Error(`Response for unknown request id ${JSON.stringify(id)}`));
      }
      return;
    }
    this.operations.releaseOutbound(op);
    const error = m.error as JsonRpcErrorObject | undefined;
    if (error !== undefined) {
      op.state = "failed";
      op.reject(rpcErrorOf(error));
      return;
    }
    const result = m.result as JsonObject;
    const spec = op.resultUnchecked ? undefined : this.specs.get(op.method);
    // Sent with a `task`, a request is answered by the task created for it, or by its own result from a receiver
    // that runs it plainly (the spec lets one without the capability ignore `task`).
    const asTask = op.taskAugmented && spec !== undefined && spec.isTaskResult !== undefined;
    if (
      spec !== undefined &&
      spec.isResult !== undefined &&
      !(asTask && spec.isTaskResult!(result)) &&
      !spec.isResult(result)
    ) {
      op.state = "failed";
      const explain = asTask && isPlainObject(result) && "task" in result ? spec.explainTaskResult : spec.explainResult;
      withIssues(
        explain !== undefined ? explain(result) : [],
        (issues) => op.reject(new InvalidResultError(op.method, op.id, result, issues)),
        this.link.reportError,
      );
      return;
    }
    op.state = "completed";
    op.resolve(result);
  }

  /** A response that is not well-formed gets no reply (replying to responses could ping-pong): fail its call. */
  malformedResponse(id: RequestId | undefined, m: Fields): void {
    const op = id === undefined ? undefined : this.operations.outbound.get(id);
    const error = new RpcError(ErrorCode.InvalidRequest, "Malformed response from peer", { response: m });
    if (op !== undefined && op.state === "active") {
      op.state = "failed";
      this.operations.releaseOutbound(op);
      op.reject(error);
    } else {
      this.link.reportError(error);
    }
  }

  /** The connection closed: pending calls fail with `error`, except those a keeper holds for the next connection. */
  connectionClosed(error: Error, byApp: boolean): void {
    const ops = this.operations;
    if (ops.outbound.size > 0) {
      for (const op of [...ops.outbound.values()]) {
        const keeper = op.keeper;
        if (keeper !== undefined) {
          keeper.connectionClosed(op, byApp);
          continue;
        }
        op.state = "closed";
        ops.releaseOutbound(op);
        op.reject(error);
      }
    }
  }

  /** After a close: progress tokens of calls that did not outlive it. */
  forgetClosedProgressTokens(): void {
    const tokens = this.operations.byProgressToken;
    for (const [token, op] of tokens) if (op.keeper === undefined) tokens.delete(token);
  }
}

function onRequestTimeout(outbound: OutboundRequests, op: OutboundOperation): void {
  outbound.expire(op);
}
