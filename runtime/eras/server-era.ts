// Which protocol era a server connection speaks: pinned by its first request, then each request admitted,
// identified and answered the way that era says.
import { ErrorCode, RpcError, type JsonObject, type JsonRpcResponse } from "../rpc/jsonrpc.js";
import type { PeerIdentity } from "../rpc/peer.js";
import type { InboundInfo } from "../rpc/transport.js";
import type { HandlerContext } from "../rpc/handler-context.js";
import type { InboundOperation } from "../rpc/operations.js";
import type { SessionExtension } from "../rpc/session/extension.js";
import {
  claimsModernEra,
  readEnvelope,
  unsupportedVersion,
  MODERN_PROTOCOL_VERSIONS,
  PROTOCOL_VERSION_META,
} from "./2026-07-28/envelope.js";
import { DISCOVER, LISTEN, modernResponse, type CacheHints, type ModernWire } from "./2026-07-28/wire.js";
import { InputRound } from "./2026-07-28/input-rounds.js";
import type { RequestStateSealer } from "./2026-07-28/request-state.js";

/** What the era logic needs of the server session it serves. */
export interface ServerEraHost {
  /** The handshake's method, and the one method the 2025 era allows before it. */
  readonly handshake: string;
  readonly keepAlive: string;
  /** Whether the handshake completed (2025-11-25). */
  readonly initialized: boolean;
  /** The identity the handshake gave (2025-11-25), or undefined before it. */
  readonly legacyIdentity: PeerIdentity | undefined;
  /** Whether the connection carries one request without a handshake (see Transport.perRequest). */
  readonly perRequest: boolean;
  readonly serverInfo: JsonObject;
  /** Cache hints of cacheable results on 2026-07-28, by method. */
  readonly cache: CacheHints | undefined;
  /** The revisions of the handshake era this server speaks, latest first. */
  readonly legacyVersions: readonly string[];
  /** The 2026-07-28 wire from the generated tables; undefined: the SDK has no such revision, so neither has the server. */
  readonly modern: ModernWire | undefined;
  /** Seals the requestState of input-required rounds (shared by every connection of a server). */
  readonly requestState: RequestStateSealer;
}

/**
 * legacy: 2025-11-25 and earlier, a handshake first. modern: 2026-07-28, an envelope on every request. undefined:
 * nothing but server/discover (which pins nothing) and ping arrived yet.
 */
export type Era = "legacy" | "modern";

/**
 * The extension a server session installs. The first request other than server/discover pins the connection:
 * `initialize` to the legacy era, a request whose `_meta` claims a protocol version to the modern one. Before that a
 * legacy connection refuses everything but ping (a 2026 client that skipped the probe must not get 2025 behaviour
 * silently); a per-request connection (HTTP stateless mode) needs no handshake.
 */
export class ServerEra implements SessionExtension {
  era: Era | undefined = undefined;
  /** The identity admit read from the request it just let in, for requestStarted to hand over. */
  private admitted: PeerIdentity | undefined = undefined;

  constructor(private readonly host: ServerEraHost) {}

  admit(method: string, params: JsonObject | undefined, info: InboundInfo | undefined): RpcError | undefined {
    const host = this.host;
    this.admitted = undefined;
    // A lane that serves one revision per request said which (HTTP's MCP-Protocol-Version): a modern one pins the
    // connection even when the envelope is missing, so the request is told what it lacks.
    if (
      this.era === undefined &&
      info?.protocolVersion !== undefined &&
      !host.legacyVersions.includes(info.protocolVersion)
    )
      this.era = "modern";
    if (this.era === undefined && method !== DISCOVER) {
      if (method === host.handshake) this.era = "legacy";
      else if (claimsModernEra(params)) this.era = "modern";
      else if (host.perRequest) this.era = "legacy";
    }
    const modern = host.modern;
    if (this.era === "modern" && modern === undefined) {
      // A server generated without the revision: the client is told which revisions it can have instead.
      const version = (params?._meta as JsonObject | undefined)?.[PROTOCOL_VERSION_META] ?? info?.protocolVersion;
      return unsupportedVersion(version ?? null, host.legacyVersions);
    }
    // subscriptions/listen is refused below, as on any connection not pinned to the modern era.
    if (modern === undefined && method === DISCOVER)
      return new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    if (this.era === "modern" || (this.era === undefined && method === DISCOVER && claimsModernEra(params))) {
      const identity = readEnvelope(params);
      if (identity instanceof RpcError) return identity;
      if (!modern!.requests.has(method))
        return new RpcError(
          ErrorCode.MethodNotFound,
          `Method not found: ${method} (not part of ${identity.protocolVersion})`,
        );
      // 2026-07-28 has no task member (tasks are an extension there): a 2025-style task request is a plain call.
      if (params !== undefined && Object.hasOwn(params, "task")) delete params.task;
      this.admitted = identity;
      return undefined;
    }
    if (method === DISCOVER || method === host.keepAlive || method === host.handshake) return undefined;
    // subscriptions/listen: only a 2026-07-28 connection serves it (server/discover is answered on every connection).
    if (method === LISTEN) return new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    if (!host.initialized && !host.perRequest) {
      return new RpcError(
        ErrorCode.InvalidRequest,
        `Invalid Request: ${method} before initialize (send initialize first, or server/discover to find the server's revisions)`,
      );
    }
    return undefined;
  }

  requestStarted(operation: InboundOperation, params: JsonObject | undefined): void {
    const context = operation as HandlerContext;
    // Read by admit just before (the session calls the two in a row for one request), for modern requests only.
    const identity = this.admitted;
    this.admitted = undefined;
    if (identity !== undefined) {
      context.peerIdentity = identity;
      const modern = this.host.modern!;
      if (modern.inputRequired.has(operation.method))
        context.inputs = new InputRound(
          context,
          operation.method,
          params,
          identity,
          this.host.requestState,
          modern.inputRequests,
        );
      return;
    }
    const legacy = this.host.legacyIdentity;
    if (legacy !== undefined) context.peerIdentity = legacy;
  }

  respond(operation: InboundOperation, message: JsonRpcResponse): JsonRpcResponse {
    if (this.era !== "modern" && operation.method !== DISCOVER) return message;
    const wire = this.host.modern;
    if (wire === undefined) return message;
    return modernResponse(operation.method, message, {
      serverInfo: this.host.serverInfo,
      wire,
      cache: this.host.cache,
    });
  }

  /** A modern connection carries no requests to the client: their input comes in rounds of the request (MRTR). */
  checkOutbound(method: string): Error | undefined {
    if (this.era !== "modern" || method.startsWith("notifications/")) return undefined;
    return new RpcError(
      ErrorCode.MethodNotFound,
      `${method} cannot be sent on ${MODERN_PROTOCOL_VERSIONS[0]}: ask from within a tools/call, prompts/get or resources/read handler`,
    );
  }
}
