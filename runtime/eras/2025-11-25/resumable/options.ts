// Options of resumable requests on the server (SEP-975): the policy, the limits and the store.
import type { JsonObject } from "../../../rpc/jsonrpc.js";
import type { OperationStore } from "../../../store/types.js";

/** Seconds, as the notification carries them. */
export interface ResumePolicy {
  minWait: number;
  maxWait: number;
}

export interface ResumableServerOptions {
  /**
   * Default: a MemoryOperationStore of its own. A shared store (runtime/store/redis.ts) lets every node behind a
   * load balancer serve requests/resume and requests/getStatus for requests another node runs.
   */
  store?: OperationStore;
  /** Seconds the client should wait before resuming; default 0. */
  minWait?: number;
  /**
   * Seconds a request whose connection is gone waits for a resume (or a status check, which restarts the clock)
   * before it is cancelled; default 60. Over HTTP the clock starts when the connection carrying the request's reply
   * stream closes, and stops if the client takes the stream up again (GET with Last-Event-ID).
   */
  maxWait?: number;
  /**
   * Which requests become resumable without the handler asking (when the client advertised
   * resumableRequests): true or a partial policy to make it resumable. Default: none.
   */
  policy?: (method: string, params: JsonObject | undefined) => boolean | Partial<ResumePolicy> | undefined;
  /**
   * Decide late: a request the policy selects becomes resumable only once it outlives the macrotask it arrived
   * in, or sends something before its response; one answered at once goes out as a plain response, with no
   * policy, token or store record (see PendingResumable). Default false: the policy goes out as the request
   * starts, so a disconnect at any point after that finds it resumable.
   */
  deferPolicy?: boolean;
  /** Resumable requests one session may have running at a time; past it requests run as plain ones. Default 100. */
  maxPerSession?: number;
  /**
   * Bytes of unconfirmed messages one request may queue; past it the request fails (-32010). Messages leave the
   * queue once confirmed: by a resume, by the client's notifications/requests/received (asked for every quarter of
   * this limit), or by a transport that reports delivery (stdio, in-memory). So the limit bounds what a client
   * that is away (or one that never confirms) can leave behind, not the length of a request. Default 1 MiB.
   */
  maxQueuedBytes?: number;
  /**
   * Milliseconds a final response that was sent on a live connection stays available for a resume (it may
   * have been lost on the way; nothing in the protocol confirms it arrived). Default: 10 000, at most maxWait.
   */
  retainDeliveredMs?: number;
  /**
   * Finished requests kept that way at once, across all sessions; past it the oldest is dropped first (a resume
   * of it then gets the unknown-request error). Without a bound, a fast client over a transport that cannot
   * confirm delivery (stdio, HTTP) made memory grow with its call rate times retainDeliveredMs. Default 10 000.
   */
  maxRetained?: number;
  onerror?: (error: Error) => void;
}
