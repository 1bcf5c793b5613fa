// What the Streamable HTTP client reports when it cannot complete something: its error classes and the code of the responses it synthesizes.
import { ErrorCode, type RequestId } from "../jsonrpc.js";

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

/** An SSE stream ended and could not be resumed (no event id, attempts exhausted, or the server refused). */
export class StreamLostError extends Error {
  readonly requestId?: RequestId;
  constructor(message: string, requestId?: RequestId) {
    super(message);
    this.name = "StreamLostError";
    this.requestId = requestId;
  }
}
