// The client side of MCP: settles on the server's era (server/discover probe, else the initialize handshake) and speaks it; capability checks, ping.
import { ErrorCode, RpcError, isPlainObject as isObject, type JsonObject } from "../rpc/jsonrpc.js";
import type { Transport } from "../rpc/transport.js";
import type { DispatchTable } from "../rpc/dispatch.js";
import type { RequestOptions } from "../rpc/peer.js";
import { ConnectionClosedError, ProtocolVersionError, RequestTimeoutError } from "../rpc/errors.js";
import { Session, type SessionOptions } from "../rpc/session/session.js";
import type { JsonRpcMessage, RequestId } from "../rpc/jsonrpc.js";
import type { OutboundOperation } from "../rpc/operations.js";
import { MODERN_PROTOCOL_VERSIONS, SERVER_INFO_META } from "../eras/2026-07-28/envelope.js";
import { DISCOVER, type RevisionTableMap } from "../eras/2026-07-28/wire.js";
import { ResponseCache, type ResponseCacheOptions } from "../eras/2026-07-28/response-cache.js";
import type { ListenOptions } from "../eras/2026-07-28/client-subscriptions.js";
import { ACKNOWLEDGED, ClientListen } from "../eras/2026-07-28/client-listen.js";
import type { NotificationHandler, RequestHandler } from "../rpc/peer.js";
import { Telemetry, traceReader, withParamsTrace, type TelemetryOption } from "./telemetry.js";
import { ModernClientWire } from "../eras/2026-07-28/client-wire.js";
import { DEFAULT_MAX_TASK_INPUTS } from "../eras/2026-07-28/client-task.js";
import { ClientRecovery, type ReconnectOptions, type RecoveryHost } from "./client-recovery.js";
import type { ClientExtension, ClientSessionHost } from "./client-extension.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "./protocol-versions.js";
import {
  capabilityGate,
  INITIALIZE,
  INITIALIZED_NOTIFICATION,
  PING,
  pong,
  requiredCapability,
  withLifecycle,
  type ImplementationInfo,
} from "./lifecycle.js";
import {
  DEFAULT_PROBE_TIMEOUT_MS,
  isUnsupportedVersion,
  newestCommon,
  probeEvidence,
  supportedOf,
  type EraOption,
  type EraVerdict,
} from "./negotiation.js";
import { limitOption } from "../rpc/limits.js";

export type { EraOption, EraVerdict } from "./negotiation.js";

const LOG_MESSAGE = "notifications/message";

export interface ClientSessionOptions extends SessionOptions {
  clientInfo: ImplementationInfo;
  capabilities?: JsonObject;
  /** Handshake revisions this client accepts, latest first; the first one is requested. */
  supportedProtocolVersions?: readonly string[];
  /** Timeout for the initialize request, ms; defaults to the session default. */
  initializeTimeout?: number;
  /**
   * Which era to speak: `"auto"` (default) probes with `server/discover` and speaks MCP 2026-07-28 where the server
   * does, else the handshake; `"legacy"` the handshake only; `{ pin: revision }` that revision without probing.
   */
  era?: EraOption;
  /** A verdict from an earlier connection to the same server (`session.verdict`): no probe is made. */
  verdict?: EraVerdict;
  /**
   * How long the `server/discover` probe may take, ms, before the server counts as legacy (a legacy stdio server
   * may never answer it); default 3000. Not on HTTP, where every request is answered: there the probe has the
   * request timeout, and running out of it fails the connection.
   */
  probeTimeoutMs?: number;
  /**
   * The tables of the revisions after the SDK's (the generated `revisionTables`; `Client.connect` passes them): the
   * client speaks MCP 2026-07-28 only with them.
   */
  revisions?: RevisionTableMap;
  /** MCP 2026-07-28: input-required rounds one request may take before it fails; default 10. */
  maxInputRounds?: number;
  /**
   * MCP 2026-07-28: declare the Tasks extension (`io.modelcontextprotocol/tasks`) in every request's envelope, so a
   * server may answer tools/call with a task, which the client then follows (a plain call resolves with its result);
   * default true. `false`: no task is ever taken, and a server that needs one answers -32021.
   */
  tasksExtension?: boolean;
  /**
   * MCP 2026-07-28 Tasks extension: input requests one task may make of the client over its life; one more cancels
   * the task and fails its result with TaskInputsExceededError. Default 1000.
   */
  maxTaskInputs?: number;
  /**
   * MCP 2026-07-28: the cache of results the server marks cacheable (`ttlMs`), dropped early by the notification that
   * says they changed; `false` keeps nothing. Default: up to 500 results.
   */
  cache?: ResponseCacheOptions | false;
  /**
   * MCP 2026-07-28: how `subscriptions/listen` is re-opened after its stream ends (backoff 500 ms doubling to 30 s)
   * and how many resources may be subscribed at once (1000).
   */
  listen?: ListenOptions;
  /**
   * Makes a new connection after the transport closed by itself; the session then initializes again on it and
   * resumes the requests the server made resumable. Without it a closed session stays closed.
   */
  reconnect?: () => Promise<Transport>;
  /**
   * Delays and attempts of reconnection (retryDelayMs 50, maxRetryDelayMs 2000, maxAttempts 5 by default); when left
   * out, those of the first extension that gives them (`resumableClient(options)`).
   */
  reconnectOptions?: ReconnectOptions;
  /**
   * Features installed on this session, in order: each may advertise capabilities and take part in reconnection
   * (e.g. `resumableClient()` for SEP-975 resumable requests).
   */
  extensions?: readonly ClientExtension[];
  /**
   * Trace context and OpenTelemetry: the API object (`import * as otel from "@opentelemetry/api"`) or
   * `{ api, tracerName, maxTracestateLength, maxBaggageBytes, maxBaggageMembers }`. With the API each request the app
   * sends gets a client span whose context travels in `_meta` (`traceparent`, `tracestate`, `baggage`), and each
   * handler of a server request runs in a server span under the context that request carried. Default: no spans; trace
   * context goes out where the caller put it in `_meta`.
   */
  telemetry?: TelemetryOption;
}

interface ServerFacts {
  capabilities: JsonObject | undefined;
  info: ImplementationInfo | undefined;
  version: string;
  instructions?: string;
}

/**
 * The client side. `connect()` settles on the era (see ClientSessionOptions.era) and, on the handshake era, runs
 * initialize; requests for capabilities the server did not advertise are refused locally. On MCP 2026-07-28 every
 * request carries the envelope, and input-required results are answered through the handlers registered with
 * `onRequest` (`onElicit`, `onCreateMessage`, `onListRoots` on the generated client).
 */
export class ClientSession extends Session {
  readonly clientInfo: ImplementationInfo;
  readonly capabilities: JsonObject;
  readonly supportedProtocolVersions: readonly string[];
  /** Keeps the session going across disconnects; present with `reconnect` or any extension. */
  readonly recovery: ClientRecovery | undefined;
  private readonly initializeTimeout: number | undefined;
  private readonly reconnect: (() => Promise<Transport>) | undefined;
  private readonly eraOption: EraOption;
  private readonly priorVerdict: EraVerdict | undefined;
  private readonly probeTimeout: number;
  private readonly revisions: RevisionTableMap | undefined;
  private readonly maxInputRounds: number | undefined;
  private readonly tasksExtension: boolean;
  private readonly maxTaskInputs: number;
  private server: ServerFacts | undefined;
  /** The 2026-07-28 wire, once the client speaks it. */
  private modern: ModernClientWire | undefined;
  private reached: EraVerdict | undefined;
  private respawned = false;
  private readonly hasExtensions: boolean;
  private readonly cache: ResponseCache | undefined;
  /** The app's list-changed handlers and resource subscriptions, on subscriptions/listen once the client speaks 2026. */
  private readonly listen: ClientListen;
  private readonly telemetry: Telemetry | undefined;

  constructor(options: ClientSessionOptions) {
    super(withLifecycle(Object.assign({}, options, { uncancellable: [DISCOVER, ...(options.uncancellable ?? [])] })));
    this.telemetry = Telemetry.of(options.telemetry);
    this.use(traceReader(this.telemetry?.limits));
    this.clientInfo = options.clientInfo;
    const extensions = options.extensions ?? [];
    let capabilities = options.capabilities ?? {};
    for (const extension of extensions) {
      if (extension.capabilities !== undefined) capabilities = { ...capabilities, ...extension.capabilities };
    }
    this.capabilities = capabilities;
    this.supportedProtocolVersions = options.supportedProtocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.initializeTimeout = options.initializeTimeout;
    this.reconnect = options.reconnect;
    this.eraOption = options.era ?? "auto";
    this.priorVerdict = options.verdict;
    this.probeTimeout = limitOption("probeTimeoutMs", options.probeTimeoutMs, DEFAULT_PROBE_TIMEOUT_MS);
    this.revisions = options.revisions ?? ownRevision(options.outbound);
    this.maxInputRounds = options.maxInputRounds;
    this.tasksExtension = options.tasksExtension !== false;
    this.maxTaskInputs = limitOption("maxTaskInputs", options.maxTaskInputs, DEFAULT_MAX_TASK_INPUTS, Infinity, 1);
    this.cache = options.cache === false ? undefined : new ResponseCache(options.cache ?? {});
    this.listen = new ClientListen(
      {
        wire: () => this.modern,
        serverCapabilities: () => this.server?.capabilities,
        nextRequestId: () => this.nextRequestId,
        send: (method, params, requestOptions) => this.sendUnchecked(method, params, requestOptions),
        warn: (error) => this.onerror?.(error),
      },
      options.listen,
    );
    this.hasExtensions = extensions.length > 0;
    checkEraOption(this.eraOption, this.modernVersions(), this.supportedProtocolVersions);
    if (extensions.length > 0 || options.reconnect !== undefined) {
      const settings = options.reconnectOptions ?? extensions.find((e) => e.reconnect !== undefined)?.reconnect;
      const recovery = new ClientRecovery(this.recoveryHost(), settings);
      this.recovery = recovery;
      const host = this.extensionHost(recovery);
      for (const extension of extensions) this.use(extension.install(host));
      // After the extensions: one that keeps a request across a lost stream takes its notice before recovery does.
      this.use(recovery.extension());
    }
    // Before the server said what it offers, capability-gated methods are refused; on 2026-07-28 without a probe
    // (pinned, or a prior verdict) nothing was said, and the server answers for itself. The Tasks extension's
    // requests there follow a task the server made: no core `tasks` capability is asked for them.
    const outbound = options.outbound;
    const gate = capabilityGate(
      (method) => requiredCapability(outbound, method),
      () => this.server?.capabilities,
      "server",
    );
    this.use({
      checkOutbound: (method) => {
        const modern = this.modern;
        if (modern === undefined) return gate(method);
        return this.server?.capabilities === undefined || modern.isExtensionRequest(method) ? undefined : gate(method);
      },
    });
    // 2026-07-28's notifications: what a change makes stale leaves the cache; a listen's acknowledgment (a notification
    // no 2025 table has) settles the listen that asked for it.
    this.use({
      accept: (message) => {
        if (message.method === ACKNOWLEDGED) this.listen.acknowledged(message.params);
        return true;
      },
      notification: (method, params) => this.cache?.invalidate(method, params),
      // Without recovery a lost connection is the end: no listen is tried again on it.
      closed: () => {
        if (this.recovery === undefined) this.listen.close();
      },
    });
    this.onRequest(PING, pong);
  }

  /** With OpenTelemetry, a handler of the server's requests runs in a span of its own (see `telemetry`). */
  override onRequest(method: string, handler: RequestHandler): void {
    const spans = this.telemetry?.spans;
    super.onRequest(method, spans === undefined ? handler : spans.handler(method, handler));
  }

  /** A handler for a list-changed notification also asks for it on 2026-07-28 (through subscriptions/listen). */
  override onNotification(method: string, handler: NotificationHandler): void {
    super.onNotification(method, handler);
    this.listen.handler(method, true);
  }

  override removeNotificationHandler(method: string): void {
    super.removeNotificationHandler(method);
    this.listen.handler(method, false);
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
  /** The era this client speaks with the server, once connected. */
  get era(): "modern" | "legacy" | undefined {
    return this.reached?.era;
  }
  /** What the negotiation concluded, to keep and pass back as `verdict` on the next connection to this server. */
  get verdict(): EraVerdict | undefined {
    return this.reached;
  }

  /** Start the transport, settle on the era (and initialize on the handshake era). Closes on failure. */
  override async connect(transport: Transport, options?: Pick<RequestOptions, "signal">): Promise<void> {
    await super.connect(transport);
    try {
      await this.negotiate(options?.signal);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /**
   * A request to the server. On MCP 2026-07-28 it carries the envelope and goes through as many input-required
   * rounds as the server needs; a -32022 naming other revisions makes the client settle again and retry it once.
   */
  override request(method: string, params: JsonObject | undefined, options?: RequestOptions): Promise<JsonObject> {
    const spans = this.telemetry?.spans;
    if (spans === undefined) return this.requestUntraced(method, params, options);
    const facts = { protocolVersion: this.protocolVersion, sessionId: this.transport?.sessionId };
    return spans.outgoing(method, params, facts, (traced) => this.requestUntraced(method, traced, options));
  }

  private requestUntraced(
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
  ): Promise<JsonObject> {
    const modern = this.modern;
    if (modern === undefined) return super.request(method, params, options);
    // This revision subscribes to resources through subscriptions/listen, which the client keeps open.
    if (ClientListen.isSubscription(method)) return this.listen.subscription(method, params);
    const ready = this.listen.ready();
    if (ready !== undefined) return ready.then(() => this.modernRequest(modern, method, params, options));
    return this.modernRequest(modern, method, params, options);
  }

  /**
   * On MCP 2026-07-28 a notification the revision does not have (`notifications/roots/list_changed`: roots are asked
   * for in input rounds now) has no one to tell, and is dropped; the others go out as on 2025-11-25.
   */
  override notify(method: string, params?: JsonObject): Promise<void> {
    const modern = this.modern;
    if (modern !== undefined && !modern.hasNotification(method)) return Promise.resolve();
    return super.notify(method, params);
  }

  /** Closing on purpose also ends any reconnection under way; kept requests fail with ConnectionClosedError. */
  override async close(): Promise<void> {
    this.listen.close();
    const recovering = this.recovery !== undefined && !this.isOpen && this.recovery.isRecovering;
    this.recovery?.stop();
    await super.close();
    if (recovering) this.onclose?.();
  }

  /**
   * Resolves once the server acknowledged the list-changed handlers and resource subscriptions asked for so far: on
   * MCP 2026-07-28 they travel on a subscriptions/listen stream, opened after the asking; on 2025-11-25 at once. A
   * change made after it is heard.
   */
  subscriptionsReady(): Promise<void> {
    return this.listen.settled();
  }

  /** Resolves when the session is connected: at once, or after the reconnection under way. */
  whenConnected(): Promise<void> {
    if (this.recovery !== undefined) return this.recovery.whenConnected();
    return this.isOpen ? Promise.resolve() : Promise.reject(new ConnectionClosedError());
  }

  // ---- negotiation ----

  /** The 2026-07-28 revisions this client has tables for, latest first. */
  private modernVersions(): readonly string[] {
    const tables = this.revisions;
    return tables === undefined ? [] : MODERN_PROTOCOL_VERSIONS.filter((v) => Object.hasOwn(tables, v));
  }

  private async negotiate(signal: AbortSignal | undefined): Promise<void> {
    const prior = this.priorVerdict;
    if (prior !== undefined) {
      if (prior.era === "modern" && this.modernVersions().includes(prior.protocolVersion))
        return this.speakModern(prior.protocolVersion, undefined);
      if (prior.era === "legacy" && this.supportedProtocolVersions.includes(prior.protocolVersion))
        return this.handshake(signal, prior.protocolVersion, false);
      // A verdict this client cannot honour (kept by another build) is no verdict.
    }
    const era = this.eraOption;
    if (era === "legacy") return this.handshake(signal, undefined, false);
    if (typeof era === "object") {
      if (this.modernVersions().includes(era.pin)) return this.speakModern(era.pin, undefined);
      return this.handshake(signal, era.pin, false);
    }
    const modern = this.modernVersions();
    // Extensions (resumable requests, async tool calls, core tasks) are features of the handshake era: a client that
    // installs them asks for it first, and speaks 2026-07-28 only with a server that answers -32022.
    if (modern.length === 0 || this.hasExtensions) return this.handshake(signal, undefined, false);
    return this.probe(modern[0]!, signal, true);
  }

  /**
   * `server/discover` under `version`: a DiscoverResult makes the client modern; a -32022 names the revisions to
   * choose from (once); any other answer or error, a timeout or an HTTP 4xx means a legacy server, which is then
   * initialized on the same connection.
   */
  private async probe(version: string, signal: AbortSignal | undefined, mayRetry: boolean): Promise<void> {
    const wire = this.wireFor(version);
    // Where every request is answered (HTTP), silence is a slow or busy server, not a legacy one: the probe gets the
    // usual timeout (the authorization a first request may need runs inside it), and running out says nothing.
    const answered = this.transport?.answersEachRequest === true;
    let result: JsonObject;
    try {
      const params = wire.stamp(undefined);
      const headers = wire.headers(DISCOVER, params);
      result = await this.sendUnchecked(
        DISCOVER,
        params,
        answered ? { signal, headers } : { timeout: this.probeTimeout, signal, headers },
      );
    } catch (error) {
      if (signal?.aborted === true || (answered && error instanceof RequestTimeoutError)) throw error;
      // A server that exits on a request it does not know is a 2025 one: start it again, once, for initialize.
      const respawn = this.transport?.respawn;
      // With recovery (a `reconnect` function) the lost child is recovery's to replace, not the probe's.
      if (
        error instanceof ConnectionClosedError &&
        !this.isOpen &&
        respawn !== undefined &&
        !this.respawned &&
        this.recovery === undefined
      ) {
        this.respawned = true;
        await this.replaceTransport(respawn.call(this.transport));
        return this.handshake(signal, undefined, false);
      }
      const evidence = probeEvidence(error);
      if (evidence.kind === "none") throw evidence.error;
      if (evidence.kind === "legacy") return this.handshake(signal, undefined, false);
      return this.choose(evidence.supported, signal, mayRetry, error);
    }
    // Only a DiscoverResult says "modern": a legacy server may answer an unknown request with anything (`{}`).
    const supported = isObject(result) ? supportedOf({ supported: result.supportedVersions }) : undefined;
    if (supported === undefined || !isObject(result.capabilities)) return this.handshake(signal, undefined, false);
    const pick = newestCommon(this.modernVersions(), supported);
    if (pick !== undefined) return this.speakModern(pick, result);
    return this.choose(supported, signal, false, new ProtocolVersionError(supported.join(", "), this.modernVersions()));
  }

  /** The server named the revisions it speaks: the newest modern one both know, else a common handshake one. */
  private async choose(
    supported: readonly string[],
    signal: AbortSignal | undefined,
    mayRetry: boolean,
    error: unknown,
  ): Promise<void> {
    const modern = newestCommon(this.modernVersions(), supported);
    if (modern !== undefined && mayRetry) return this.probe(modern, signal, false);
    const legacy = newestCommon(this.supportedProtocolVersions, supported);
    if (legacy !== undefined) return this.handshake(signal, legacy, false);
    throw error instanceof Error
      ? error
      : new ProtocolVersionError(supported.join(", "), this.supportedProtocolVersions);
  }

  private wireFor(version: string): ModernClientWire {
    const session = this;
    return new ModernClientWire(
      {
        clientInfo: this.clientInfo as JsonObject,
        capabilities: this.capabilities,
        send: (method, params, options) => this.sendUnchecked(method, params, options),
        handler: (method) => {
          const handler = this.requestHandler(method);
          return handler === undefined ? undefined : withParamsTrace(handler, this.telemetry?.limits);
        },
        inboundSpec: (method) => this.inboundSpec(method),
        resultSpec: (method) => this.outboundSpec(method),
        warn: (error) => session.onerror?.(error),
        wantsLogs: () => this.hasNotificationHandler(LOG_MESSAGE),
      },
      version,
      {
        table: this.revisions?.[version]?.inbound,
        maxInputRounds: this.maxInputRounds,
        cache: this.cache,
        tasksExtension: this.tasksExtension,
        maxTaskInputs: this.maxTaskInputs,
      },
    );
  }

  /** From now on every request goes out on `version`'s wire. */
  private speakModern(version: string, discovered: JsonObject | undefined): void {
    const previous = this.modern;
    const wire = this.wireFor(version);
    if (previous !== undefined) wire.logLevel = previous.logLevel;
    this.modern = wire;
    this.reached = { era: "modern", protocolVersion: version };
    if (discovered !== undefined) {
      const meta = isObject(discovered._meta) ? discovered._meta : {};
      const info = meta[SERVER_INFO_META] ?? discovered.serverInfo;
      this.server = {
        capabilities: discovered.capabilities as JsonObject,
        info: isObject(info) ? (info as ImplementationInfo) : undefined,
        version,
        ...(typeof discovered.instructions === "string" ? { instructions: discovered.instructions } : {}),
      };
    } else if (this.server !== undefined) {
      this.server = { ...this.server, version };
    } else {
      this.server = { capabilities: undefined, info: undefined, version };
    }
    this.transport?.setProtocolVersion?.(version);
    this.listen.start();
  }

  private async modernRequest(
    wire: ModernClientWire,
    method: string,
    params: JsonObject | undefined,
    options: RequestOptions | undefined,
  ): Promise<JsonObject> {
    try {
      return await wire.request(method, params, options);
    } catch (error) {
      if (!isUnsupportedVersion(error) || this.eraOption !== "auto" || this.modern !== wire) throw error;
      // The server no longer speaks this revision (another one took its place behind the same address): settle again.
      const supported = supportedOf(error.data)!;
      const modern = newestCommon(this.modernVersions(), supported);
      if (modern !== undefined && modern !== wire.protocolVersion) {
        this.speakModern(modern, undefined);
        return this.modern!.request(method, params, options);
      }
      const legacy = newestCommon(this.supportedProtocolVersions, supported);
      if (legacy === undefined) throw error;
      this.modern = undefined;
      await this.handshake(options?.signal, legacy, false);
      return super.request(method, params, options);
    }
  }

  /**
   * initialize, check the answer, notifications/initialized. A -32022 naming a modern revision (a server that speaks
   * only those) makes an auto client probe that one instead, once.
   */
  private async handshake(
    signal: AbortSignal | undefined,
    version: string | undefined,
    retried: boolean,
  ): Promise<void> {
    let result: JsonObject;
    try {
      result = await super.request(
        INITIALIZE,
        {
          protocolVersion: version ?? this.supportedProtocolVersions[0],
          capabilities: this.capabilities,
          clientInfo: this.clientInfo,
        },
        { timeout: this.initializeTimeout, signal },
      );
    } catch (error) {
      if (retried || this.eraOption !== "auto" || !isUnsupportedVersion(error)) throw error;
      const modern = newestCommon(this.modernVersions(), supportedOf(error.data)!);
      if (modern === undefined) throw error;
      return this.probe(modern, signal, false);
    }
    const answered = result.protocolVersion;
    if (typeof answered !== "string" || !this.supportedProtocolVersions.includes(answered)) {
      throw new ProtocolVersionError(answered, this.supportedProtocolVersions);
    }
    if (!isObject(result.capabilities) || !isObject(result.serverInfo)) {
      throw new RpcError(ErrorCode.InvalidParams, "initialize result lacks capabilities or serverInfo");
    }
    this.modern = undefined;
    this.server = {
      capabilities: result.capabilities,
      info: result.serverInfo as ImplementationInfo,
      version: answered,
      ...(typeof result.instructions === "string" ? { instructions: result.instructions } : {}),
    };
    this.reached = { era: "legacy", protocolVersion: answered };
    this.transport?.setProtocolVersion?.(answered);
    await this.notify(INITIALIZED_NOTIFICATION);
  }

  /** After a new connection: the handshake again on the handshake era; on 2026-07-28 there is nothing to redo. */
  private async reestablish(): Promise<void> {
    const modern = this.modern;
    if (modern !== undefined) {
      this.transport?.setProtocolVersion?.(modern.protocolVersion);
      this.listen.reconnected();
      return;
    }
    await this.handshake(undefined, this.reached?.protocolVersion, true);
  }

  private recoveryHost(): RecoveryHost {
    const session = this;
    return {
      get isOpen() {
        return session.isOpen;
      },
      reconnectTransport: this.reconnect,
      async reattach(transport: Transport) {
        await session.replaceTransport(transport);
        try {
          await session.reestablish();
        } catch (error) {
          await transport.close().catch(() => undefined);
          // A transport that was already dead reports no close of its own.
          if (session.isOpen) session.abandonTransport();
          throw error;
        }
      },
      // A transport with sessions (HTTP) clears its id when the server forgot it; with an id, someone already opened a new one.
      reinitialize: () => (this.transport?.sessionId !== undefined ? Promise.resolve() : this.reestablish()),
      dropTransport: () => {
        const transport = this.transport;
        if (!session.isOpen) return;
        session.abandonTransport();
        transport?.close().catch(() => undefined);
      },
      closedForGood: () => {
        this.listen.close();
        this.onclose?.();
      },
    };
  }

  private extensionHost(recovery: ClientRecovery): ClientSessionHost {
    const session = this;
    return {
      session,
      operations: this.operations,
      get isOpen() {
        return session.isOpen;
      },
      recovery,
      skipStreamResume: (requestId: RequestId) => this.transport?.skipStreamResume?.(requestId),
      resendAs: (op: OutboundOperation, method: string, params: JsonObject | undefined) =>
        this.resendAs(op, method, params),
      transmit: (message: JsonRpcMessage, relatedRequestId?: RequestId) => this.transmit(message, relatedRequestId),
      request: (method: string, params: JsonObject | undefined, options?: RequestOptions) =>
        this.request(method, params, options),
    };
  }
}

/**
 * The SDK's own tables as a modern revision's, when they are one: an SDK generated from the 2026-07-28 schema alone
 * has `server/discover` and no `initialize` among the requests it sends, and no other tables to pass.
 */
function ownRevision(outbound: DispatchTable | undefined): RevisionTableMap | undefined {
  if (outbound === undefined || !Object.hasOwn(outbound, DISCOVER) || Object.hasOwn(outbound, INITIALIZE)) return;
  return { [MODERN_PROTOCOL_VERSIONS[0]!]: { inbound: outbound } };
}

/** A pin must be a revision this client speaks (a modern one needs its tables). */
function checkEraOption(era: EraOption, modern: readonly string[], legacy: readonly string[]): void {
  if (era === "auto" || era === "legacy") return;
  if (typeof era !== "object" || era === null || typeof era.pin !== "string")
    throw new TypeError(`era must be "auto", "legacy" or { pin: "<revision>" }, got ${JSON.stringify(era)}`);
  if (!modern.includes(era.pin) && !legacy.includes(era.pin))
    throw new RangeError(
      `era.pin ${JSON.stringify(era.pin)} is not a revision this client speaks (${[...modern, ...legacy].join(", ")})`,
    );
}
