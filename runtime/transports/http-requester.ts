// How the Streamable HTTP client talks HTTP: node:http with keep-alive by default (far less CPU per call than fetch), or a given fetch.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** The parts of an HTTP response the client transport uses. */
export interface WireResponse {
  readonly status: number;
  readonly ok: boolean;
  /** A header value (repeated headers joined with ", "), or null. */
  header(name: string): string | null;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /**
   * Feeds the body to `onText` as UTF-8 text as it arrives. Settles when the body ends, the connection drops
   * or `signal` aborts; never rejects (a broken stream is simply over, the caller decides what comes next).
   */
  stream(onText: (text: string) => void, signal: AbortSignal): Promise<void>;
  /** Lets go of the body without reading it. */
  discard(): Promise<void>;
}

export interface WireRequest {
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface WireRequester {
  send(url: URL, request: WireRequest): Promise<WireResponse>;
  /** Frees pooled connections. */
  close(): void;
}

// ---- fetch ----

class FetchResponse implements WireResponse {
  constructor(private readonly response: Response) {}
  get status(): number {
    return this.response.status;
  }
  get ok(): boolean {
    return this.response.ok;
  }
  header(name: string): string | null {
    return this.response.headers.get(name);
  }
  text(): Promise<string> {
    return this.response.text();
  }
  async stream(onText: (text: string) => void, signal: AbortSignal): Promise<void> {
    const body = this.response.body;
    if (!body) return;
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const abort = () => void reader.cancel().catch(() => undefined);
    signal.addEventListener("abort", abort, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onText(value);
      }
    } catch {
      // A dropped connection ends the stream like any other end.
    } finally {
      signal.removeEventListener("abort", abort);
    }
  }
  async discard(): Promise<void> {
    await this.response.body?.cancel().catch(() => undefined);
  }
}

export function fetchRequester(fetchImpl: typeof fetch): WireRequester {
  return {
    async send(url, request) {
      const response = await fetchImpl(url, { method: request.method, headers: request.headers, body: request.body, signal: request.signal });
      return new FetchResponse(response);
    },
    close() {},
  };
}

// ---- node:http ----

class NodeResponse implements WireResponse {
  readonly status: number;
  private ended = false;

  constructor(private readonly res: IncomingMessage) {
    this.status = res.statusCode ?? 0;
    res.once("end", () => (this.ended = true));
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  header(name: string): string | null {
    const value = this.res.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }

  text(): Promise<string> {
    const res = this.res;
    return new Promise((resolve, reject) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.once("end", () => resolve(text));
      res.once("error", reject);
      res.once("close", () => {
        if (!this.ended) reject(new Error("connection closed before the response body ended"));
      });
    });
  }

  stream(onText: (text: string) => void, signal: AbortSignal): Promise<void> {
    const res = this.res;
    return new Promise((resolve) => {
      if (signal.aborted) {
        res.destroy();
        return resolve();
      }
      const abort = () => res.destroy();
      signal.addEventListener("abort", abort, { once: true });
      const done = () => {
        signal.removeEventListener("abort", abort);
        resolve();
      };
      res.setEncoding("utf8");
      res.on("data", onText);
      res.once("end", done);
      res.once("close", done);
      res.on("error", () => undefined); // "close" follows and settles
    });
  }

  async discard(): Promise<void> {
    if (this.ended) return;
    // A finite body is drained so its connection goes back to the pool; a stream would never end.
    if ((this.header("content-type") ?? "").includes("text/event-stream")) this.res.destroy();
    else this.res.resume();
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(reason === undefined ? "This operation was aborted" : String(reason));
  error.name = "AbortError";
  return error;
}

export interface NodeRequesterOptions {
  /**
   * How long a pooled connection may sit idle before it is closed, ms; default 4000. A server closes idle
   * connections after its own timeout (Node's: 5 s), and a request written into one it is closing fails; closing
   * ours first avoids most of those, and a shorter `Keep-Alive: timeout` from the server wins. 0 keeps idle
   * connections until the server closes them.
   */
  idleSocketTimeoutMs?: number;
}

export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4000;

/** Errors of a reused connection the server had already closed: nothing of the request can have been served. */
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * node:http(s) with a keep-alive pool owned by this requester. A request that fails on a reused connection before
 * any byte of a response arrived is sent once more on a new connection: the server closed that connection while
 * idle (the race every keep-alive client has with a server's idle timeout), so it never saw the request.
 */
export function nodeRequester(options: NodeRequesterOptions = {}): WireRequester {
  const idle = options.idleSocketTimeoutMs ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS;
  if (!(idle >= 0)) throw new RangeError(`idleSocketTimeoutMs must be 0 or more, got ${idle}`);
  // The agent's timeout closes a connection idle in the pool; on one in use it only emits an event nobody acts on.
  const agentOptions = idle > 0 ? { keepAlive: true, timeout: idle } : { keepAlive: true };
  const httpAgent = new HttpAgent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  return {
    send(url, request) {
      const secure = url.protocol === "https:";
      const headers: Record<string, string> = { ...request.headers };
      if (request.body !== undefined) headers["content-length"] = String(Buffer.byteLength(request.body));
      const signal = request.signal;
      const attempt = (fresh: boolean): Promise<WireResponse> =>
        new Promise((resolve, reject) => {
          if (signal?.aborted) return reject(abortError(signal));
          // Not node:http's own `signal` option: its listener outlives a keep-alive exchange, and one long-lived
          // signal serves every request of a session.
          const onAbort = () => req.destroy(abortError(signal!));
          const release = () => signal?.removeEventListener("abort", onAbort);
          // agent false: a connection of its own, which cannot be a stale one from the pool.
          const agent = fresh ? false : secure ? httpsAgent : httpAgent;
          let settled = false;
          const req = (secure ? httpsRequest : httpRequest)(url, { method: request.method, headers, agent }, (res) => {
            settled = true;
            res.once("close", release);
            resolve(new NodeResponse(res));
          });
          let readBefore = 0;
          req.once("socket", (socket) => (readBefore = socket.bytesRead));
          signal?.addEventListener("abort", onAbort, { once: true });
          // `on`, not `once`: a connection can fail more than once (reset, then closed), and an error event nobody
          // listens to would end the process.
          req.on("error", (error: NodeJS.ErrnoException) => {
            release();
            if (settled) return;
            settled = true;
            const socket = req.socket;
            const untouched = socket === null || socket.bytesRead === readBefore;
            if (!fresh && req.reusedSocket && untouched && !signal?.aborted && STALE_SOCKET_CODES.has(error.code ?? "")) {
              resolve(attempt(true));
              return;
            }
            reject(error);
          });
          req.setNoDelay(true);
          req.end(request.body);
        });
      return attempt(false);
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
