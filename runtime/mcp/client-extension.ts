// How a feature plugs into a client session: the capabilities it advertises, its hooks, and its part in reconnection.
import type { JsonObject, JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";
import type { RequestOptions } from "../rpc/peer.js";
import type { OperationRegistry, OutboundOperation } from "../rpc/operations.js";
import type { Session } from "../rpc/session/session.js";
import type { SessionExtension } from "../rpc/session/extension.js";
import type { ClientRecovery, ReconnectOptions } from "./client-recovery.js";

/** The client session as a feature installed on it sees it. */
export interface ClientSessionHost {
  readonly session: Session;
  readonly operations: OperationRegistry;
  readonly isOpen: boolean;
  /** Reconnection after a disconnect; a feature that keeps work across one joins it to resume that work. */
  readonly recovery: ClientRecovery;
  /** Tell the transport that a lost reply stream of this request is recovered here (Transport.skipStreamResume). */
  skipStreamResume(requestId: RequestId): void;
  /** Send a request under the id of a pending one (see Session.resendAs). */
  resendAs(op: OutboundOperation, method: string, params: JsonObject | undefined): Promise<void>;
  transmit(message: JsonRpcMessage, relatedRequestId?: RequestId): Promise<void>;
  request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject>;
}

/** A feature installed on a ClientSession through its `extensions` option (e.g. `resumableClient()`). */
export interface ClientExtension {
  /** Merged into the capabilities the client advertises in initialize. */
  readonly capabilities?: JsonObject;
  /** Reconnection delays and attempts this feature wants; the first extension that gives them sets them. */
  readonly reconnect?: ReconnectOptions;
  /** Called once by the ClientSession constructor; the hooks it returns are registered with Session.use. */
  install(host: ClientSessionHost): SessionExtension;
}
