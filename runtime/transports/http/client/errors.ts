// What the Streamable HTTP client reports when it cannot complete something: its error classes, the code of the responses it synthesizes, and which network failures mean the server is gone.
import { ErrorCode, type RequestId } from "../../../rpc/jsonrpc.js";

/**
 * Code of the JSON-RPC error responses this transport synthesizes for requests it can no longer complete
 * (stream lost, session expired); `data.reason` says which. Implementation-defined server-error range.
 */
export const CONNECTION_LOST_CODE = ErrorCode.ConnectionLost;

/** The server answered 404 to the session id: the session is gone and a new initialize is needed. */
export class SessionExpiredError extends Error {
  readonly sessionId: string;
  constructor(sessionId: string) {
    super(`MCP session ${sessionId} expired (HTTP 404); a new session must be initialized`);
    this.name = "SessionExpiredError";
    this.sessionId = sessionId;
  }
}

/** An HTTP reply the transport cannot use (4xx/5xx or an unexpected content type). */
export class HttpStatusError extends Error {
  readonly status: number;
  readonly body: string;
  /** The response headers, names lower-case (e.g. `www-authenticate` of a 401 or 403). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, body: string, message?: string, headers: Readonly<Record<string, string>> = {}) {
    super(message ?? `HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ""}`);
    this.name = "HttpStatusError";
    this.status = status;
    this.body = body;
    this.headers = Object.freeze({ ...headers });
  }
}

/**
 * An SSE stream ended and could not be resumed (no event id, the server is gone, attempts exhausted, or the server
 * refused); `cause` is the error of the last reconnect attempt, when one was made.
 */
export class StreamLostError extends Error {
  readonly requestId?: RequestId;
  constructor(message: string, requestId?: RequestId, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "StreamLostError";
    this.requestId = requestId;
  }
}

/**
 * Connect errors that say nothing listens at the server's address any more, or it cannot be reached at all: resuming
 * a stream against it cannot succeed within the reconnect schedule. ENOTFOUND is a definite "no such host" answer;
 * EAI_AGAIN (the resolver did not answer) is a blip and stays retried, as do timeouts and resets.
 */
const SERVER_GONE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "ENOTFOUND",
]);

/** How deep a cause chain is followed: fetch wraps the socket error once or twice, never more in practice. */
const MAX_CAUSE_DEPTH = 5;

/**
 * @internal What a failed request says about the server being gone: the description of the network error in its
 * chain (node:http throws it directly; fetch on Node wraps it as `TypeError: fetch failed` with it as `cause`, one
 * address per `errors` entry when several were tried) whose code is one of SERVER_GONE_CODES, or undefined. A
 * browser's fetch gives no code ("Failed to fetch"): such failures are never taken for a gone server.
 */
export function serverGone(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && SERVER_GONE_CODES.has(code)) return describeNetworkError(current, code);
    current = current.cause;
  }
  return undefined;
}

/** The message of a network error; an AggregateError of several addresses may have none, its parts do. */
function describeNetworkError(error: Error, code: string): string {
  if (error.message !== "") return error.message;
  const parts = error instanceof AggregateError ? error.errors : [];
  const messages = parts.map((part: unknown) => (part instanceof Error ? part.message : "")).filter((m) => m !== "");
  return messages.length > 0 ? messages.join("; ") : code;
}

/** @internal A failure's message for the error built on it, whatever was thrown. */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && error.cause.message !== "" ? `: ${error.cause.message}` : "";
  return error.message !== "" ? `${error.message}${cause}` : error.name;
}
