// Typed errors the runtime raises locally (timeouts, cancellation, closed connections, refused sends, failed transports).
import { ErrorCode, RpcError } from "./jsonrpc.js";
import type { ValidationIssue } from "./dispatch.js";
import type { JsonObject, JsonRpcErrorObject, RequestId } from "./jsonrpc.js";

/**
 * Codes for errors that arise on this side of the wire. They sit in the JSON-RPC
 * implementation-defined range so they never collide with the peer's standard codes.
 */
export const LocalErrorCode = {
  ConnectionClosed: ErrorCode.ConnectionLost,
  RequestTimeout: -32001,
  InvalidResult: -32003,
  CapabilityNotSupported: -32004,
  UnsupportedProtocolVersion: -32005,
  // Same value LSP uses for a cancelled request, so logs read familiarly.
  RequestCancelled: -32800,
} as const;

/** The connection closed (or was never open) while the request was pending. */
export class ConnectionClosedError extends RpcError {
  constructor(message = "Connection closed", data?: unknown) {
    super(LocalErrorCode.ConnectionClosed, message, data);
    this.name = "ConnectionClosedError";
  }
}

/**
 * The server process of a stdio connection exited before the client closed the connection. Carries how it ended
 * and what it last wrote to stderr, which is usually the reason (a crash, a missing setting).
 */
export class ProcessExitedError extends ConnectionClosedError {
  constructor(
    /** The exit code, or null when a signal ended the process. */
    readonly exitCode: number | null,
    /** The signal that ended the process (e.g. "SIGKILL"), or null. */
    readonly signal: string | null,
    /** The last lines the process wrote to stderr, oldest first (bounded; empty when none were kept). */
    readonly stderrTail: readonly string[],
  ) {
    super(describeExit(exitCode, signal, stderrTail), { exitCode, signal, stderrTail });
    this.name = "ProcessExitedError";
  }
}

function describeExit(exitCode: number | null, signal: string | null, stderrTail: readonly string[]): string {
  const how = signal !== null ? `was killed by ${signal}` : `exited with code ${exitCode ?? "unknown"}`;
  const tail =
    stderrTail.length === 0 ? "" : `; last stderr lines:\n${stderrTail.map((line) => `  ${line}`).join("\n")}`;
  return `Server process ${how} before the connection was closed${tail}`;
}

/** No response arrived in time; a notifications/cancelled was sent for the request. */
export class RequestTimeoutError extends RpcError {
  readonly timeout: number;
  constructor(method: string, timeout: number, total = false) {
    super(
      LocalErrorCode.RequestTimeout,
      `Request ${method} timed out after ${timeout} ms${total ? " (maxTotalTimeout)" : ""}`,
      { timeout },
    );
    this.name = "RequestTimeoutError";
    this.timeout = timeout;
  }
}

/** The caller aborted the request; a notifications/cancelled was sent unless the method was initialize. */
export class RequestCancelledError extends RpcError {
  readonly reason: unknown;
  constructor(method: string, reason?: unknown) {
    super(LocalErrorCode.RequestCancelled, `Request ${method} was cancelled${describeReason(reason)}`);
    this.name = "RequestCancelledError";
    this.reason = reason;
  }
}

/** The peer answered with a result that fails the method's result guard. */
export class InvalidResultError extends RpcError {
  readonly issues: ValidationIssue[];
  readonly result: unknown;
  constructor(method: string, requestId: RequestId, result: unknown, issues: ValidationIssue[]) {
    super(LocalErrorCode.InvalidResult, `Invalid result for ${method} (request ${String(requestId)})`, {
      errors: issues,
    });
    this.name = "InvalidResultError";
    this.issues = issues;
    this.result = result;
  }
}

/**
 * The peer did not advertise the capability the method needs; nothing was sent. A handler may catch it and do
 * without; where the protocol says such a request fails as a whole (MCP 2026-07-28: -32021 with
 * `data.requiredCapabilities`), `refusal` gives that answer, used when the handler lets the error pass.
 */
export class CapabilityError extends RpcError {
  readonly method: string;
  readonly capability: string;
  /** The JSON-RPC error the whole request is answered with when this error leaves its handler. */
  readonly refusal?: { readonly code: number; readonly data: unknown };
  constructor(
    method: string,
    capability: string,
    side: "server" | "client",
    refusal?: { readonly code: number; readonly data: unknown },
  ) {
    super(
      refusal?.code ?? LocalErrorCode.CapabilityNotSupported,
      `The ${side} does not support ${capability} (required for ${method})`,
      refusal?.data ?? { method, capability },
    );
    if (refusal !== undefined) this.refusal = refusal;
    this.name = "CapabilityError";
    this.method = method;
    this.capability = capability;
  }
}

/** The server chose a protocol version this client does not speak. */
export class ProtocolVersionError extends RpcError {
  readonly version: unknown;
  readonly supported: readonly string[];
  constructor(version: unknown, supported: readonly string[]) {
    super(
      LocalErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version ${JSON.stringify(version)}; supported: ${supported.join(", ")}`,
      { version, supported },
    );
    this.name = "ProtocolVersionError";
    this.version = version;
    this.supported = supported;
  }
}

/** A progress value that does not increase (the spec requires strictly increasing progress). */
export class ProgressOrderError extends RangeError {
  constructor(progress: number, previous: number) {
    super(`Progress must increase: ${progress} is not greater than ${previous}`);
    this.name = "ProgressOrderError";
  }
}

function describeReason(reason: unknown): string {
  if (reason === undefined) return "";
  if (typeof reason === "string") return `: ${reason}`;
  if (reason instanceof Error) return `: ${reason.message}`;
  return "";
}

/**
 * Where a transport keeps, on an error response it makes up for a request it can no longer complete, the local error
 * behind it (e.g. the refused connection). A symbol: JSON cannot carry it, so nothing from the wire sets it, and it
 * is never serialized.
 */
const LOCAL_CAUSE: unique symbol = Symbol("mcpgen.localCause");

/** @internal `error` carrying `cause` for {@link rpcErrorOf}, out of sight of the wire. */
export function withLocalCause<E extends JsonRpcErrorObject>(error: E, cause: unknown): E {
  return Object.defineProperty(error, LOCAL_CAUSE, { value: cause, enumerable: false });
}

/** @internal The error a request is rejected with for an error response: its code, message and data, and the local cause. */
export function rpcErrorOf(error: JsonRpcErrorObject): RpcError {
  const failure = new RpcError(error.code, error.message, error.data);
  const cause = (error as { [LOCAL_CAUSE]?: unknown })[LOCAL_CAUSE];
  // Defined as the Error constructor's `cause` option would: own, non-enumerable.
  if (cause !== undefined)
    Object.defineProperty(failure, "cause", { value: cause, writable: true, configurable: true });
  return failure;
}

/**
 * Thrown through a handler by the protocol layer that answers the request itself (an input-required round ends the
 * handler's run): the session sends `result` as the response. Handlers let it pass, as they let cancellation pass.
 */
export class ReplacedAnswer extends Error {
  constructor(readonly result: JsonObject) {
    super("The request was answered by the protocol layer (input required)");
    this.name = "ReplacedAnswer";
  }
}

/**
 * A refusal of the whole request raised inside its handler (a capability the client lacks, a forged requestState):
 * answered as this JSON-RPC error even by handlers whose other errors become results (tools).
 */
export class RequestRefusedError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "RequestRefusedError";
  }
}

/**
 * Thrown by `ctx.inputRequired(...)` where the client takes requests of the server's (MCP 2025-11-25): McpServer sends
 * each input request for real and runs the handler again with the answers, as a 2026 client's retry would.
 */
export class InputRequiredSignal extends Error {
  constructor(
    readonly inputRequests: { readonly [key: string]: { method: string; params?: JsonObject } },
    readonly requestState: string | undefined,
  ) {
    super("The handler needs input from the client");
    this.name = "InputRequiredSignal";
  }
}
