// What the Streamable HTTP client is configured with: its options, reconnect backoff and the authorizer it consults.
import type { RequestId } from "../../../rpc/jsonrpc.js";

/** A 401 or 403 reply, as the transport hands it to its {@link HttpAuthorizer}. */
export interface HttpAuthChallenge {
  readonly status: number;
  /** The response headers, names lower-case (`www-authenticate` carries the challenge). */
  readonly headers: Readonly<Record<string, string>>;
  /** Where the request went. */
  readonly url: URL;
  readonly method: "GET" | "POST" | "DELETE";
  /** The Authorization header the request carried, if any: lets the authorizer see whether it is stale already. */
  readonly authorization?: string;
  /**
   * The other headers the authorizer's credentials added to the request ({@link HttpAuthCredentials.headers}, as
   * it returned them), e.g. the DPoP proof, so it can see which nonce the refused request carried. Absent when
   * the credentials were a plain string.
   */
  readonly credentialHeaders?: Readonly<Record<string, string>>;
  /** 1 for a request's first challenge, 2 for the one after its first retry, and so on. */
  readonly attempt: number;
}

/** The request credentials are asked for. */
export interface HttpAuthRequest {
  readonly method: "GET" | "POST" | "DELETE";
}

/**
 * Credentials for one request, when a bare Authorization value is not enough: sender-constrained tokens (DPoP,
 * RFC 9449) need a proof bound to each request's method and URL.
 */
export interface HttpAuthCredentials {
  /** The Authorization header value, e.g. `DPoP <token>`; replaces one given in the transport's `headers`. */
  readonly authorization: string;
  /**
   * More headers for this request only (e.g. `DPoP: <proof>`); each replaces a header of the same name, in any
   * case, from the transport's `headers`. Names must be valid HTTP field names and values must not contain CR or LF.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A response the transport received, as an {@link HttpAuthorizer} observes it. */
export interface HttpAuthResponse {
  readonly status: number;
  /** The response headers, names lower-case (e.g. `dpop-nonce`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Where the request went. */
  readonly url: URL;
}

/**
 * Credentials for the Streamable HTTP client, consulted on every request (POST, GET and DELETE). The transport
 * knows nothing of how they are obtained; mcpgen/auth's OAuth clients implement this.
 */
export interface HttpAuthorizer {
  /**
   * The credentials for the next request to `url`: an Authorization header value, {@link HttpAuthCredentials}
   * (the header and more headers for this request only), or undefined to send none. `request` says which request
   * they are for; the transport always passes it (it is optional for callers that ask outside a request).
   */
  authorization(
    url: URL,
    request?: HttpAuthRequest,
  ): string | HttpAuthCredentials | undefined | Promise<string | HttpAuthCredentials | undefined>;
  /**
   * A request was answered 401 or 403. Resolve true to send it again (asking `authorization()` anew), false to fail
   * it with the HttpStatusError; reject to fail it with that reason. Called at most `maxRetries` times per request.
   */
  challenge(challenge: HttpAuthChallenge): boolean | Promise<boolean>;
  /**
   * Optional: called with every response the transport receives (before any challenge() for it), e.g. to keep the
   * `DPoP-Nonce` a server sends for the next proof. A rejection fails the request with that reason.
   */
  observe?(response: HttpAuthResponse): void | Promise<void>;
  /** How many times one request may be sent again after challenges; default 3. */
  readonly maxRetries?: number;
}

/** Default of {@link HttpAuthorizer.maxRetries}. */
export const DEFAULT_AUTHORIZATION_RETRIES = 3;

export interface ReconnectOptions {
  /**
   * Failed reconnect attempts allowed in a row, for every stream (default 5). A connection that carries something
   * resets it. A request's stream fails at once, without using them up, when an attempt finds the server gone
   * (connection refused, host or network unreachable, unknown host); the standalone stream goes on trying.
   */
  maxAttempts?: number;
  /**
   * Backoff between attempts: initial delay (default 1000 ms)... A `retry` the server sent is waited exactly before
   * the first attempt, and is the floor of the backoff after that.
   */
  initialDelayMs?: number;
  /** ...growth factor (default 1.5)... */
  factor?: number;
  /** ...and cap (default 30 000 ms). Each delay is jittered down to between 50% and 100%. */
  maxDelayMs?: number;
}

export interface ResumptionInfo {
  /** The request the stream carries the reply of; undefined for the standalone stream. */
  requestId?: RequestId;
}

export interface StreamableHttpClientOptions {
  url: string | URL;
  /** Extra headers on every request, or a function computing them per request. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /**
   * Use this fetch for every HTTP request. Default: on Node, node:http with a keep-alive pool (much lighter per
   * call); in browsers, workers and other runtimes without it, the platform's fetch.
   */
  fetch?: typeof fetch;
  /** With node:http (no `fetch`): how long a pooled connection may stay idle, ms; default 4000, 0 for no limit. */
  idleSocketTimeoutMs?: number;
  /** Reuse an existing session (e.g. after a restart, with resumeStream). */
  sessionId?: string;
  /** Sent as MCP-Protocol-Version from the start; otherwise set after negotiation. */
  protocolVersion?: string;
  reconnect?: ReconnectOptions;
  /**
   * "auto" (default): open the standalone GET stream once `notifications/initialized` was accepted.
   * "manual": only when openStandaloneStream() is called.
   */
  standaloneStream?: "auto" | "manual";
  /** Send DELETE for the session on close() (default true). */
  terminateOnClose?: boolean;
  /** Every new Last-Event-ID of every stream; hand it back to resumeStream() to continue after a restart. */
  onResumptionToken?: (token: string, info: ResumptionInfo) => void;
  /**
   * Supplies the Authorization header of every request and decides whether a request answered 401/403 is sent
   * again (e.g. an OAuth client from mcpgen/auth). Its header replaces one given in `headers`.
   */
  authorization?: HttpAuthorizer;
}
