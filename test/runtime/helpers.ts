// Hand-written dispatch tables and wiring helpers for the runtime tests (no generated code involved).
import type { DispatchTable, MethodSpec, ValidationIssue } from "../../runtime/rpc/dispatch.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import type { SendOptions, Transport } from "../../runtime/rpc/transport.js";
import { Session, type SessionOptions } from "../../runtime/rpc/session/session.js";
import { sessionKit } from "../kit/sessions.js";
import { createInMemoryPair, type InMemoryTransport } from "../../runtime/transports/in-memory.js";

const isObj = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A spec from a list of [pointer, check, message] rules; explain reports every failing rule. */
function spec(
  kind: "request" | "notification",
  name: string,
  rules: [pointer: string, check: (p: JsonObject) => boolean, message: string][],
  optionalParams: boolean,
  result?: (r: unknown) => ValidationIssue[],
): MethodSpec {
  const explainParams = (params: unknown): ValidationIssue[] => {
    if (params === undefined) return optionalParams ? [] : [{ pointer: "", message: "params are required" }];
    if (!isObj(params)) return [{ pointer: "", message: "params must be an object" }];
    return rules.filter(([, check]) => !check(params)).map(([pointer, , message]) => ({ pointer, message }));
  };
  return {
    kind,
    paramsType: `${name}Params`,
    resultType: kind === "request" ? `${name}Result` : undefined,
    isParams: (p) => explainParams(p).length === 0,
    explainParams,
    isResult: result === undefined ? undefined : (r) => result(r).length === 0,
    explainResult: result,
  };
}

/** The spec of a method the receiver must advertise `capability` for (the generated tables say it per method). */
const withCapability = (capability: string, s: MethodSpec): MethodSpec => ({ ...s, capability });

const anyResult = (r: unknown): ValidationIssue[] =>
  isObj(r) ? [] : [{ pointer: "", message: "result must be an object" }];

export const pingSpec = spec("request", "Ping", [], true, anyResult);
export const toolsCallSpec = withCapability(
  "tools",
  spec(
    "request",
    "CallTool",
    [
      ["/name", (p) => typeof p.name === "string", "must be a string"],
      ["/arguments", (p) => p.arguments === undefined || isObj(p.arguments), "must be an object"],
    ],
    false,
    (r) => (isObj(r) && Array.isArray(r.content) ? [] : [{ pointer: "/content", message: "must be an array" }]),
  ),
);
export const toolsListSpec = withCapability("tools", spec("request", "ListTools", [], true, anyResult));
export const initializeSpec = spec(
  "request",
  "Initialize",
  [
    ["/protocolVersion", (p) => typeof p.protocolVersion === "string", "must be a string"],
    ["/capabilities", (p) => isObj(p.capabilities), "must be an object"],
    ["/clientInfo", (p) => isObj(p.clientInfo), "must be an object"],
  ],
  false,
  (r) =>
    isObj(r) && typeof r.protocolVersion === "string"
      ? []
      : [{ pointer: "/protocolVersion", message: "must be a string" }],
);
export const samplingSpec = withCapability(
  "sampling",
  spec(
    "request",
    "CreateMessage",
    [["/messages", (p) => Array.isArray(p.messages), "must be an array"]],
    false,
    anyResult,
  ),
);
export const progressSpec = spec(
  "notification",
  "ProgressNotification",
  [
    [
      "/progressToken",
      (p) => typeof p.progressToken === "string" || typeof p.progressToken === "number",
      "must be a string or integer",
    ],
    ["/progress", (p) => typeof p.progress === "number", "must be a number"],
  ],
  false,
);
export const cancelledSpec = spec("notification", "CancelledNotification", [], false);
export const initializedSpec = spec("notification", "InitializedNotification", [], true);
export const messageSpec = spec(
  "notification",
  "LoggingMessageNotification",
  [["/level", (p) => typeof p.level === "string", "must be a string"]],
  false,
);

/** What a client sends / a server receives. */
export const clientToServer: DispatchTable = {
  ping: pingSpec,
  initialize: initializeSpec,
  "tools/call": toolsCallSpec,
  "tools/list": toolsListSpec,
  "resources/subscribe": withCapability("resources.subscribe", spec("request", "Subscribe", [], false, anyResult)),
  "notifications/progress": progressSpec,
  "notifications/cancelled": cancelledSpec,
  "notifications/initialized": initializedSpec,
};

/** What a server sends / a client receives. */
export const serverToClient: DispatchTable = {
  ping: pingSpec,
  "sampling/createMessage": samplingSpec,
  "roots/list": withCapability("roots", spec("request", "ListRoots", [], true, anyResult)),
  "notifications/progress": progressSpec,
  "notifications/cancelled": cancelledSpec,
  "notifications/message": messageSpec,
};

export interface Sent {
  message: JsonRpcMessage;
  options?: SendOptions;
}

/** Record everything a transport sends, in order, without changing behaviour. */
export function tap(transport: Transport): Sent[] {
  const log: Sent[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    log.push({ message, options });
    return send(message, options);
  };
  return log;
}

/** A plain client Session and server Session over an in-memory pair, both started. */
export async function sessionPair(
  serverOptions: Partial<SessionOptions> = {},
  clientOptions: Partial<SessionOptions> = {},
): Promise<{
  client: Session;
  server: Session;
  clientWire: Sent[];
  serverWire: Sent[];
  clientEnd: InMemoryTransport;
  serverEnd: InMemoryTransport;
}> {
  const [clientEnd, serverEnd] = createInMemoryPair({ serverInfo: { principal: "alice" } });
  const clientWire = tap(clientEnd);
  const serverWire = tap(serverEnd);
  const server = session("server", serverOptions);
  const client = session("client", clientOptions);
  await server.connect(serverEnd);
  await client.connect(clientEnd);
  return { client, server, clientWire, serverWire, clientEnd, serverEnd };
}

/** A Session on the server end and a raw transport on the other, to speak arbitrary frames at it. */
export async function rawPeer(serverOptions: Partial<SessionOptions> = {}): Promise<{
  server: Session;
  raw: InMemoryTransport;
  serverEnd: InMemoryTransport;
  received: unknown[];
  next: () => Promise<unknown>;
}> {
  const [raw, serverEnd] = createInMemoryPair();
  const server = session("server", serverOptions);
  const received: unknown[] = [];
  const waiters: ((v: unknown) => void)[] = [];
  raw.onmessage = (m) => {
    const w = waiters.shift();
    if (w) w(m);
    else received.push(m);
  };
  await raw.start();
  await server.connect(serverEnd);
  const next = (): Promise<unknown> =>
    received.length > 0 ? Promise.resolve(received.shift()) : new Promise((resolve) => waiters.push(resolve));
  return { server, raw, serverEnd, received, next };
}
export const { session, serverSession, clientSession } = sessionKit({ clientToServer, serverToClient });
