// The MCP lifecycle on top of Session: what both sides share (capability checks, ping) and the server side (initialize, server/discover).
import { ErrorCode, RpcError, type JsonObject } from "../rpc/jsonrpc.js";
import { isPlainObject as isObject } from "../rpc/jsonrpc.js";
import type { Transport } from "../rpc/transport.js";
import type { DispatchTable } from "../rpc/dispatch.js";
import type { PeerIdentity, RequestHandler, RequestOptions } from "../rpc/peer.js";
import { Telemetry, traceReader, type TelemetryOption } from "./telemetry.js";
import { ServerEra } from "../eras/server-era.js";
import { MODERN_PROTOCOL_VERSIONS } from "../eras/2026-07-28/envelope.js";
import { ModernWire, type RevisionTableMap } from "../eras/2026-07-28/wire.js";
import { DISCOVER, type CacheHints } from "../eras/2026-07-28/wire.js";
import { RequestStateSealer, type RequestStateOptions } from "../eras/2026-07-28/request-state.js";
import { CapabilityError, ConnectionClosedError, ProtocolVersionError } from "../rpc/errors.js";
import { Session, type SessionOptions } from "../rpc/session/session.js";
import type { JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";
import type { OutboundOperation } from "../rpc/operations.js";
import { ClientRecovery, type ReconnectOptions, type RecoveryHost } from "./client-recovery.js";
import type { ClientExtension, ClientSessionHost } from "./client-extension.js";

import { SUPPORTED_PROTOCOL_VERSIONS } from "./protocol-versions.js";
import { hasCapability } from "./capabilities.js";

export { hasCapability };

export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "./protocol-versions.js";

/** @internal */
export const INITIALIZE = "initialize";
/** @internal */
export const INITIALIZED_NOTIFICATION = "notifications/initialized";
/** @internal */
export const PING = "ping";

/** Name and version of a client or server (the schema's Implementation; extra fields pass through). */
export interface ImplementationInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}

/**
 * The capability the receiver must advertise before it may be sent `method`, from the sender's method table (the
 * generator derives it from the schema's capability objects): a dotted path, or undefined when none is needed.
 */
export function requiredCapability(outbound: DispatchTable | undefined, method: string): string | undefined {
  return outbound !== undefined && Object.hasOwn(outbound, method) ? outbound[method]!.capability : undefined;
}

/** The server capability a client-to-server method needs, per the client's outbound table. */
export function requiredServerCapability(method: string, clientToServer: DispatchTable): string | undefined {
  return requiredCapability(clientToServer, method);
}

/** The client capability a server-to-client method needs, per the server's outbound table. */
export function requiredClientCapability(method: string, serverToClient: DispatchTable): string | undefined {
  return requiredCapability(serverToClient, method);
}

/** @internal The version a server answers with: the client's when supported, else the server's latest. */
export function negotiateProtocolVersion(
  requested: unknown,
  supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): string {
  return typeof requested === "string" && supported.includes(requested) ? requested : supported[0];
}

/** @internal */
export function pong(): JsonObject {
  return {};
}

/** Refuses a method whose capability the peer did not advertise (nothing is advertised before initialize). */
/** @internal */
export function capabilityGate(
  required: (method: string) => string | undefined,
  advertised: () => JsonObject | undefined,
  side: "client" | "server",
): (method: string) => Error | undefined {
  return (method) => {
    const capability = required(method);
    if (capability === undefined || hasCapability(advertised(), capability)) return undefined;
    return new CapabilityError(method, capability, side);
  };
}

/**
 * MCP methods answered even at the in-flight cap: a ping tells the peer the session is alive, and a task
 * cancellation is how the peer frees places; refusing either would keep a busy session wedged.
 */
const UNCAPPED = [PING, "tasks/cancel"];
const LIFECYCLE_UNCANCELLABLE = [INITIALIZE];

/**
 * The spec forbids cancelling initialize: neither side sends, nor acts on, a cancellation of it. Ping and
 * cancellations pass the in-flight cap.
 */
/** @internal */
export function withLifecycle<T extends SessionOptions>(options: T, inbound: DispatchTable = options.inbound): T {
  return Object.assign({}, options, {
    inbound,
    uncancellable:
      options.uncancellable === undefined ? LIFECYCLE_UNCANCELLABLE : [INITIALIZE, ...options.uncancellable],
    uncapped: options.uncapped === undefined ? UNCAPPED : [...UNCAPPED, ...options.uncapped],
  });
}

export interface ServerSessionOptions extends SessionOptions {
  serverInfo: ImplementationInfo;
  /** What this server advertises; the layer above derives it from the handlers it registered. */
  capabilities?: JsonObject;
  instructions?: string;
  /** Versions this server speaks, latest first. */
  supportedProtocolVersions?: readonly string[];
  /**
   * How the requestState of MCP 2026-07-28 input-required rounds is sealed: the options, or a sealer shared by every
   * session of a server (McpServer passes its own). Default: a random key of this session's own.
   */
  requestState?: RequestStateOptions | RequestStateSealer;
  /**
   * MCP 2026-07-28 cache hints by method (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`,
   * `resources/read`, `server/discover`): `{ ttlMs, scope }`. Default `ttlMs: 0`, `"private"`; a handler's own
   * `ttlMs`/`cacheScope` in its result win. Lists change with registrations, so keep their ttl short or rely on
   * listChanged.
   */
  cache?: CacheHints;
  /**
   * The tables of the revisions after the one the SDK was generated from, by revision (the generated
   * `revisionTables`): the server speaks MCP 2026-07-28 only when they include it. The generated `Server.create` and
   * `createMcpServer` pass them.
   */
  revisions?: RevisionTableMap;
  /**
   * Trace context and OpenTelemetry: the API object (`import * as otel from "@opentelemetry/api"`) or
   * `{ api, tracerName, maxTracestateLength, maxBaggageBytes, maxBaggageMembers }`. With the API each handler runs in
   * a server span under the trace context its request carried in `_meta`, and the requests it sends the client carry
   * that span's context back. Default: no spans; handlers read what arrived as `ctx.trace`.
   */
  telemetry?: TelemetryOption;
}

/** The server side: answers initialize and ping; server-to-client requests need the client's capability. */
export class ServerSession extends Session {
  readonly serverInfo: ImplementationInfo;
  readonly supportedProtocolVersions: readonly string[];
  instructions: string | undefined;
  /** Called when the client sends notifications/initialized. */
  oninitialized?: () => void;
  private advertised: JsonObject;
  private readonly outboundTable: DispatchTable | undefined;
  private client: { capabilities: JsonObject; info: ImplementationInfo; version: string } | undefined;
  /** What the handshake said of the client, handed to each request it sends (see PeerIdentity). */
  private identity: { -readonly [K in keyof PeerIdentity]: PeerIdentity[K] } | undefined = undefined;
  private initializedNotified = false;
  /** The connection's era, pinned by its first request (see ServerEra). */
  private readonly eras: ServerEra;
  private readonly telemetry: Telemetry | undefined;

  constructor(options: ServerSessionOptions) {
    // server/discover is answered on every connection, whichever revision the tables were generated from.
    const modern = ModernWire.of(options.revisions);
    const inbound = modern === undefined ? options.inbound : modern.extend(options.inbound);
    super(withLifecycle(options, inbound));
    this.telemetry = Telemetry.of(options.telemetry);
    this.serverInfo = options.serverInfo;
    this.advertised = options.capabilities ?? {};
    this.outboundTable = options.outbound;
    this.instructions = options.instructions;
    this.supportedProtocolVersions = options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.onRequest(PING, pong);
    super.onRequest(INITIALIZE, (params) => this.answerInitialize(params));
    super.onRequest(DISCOVER, () => this.answerDiscover());
    const session = this;
    this.eras = new ServerEra({
      handshake: INITIALIZE,
      keepAlive: PING,
      get initialized() {
        return session.client !== undefined;
      },
      get legacyIdentity() {
        return session.identity;
      },
      get perRequest() {
        return session.transport?.perRequest === true;
      },
      get legacyVersions() {
        return session.supportedProtocolVersions;
      },
      modern,
      cache: options.cache,
      get serverInfo() {
        return session.serverInfo as JsonObject;
      },
      requestState:
        options.requestState instanceof RequestStateSealer
          ? options.requestState
          : new RequestStateSealer(options.requestState),
    });
    this.use(this.eras);
    this.use(traceReader(this.telemetry?.limits));
    this.use({
      notification: (method) => {
        if (method === INITIALIZED_NOTIFICATION && !this.initializedNotified) {
          this.initializedNotified = true;
          this.oninitialized?.();
        }
      },
      checkOutbound: capabilityGate(
        (method) => this.requiredClientCapability(method),
        () => this.client?.capabilities,
        "client",
      ),
    });
  }

  /** initialize belongs to the session (version negotiation, capabilities); registering another handler is refused. */
  override onRequest(method: string, handler: RequestHandler): void {
    if (method === INITIALIZE)
      throw new Error("ServerSession answers initialize itself; configure serverInfo/capabilities instead");
    // With OpenTelemetry each handler runs in a span of its own, a child of the context its request carried.
    const spans = this.telemetry?.spans;
    super.onRequest(method, spans === undefined ? handler : spans.handler(method, handler));
  }

  /** @internal With OpenTelemetry a request to the client gets a span whose context it carries in `_meta`. */
  override sendRequest(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
    relatedRequestId: RequestId | undefined,
  ): Promise<JsonObject> {
    const spans = this.telemetry?.spans;
    if (spans === undefined) return super.sendRequest(method, params, options, relatedRequestId);
    const facts = { protocolVersion: this.client?.version, sessionId: this.transport?.sessionId };
    return spans.outgoing(method, params, facts, (traced) =>
      super.sendRequest(method, traced, options, relatedRequestId),
    );
  }

  get capabilities(): JsonObject {
    return this.advertised;
  }
  /** The client capability a request or notification to the client needs, or undefined when none is needed. */
  requiredClientCapability(method: string): string | undefined {
    return requiredCapability(this.outboundTable, method);
  }
  /** Merge more capabilities in; only meaningful before the client initializes. */
  registerCapabilities(capabilities: JsonObject): void {
    this.advertised = { ...this.advertised, ...capabilities };
  }
  get clientCapabilities(): JsonObject | undefined {
    return this.client?.capabilities;
  }
  get clientInfo(): ImplementationInfo | undefined {
    return this.client?.info;
  }
  get protocolVersion(): string | undefined {
    return this.client?.version;
  }
  /** The protocol era this connection speaks, once its first request pinned it. */
  get era(): "legacy" | "modern" | undefined {
    return this.eras.era;
  }
  /** logging/setLevel (2025-11-25): the least severe level the client wants from now on, on every request. */
  setLogLevel(level: string): void {
    if (this.identity !== undefined) this.identity.logLevel = level;
  }
  /** True once the client confirmed with notifications/initialized. */
  get initialized(): boolean {
    return this.initializedNotified;
  }

  private answerInitialize(params: JsonObject | undefined): JsonObject {
    if (this.client !== undefined) throw new RpcError(ErrorCode.InvalidRequest, "Already initialized");
    const p = params ?? {};
    const version = negotiateProtocolVersion(p.protocolVersion, this.supportedProtocolVersions);
    this.client = {
      capabilities: isObject(p.capabilities) ? p.capabilities : {},
      info: (isObject(p.clientInfo) ? p.clientInfo : { name: "unknown", version: "unknown" }) as ImplementationInfo,
      version,
    };
    this.identity = { protocolVersion: version, capabilities: this.client.capabilities, info: this.client.info };
    // Until logging/setLevel the 2025 client hears every level.
    this.identity.logLevel = "debug";
    const result: JsonObject = { protocolVersion: version, capabilities: this.advertised, serverInfo: this.serverInfo };
    if (this.instructions !== undefined) result.instructions = this.instructions;
    return result;
  }

  /** server/discover: the revisions that take a per-request envelope, and what initialize would advertise. */
  private answerDiscover(): JsonObject {
    const result: JsonObject = { supportedVersions: [...MODERN_PROTOCOL_VERSIONS], capabilities: this.advertised };
    if (this.instructions !== undefined) result.instructions = this.instructions;
    return result;
  }
}
