// The one way to extend a session (Session.use) and the typed per-session state extensions keep (Session.state).
import type { JsonObject, JsonRpcResponse, RpcError } from "../jsonrpc.js";
import type { InboundInfo } from "../transport.js";
import type { InboundOperation } from "../operations.js";
import type { Session } from "./session.js";

/**
 * The one way to extend a session: a feature above JSON-RPC (the lifecycle, resumable requests, async tool calls)
 * registers an extension with `Session.use`, and the session calls each hook it has, in the order they were
 * registered. Hooks run inside the session's own processing, so they must be quick and must not throw (what one
 * throws goes to onerror and the message goes on as if the hook were absent).
 */
export interface SessionExtension {
  /** Every well-formed inbound message, before anything handles it; false drops it (deduplication). */
  accept?(message: JsonObject): boolean;
  /**
   * Whether a request may arrive under the id of one still in flight (`existing`): a protocol whose requests take
   * over another request's id says so here, and its handler then takes the id over.
   */
  mayReuseId?(method: string, existing: InboundOperation): boolean;
  /**
   * Each inbound request once its params were checked, before anything else: an error refuses it (answered with that
   * error, its handler never runs). The protocol above decides what a request may not do on this connection yet
   * (before a handshake), or what it lacks (fields a revision requires on every request).
   */
  admit?(method: string, params: JsonObject | undefined, info: InboundInfo | undefined): RpcError | undefined;
  /**
   * Each response to an inbound request, just before it goes out: what is returned replaces it (a revision that adds
   * members to every result, or renumbers an error). Called for responses that are sent, in registration order.
   */
  respond?(operation: InboundOperation, message: JsonRpcResponse): JsonRpcResponse;
  /** Each inbound request once its params were checked, before its handler runs (it may redirect the output). */
  requestStarted?(operation: InboundOperation, params: JsonObject | undefined): void;
  /** Every accepted notification other than progress, before its registered handler. */
  notification?(method: string, params: JsonObject | undefined): void;
  /** A refusal to send `method` (e.g. the peer lacks the capability), or undefined to allow it. */
  checkOutbound?(method: string): Error | undefined;
  /** The transport reports that the peer forgot the session (see Transport.onsessionexpired). */
  sessionExpired?(error: Error): void;
  /**
   * The connection closed; operations that do not outlive it have settled. `byApp`: our side closed it. Return
   * true (only when not byApp) to take over recovery (reconnection): onclose is then not fired.
   */
  closed?(byApp: boolean): boolean | void;
}

/**
 * A typed slot of per-session state kept by an extension (see Session.state): one key per feature instance, so two
 * managers installed on one session keep apart.
 */
export class SessionStateKey<T> {
  constructor(
    readonly name: string,
    readonly create: (session: Session) => T,
  ) {}
}
