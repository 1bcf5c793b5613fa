// The MCP lifecycle on top of Session: initialize handshake, protocol version negotiation, capability checks, ping.
import { ErrorCode, RpcError, type JsonObject } from "./jsonrpc.js";
import { isPlainObject as isObject } from "./jsonrpc.js";
import type { Transport } from "./transport.js";
import type { RequestHandler, RequestOptions } from "./peer.js";
import { CapabilityError, ProtocolVersionError } from "./errors.js";
import { Session, type SessionOptions } from "./session.js";
import type { JsonRpcMessage, RequestId } from "./jsonrpc.js";
import type { OutboundOperation } from "./operations.js";
import { ClientResumer, type ResumableClientOptions, type ResumerHost } from "./resumable/client.js";
import { RESUMABLE_CAPABILITY } from "./resumable/protocol.js";

import { SUPPORTED_PROTOCOL_VERSIONS } from "./protocol-versions.js";

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

/** @internal Client requests and the server capability each needs (dotted path into ServerCapabilities). */
export const SERVER_CAPABILITY_FOR_METHOD: Readonly<Record<string, string>> = {
  "resources/subscribe": "resources.subscribe",
  "resources/unsubscribe": "resources.subscribe",
  "logging/setLevel": "logging",
  "completion/complete": "completions",
};
/** @internal Prefix rules applied when a client method has no exact entry above. */
export const SERVER_CAPABILITY_FOR_PREFIX: readonly (readonly [string, string])[] = [
  ["tools/", "tools"],
  ["resources/", "resources"],
  ["prompts/", "prompts"],
];
/** @internal Server requests and the client capability each needs. */
export const CLIENT_CAPABILITY_FOR_METHOD: Readonly<Record<string, string>> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/** @internal The server capability a client-to-server method needs, or undefined when none is needed. */
export function requiredServerCapability(method: string): string | undefined {
  if (Object.hasOwn(SERVER_CAPABILITY_FOR_METHOD, method)) return SERVER_CAPABILITY_FOR_METHOD[method];
  for (const [prefix, capability] of SERVER_CAPABILITY_FOR_PREFIX) {
    if (method.startsWith(prefix)) return capability;
  }
  return undefined;
}

/** @internal The client capability a server-to-client method needs, or undefined when none is needed. */
export function requiredClientCapability(method: string): string | undefined {
  return Object.hasOwn(CLIENT_CAPABILITY_FOR_METHOD, method) ? CLIENT_CAPABILITY_FOR_METHOD[method] : undefined;
}

/** Whether a dotted capability path is advertised (present and not false/null). */
export function hasCapability(capabilities: JsonObject | undefined, path: string): boolean {
  let node: unknown = capabilities;
  // Walked by index, not split: this runs for every outbound request, and most paths have a single segment.
  for (let start = 0; ;) {
    const dot = path.indexOf(".", start);
    const key = dot < 0 ? (start === 0 ? path : path.slice(start)) : path.slice(start, dot);
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as JsonObject)[key];
    if (dot < 0) break;
    start = dot + 1;
  }
  return node !== undefined && node !== null && node !== false;
}

/** @internal The version a server answers with: the client's when supported, else the server's latest. */
export function negotiateProtocolVersion(
  requested: unknown,
  supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): string {
  return typeof requested === "string" && supported.includes(requested) ? requested : supported[0];
}

function pong(): JsonObject {
  return {};
}

export interface ClientSessionOptions extends SessionOptions {
  clientInfo: ImplementationInfo;
  capabilities?: JsonObject;
  /** Versions this client accepts, latest first; the first one is requested. */
  supportedProtocolVersions?: readonly string[];
  /** Timeout for the initialize request, ms; defaults to the session default. */
  initializeTimeout?: number;
  /**
   * Makes a new connection after the transport closed by itself; the session then initializes again on it and
   * resumes the requests the server made resumable. Without it a closed session stays closed.
   */
  reconnect?: () => Promise<Transport>;
  /** SEP-975: advertise `resumableRequests` and resume requests after a disconnect (true: default settings). */
  resumable?: boolean | ResumableClientOptions;
}

/** The client side: `connect()` performs the handshake; requests the server did not advertise are refused locally. */
export class ClientSession extends Session {
  readonly clientInfo: ImplementationInfo;
  readonly capabilities: JsonObject;
  readonly supportedProtocolVersions: readonly string[];
  /** Keeps resumable requests across disconnects and reconnects; present with `resumable` or `reconnect`. */
  readonly resumer: ClientResumer | undefined;
  private readonly initializeTimeout: number | undefined;
  private readonly reconnect: (() => Promise<Transport>) | undefined;
  private server:
    { capabilities: JsonObject; info: ImplementationInfo; version: string; instructions?: string } | undefined;

  constructor(options: ClientSessionOptions) {
    super(options);
    this.clientInfo = options.clientInfo;
    const resumable = options.resumable;
    this.capabilities =
      resumable === undefined || resumable === false
        ? (options.capabilities ?? {})
        : { ...options.capabilities, [RESUMABLE_CAPABILITY]: {} };
    this.supportedProtocolVersions = options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.initializeTimeout = options.initializeTimeout;
    this.reconnect = options.reconnect;
    if ((resumable !== undefined && resumable !== false) || options.reconnect !== undefined) {
      const resumer = new ClientResumer(this.resumerHost(), typeof resumable === "object" ? resumable : {});
      this.resumer = resumer;
      this.use(resumer.extension(resumable !== undefined && resumable !== false));
    }
    // Before initialize completes the server has advertised nothing, so capability-gated methods are refused.
    this.use({
      checkOutbound: (method) => {
        const capability = requiredServerCapability(method);
        if (capability === undefined || hasCapability(this.server?.capabilities, capability)) return undefined;
        return new CapabilityError(method, capability, "server");
      },
    });
    this.onRequest(PING, pong);
  }

  get serverCapabilities(): JsonObject | undefined {
    return this.server?.capabilities;
  }
  get serverInfo(): ImplementationInfo | undefined {
    return this.server?.info;
  }
  get protocolVersion(): string | undefined {
    return this.server?.version;
  }
  get instructions(): string | undefined {
    return this.server?.instructions;
  }

  /** Start the transport, initialize, check the answer, send notifications/initialized. Closes on failure. */
  override async connect(transport: Transport, options?: Pick<RequestOptions, "signal">): Promise<void> {
    await super.connect(transport);
    try {
      await this.handshake(options?.signal);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** Closing on purpose also ends any reconnection under way; kept requests fail with ConnectionClosedError. */
  override async close(): Promise<void> {
    const recovering = this.resumer !== undefined && !this.isOpen && this.resumer.isRecovering;
    this.resumer?.stop();
    await super.close();
    if (recovering) this.onclose?.();
  }

  private resumerHost(): ResumerHost {
    const session = this;
    return {
      get operations() {
        return session.operations;
      },
      get isOpen() {
        return session.isOpen;
      },
      reconnectTransport: this.reconnect,
      async reattach(transport: Transport) {
        await session.replaceTransport(transport);
        try {
          await session.handshake(undefined);
        } catch (error) {
          await transport.close().catch(() => undefined);
          // A transport that was already dead reports no close of its own.
          if (session.isOpen) session.abandonTransport();
          throw error;
        }
      },
      // A transport with sessions (HTTP) clears its id when the server forgot it; with an id, someone already opened a new one.
      reinitialize: () => (this.transport?.sessionId !== undefined ? Promise.resolve() : this.handshake(undefined)),
      dropTransport: () => {
        const transport = this.transport;
        if (!session.isOpen) return;
        session.abandonTransport();
        transport?.close().catch(() => undefined);
      },
      skipStreamResume: (requestId: RequestId) => this.transport?.skipStreamResume?.(requestId),
      resendAs: (op: OutboundOperation, method: string, params: JsonObject | undefined) =>
        this.resendAs(op, method, params),
      transmit: (message: JsonRpcMessage, relatedRequestId?: RequestId) => this.transmit(message, relatedRequestId),
      request: (method: string, params: JsonObject | undefined, options?: RequestOptions) =>
        this.request(method, params, options),
      closedForGood: () => this.onclose?.(),
    };
  }

  /** initialize, check the answer, notifications/initialized. */
  private async handshake(signal: AbortSignal | undefined): Promise<void> {
    const result = await this.request(
      INITIALIZE,
      {
        protocolVersion: this.supportedProtocolVersions[0],
        capabilities: this.capabilities,
        clientInfo: this.clientInfo,
      },
      { timeout: this.initializeTimeout, signal },
    );
    const version = result.protocolVersion;
    if (typeof version !== "string" || !this.supportedProtocolVersions.includes(version)) {
      throw new ProtocolVersionError(version, this.supportedProtocolVersions);
    }
    if (!isObject(result.capabilities) || !isObject(result.serverInfo)) {
      throw new RpcError(ErrorCode.InvalidParams, "initialize result lacks capabilities or serverInfo");
    }
    this.server = {
      capabilities: result.capabilities,
      info: result.serverInfo as ImplementationInfo,
      version,
      ...(typeof result.instructions === "string" ? { instructions: result.instructions } : {}),
    };
    await this.notify(INITIALIZED_NOTIFICATION);
  }
}

export interface ServerSessionOptions extends SessionOptions {
  serverInfo: ImplementationInfo;
  /** What this server advertises; the layer above derives it from the handlers it registered. */
  capabilities?: JsonObject;
  instructions?: string;
  /** Versions this server speaks, latest first. */
  supportedProtocolVersions?: readonly string[];
}

/** The server side: answers initialize and ping; server-to-client requests need the client's capability. */
export class ServerSession extends Session {
  readonly serverInfo: ImplementationInfo;
  readonly supportedProtocolVersions: readonly string[];
  instructions: string | undefined;
  /** Called when the client sends notifications/initialized. */
  oninitialized?: () => void;
  private advertised: JsonObject;
  private client: { capabilities: JsonObject; info: ImplementationInfo; version: string } | undefined;
  private initializedNotified = false;

  constructor(options: ServerSessionOptions) {
    super(options);
    this.serverInfo = options.serverInfo;
    this.advertised = options.capabilities ?? {};
    this.instructions = options.instructions;
    this.supportedProtocolVersions = options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.onRequest(PING, pong);
    super.onRequest(INITIALIZE, (params) => this.answerInitialize(params));
    this.use({
      notification: (method) => {
        if (method === INITIALIZED_NOTIFICATION && !this.initializedNotified) {
          this.initializedNotified = true;
          this.oninitialized?.();
        }
      },
      checkOutbound: (method) => {
        const capability = requiredClientCapability(method);
        if (capability === undefined || hasCapability(this.client?.capabilities, capability)) return undefined;
        return new CapabilityError(method, capability, "client");
      },
    });
  }

  /** initialize belongs to the session (version negotiation, capabilities); registering another handler is refused. */
  override onRequest(method: string, handler: RequestHandler): void {
    if (method === INITIALIZE)
      throw new Error("ServerSession answers initialize itself; configure serverInfo/capabilities instead");
    super.onRequest(method, handler);
  }

  get capabilities(): JsonObject {
    return this.advertised;
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
    const result: JsonObject = { protocolVersion: version, capabilities: this.advertised, serverInfo: this.serverInfo };
    if (this.instructions !== undefined) result.instructions = this.instructions;
    return result;
  }
}
