// Client side of async tool calls: a handle with progress, result({timeout}), join() and cancel(); preferAsync routing.
import { randomBytes } from "node:crypto";
import type { JsonObject, RequestId } from "../../../rpc/jsonrpc.js";
import type { ProgressInfo, RequestOptions } from "../../../rpc/peer.js";
import { OutboundOperation, type OperationKeeper } from "../../../rpc/operations.js";
import { hasCapability } from "../../../mcp/capabilities.js";
import type { ClientSession } from "../../../mcp/client-session.js";
import { CANCELLED_NOTIFICATION } from "../../../rpc/session/session.js";
import { ASYNC_CALL, ASYNC_CANCEL, ASYNC_GET, ASYNC_JOIN } from "./server.js";

export interface AsyncCallOptions {
  /** Seconds the server should keep the result once nobody is attached; it may grant less. */
  keepAlive?: number;
  onProgress?: (progress: ProgressInfo) => void;
  /** Options of the call/join request itself. */
  request?: RequestOptions;
}

/** The server refused the async call (`accepted: false`); `reason` is what tools/async/get said, when it could. */
export class AsyncCallRejectedError extends Error {
  readonly token: string | number | undefined;
  readonly reason: string | undefined;
  constructor(token: string | number | undefined, reason: string | undefined) {
    super(`The server did not accept the async tool call${reason === undefined ? "" : `: ${reason}`}`);
    this.name = "AsyncCallRejectedError";
    this.token = token;
    this.reason = reason;
  }
}

// A listener registered in the session's progress table survives reconnects like a resumable request does.
const KEEP: OperationKeeper = { connectionClosed() {} };

/** One async tool call as this session sees it. */
export class AsyncToolCall {
  /** Set when the server sent notifications/cancelled for it (another client cancelled, or it expired). */
  cancelled = false;
  oncancelled?: (reason: string | undefined) => void;
  private readonly progressListeners = new Set<(progress: ProgressInfo) => void>();
  private listener: OutboundOperation | undefined = undefined;
  private readonly requestIds = new Set<RequestId>();
  private stopObserving: (() => void) | undefined = undefined;

  /** @internal */
  constructor(
    readonly session: ClientSession,
    readonly token: string | number,
    public keepAlive: number | undefined,
  ) {}

  /** Receive progress (from the call or from any join of this session). Returns a function that stops it. */
  onProgress(listener: (progress: ProgressInfo) => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  /**
   * tools/async/get. With `timeout` (seconds) the server waits at most that long and the result may have
   * `isPending: true`; without, it waits for the result.
   */
  async result(options: { timeout?: number; request?: RequestOptions } = {}): Promise<JsonObject> {
    const params: JsonObject = { token: this.token };
    if (options.timeout !== undefined) params.timeout = options.timeout;
    const result = await this.session.request(ASYNC_GET, params, { timeout: 0x7fffffff, ...options.request });
    if (result.isPending !== true) this.release();
    return result;
  }

  /** tools/async/join from this session: again after a reconnection, or to extend keepAlive. */
  async join(options: { keepAlive?: number; request?: RequestOptions } = {}): Promise<this> {
    const token = this.progressToken();
    const params: JsonObject = { token: this.token, _meta: { progressToken: token } };
    if (options.keepAlive !== undefined) params.keepAlive = options.keepAlive;
    const answer = await this.session.request(ASYNC_JOIN, params, options.request);
    if (typeof answer.keepAlive === "number") this.keepAlive = answer.keepAlive;
    return this;
  }

  /** tools/async/cancel: the run stops and every joined session is told. */
  async cancel(): Promise<void> {
    await this.session.notify(ASYNC_CANCEL, { token: this.token });
  }

  /** @internal The token this session's progress for the call arrives under; registered once. */
  progressToken(): string {
    if (this.listener === undefined) {
      const token = `mcpgen-async-${randomBytes(9).toString("base64url")}`;
      const op = new OutboundOperation(token, ASYNC_GET);
      op.progressToken = token;
      op.keeper = KEEP;
      op.onProgress = (progress) => {
        for (const listener of [...this.progressListeners]) listener(progress);
      };
      this.session.operations.byProgressToken.set(token, op);
      this.listener = op;
      this.stopObserving = this.session.observe(CANCELLED_NOTIFICATION, (params) => {
        if (params === undefined || !this.requestIds.has(params.requestId as RequestId)) return;
        this.cancelled = true;
        this.oncancelled?.(typeof params.reason === "string" ? params.reason : undefined);
      });
    }
    return this.listener.progressToken as string;
  }

  /** @internal The call/join requests of this handle, to recognise notifications/cancelled for it. */
  track(requestId: RequestId): void {
    this.requestIds.add(requestId);
  }

  /** Stop listening (done with the result). */
  release(): void {
    const op = this.listener;
    if (op !== undefined) {
      this.session.operations.byProgressToken.delete(op.progressToken!);
      this.listener = undefined;
    }
    this.stopObserving?.();
    this.stopObserving = undefined;
  }
}

/** tools/async/call: resolves with a handle once the server accepted; AsyncCallRejectedError when it did not. */
export async function callToolAsync(
  session: ClientSession,
  name: string,
  args: JsonObject | undefined,
  options: AsyncCallOptions = {},
): Promise<AsyncToolCall> {
  const pending = new AsyncToolCall(session, "", options.keepAlive);
  if (options.onProgress !== undefined) pending.onProgress(options.onProgress);
  const progressToken = pending.progressToken();
  const params: JsonObject = { name, _meta: { progressToken } };
  if (args !== undefined) params.arguments = args;
  if (options.keepAlive !== undefined) params.keepAlive = options.keepAlive;
  pending.track(session.nextRequestId);
  const answer = await session.request(ASYNC_CALL, params, options.request);
  const token = answer.token;
  if (answer.accepted !== true || (typeof token !== "string" && typeof token !== "number")) {
    pending.release();
    let reason: string | undefined;
    if (typeof token === "string" || typeof token === "number") {
      const why = await session.request(ASYNC_GET, { token }).catch(() => undefined);
      const first = Array.isArray(why?.content) ? (why!.content[0] as { text?: unknown } | undefined) : undefined;
      if (typeof first?.text === "string") reason = first.text;
    }
    throw new AsyncCallRejectedError(
      typeof token === "string" || typeof token === "number" ? token : undefined,
      reason,
    );
  }
  (pending as { token: string | number }).token = token;
  if (typeof answer.keepAlive === "number") pending.keepAlive = answer.keepAlive;
  return pending;
}

/** tools/async/join from a session that did not start the call (another client, or after a restart). */
export async function joinToolAsync(
  session: ClientSession,
  token: string | number,
  options: AsyncCallOptions = {},
): Promise<AsyncToolCall> {
  const handle = new AsyncToolCall(session, token, undefined);
  if (options.onProgress !== undefined) handle.onProgress(options.onProgress);
  handle.track(session.nextRequestId);
  await handle.join({ keepAlive: options.keepAlive, request: options.request });
  return handle;
}

/** Whether the server offers async tool calls. */
export function serverSupportsAsync(session: ClientSession): boolean {
  return hasCapability(session.serverCapabilities, "async");
}

/**
 * Calls a tool, asynchronously when the tool prefers it (`annotations.preferAsync`) and the server has the
 * `async` capability, with tools/call otherwise. Resolves with the CallToolResult either way.
 */
export async function callToolPreferAsync(
  session: ClientSession,
  tool: { name: string; annotations?: { preferAsync?: boolean } | undefined },
  args: JsonObject | undefined,
  options: AsyncCallOptions = {},
): Promise<JsonObject> {
  if (tool.annotations?.preferAsync === true && serverSupportsAsync(session)) {
    const handle = await callToolAsync(session, tool.name, args, options);
    return handle.result({ request: options.request });
  }
  const params: JsonObject = args === undefined ? { name: tool.name } : { name: tool.name, arguments: args };
  return session.request("tools/call", params, { ...options.request, onProgress: options.onProgress });
}
