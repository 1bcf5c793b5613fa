// How the Streamable HTTP client talks HTTP on Node: node:http with a keep-alive pool (far less CPU per call than fetch).
import type { IncomingMessage } from "node:http";
import { MAX_TIMER_MS, limitOption } from "../../../rpc/limits.js";
import { nodeBuiltin } from "../../../node-builtin.js";
import { fetchRequester, type WireRequester, type WireResponse } from "./fetch-requester.js";

export type { WireRequest, WireRequester, WireResponse } from "./fetch-requester.js";

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

  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.res.headers)) {
      if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    return out;
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
  const http = nodeBuiltin("node:http");
  const https = nodeBuiltin("node:https");
  if (!http || !https)
    throw new Error("the node:http requester needs Node's http and https modules (Node 20.16 or later)");
  const idle = limitOption(
    "idleSocketTimeoutMs",
    options.idleSocketTimeoutMs,
    DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
    MAX_TIMER_MS,
  );
  // The agent's timeout closes a connection idle in the pool; on one in use it only emits an event nobody acts on.
  const agentOptions = idle > 0 ? { keepAlive: true, timeout: idle } : { keepAlive: true };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
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
          const req = (secure ? https.request : http.request)(
            url,
            { method: request.method, headers, agent },
            (res) => {
              settled = true;
              res.once("close", release);
              resolve(new NodeResponse(res));
            },
          );
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
            if (
              !fresh &&
              req.reusedSocket &&
              untouched &&
              !signal?.aborted &&
              STALE_SOCKET_CODES.has(error.code ?? "")
            ) {
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

/**
 * What a client transport given no `fetch` uses: the node:http pool where Node's http modules are at hand,
 * the platform's fetch elsewhere (browsers, workers, Node before 20.16).
 */
export function platformRequester(options: NodeRequesterOptions = {}): WireRequester {
  return nodeBuiltin("node:http") && nodeBuiltin("node:https") ? nodeRequester(options) : fetchRequester();
}
