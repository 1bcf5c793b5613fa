// Emits dispatch.ts: per-direction method tables (kind, guards, validators, type names) as const objects,
// and the type-level maps that make the stubs typed (ClientRequests, ParamsOf<M>, ResultOf<M>, ...).
import type { MessageModel, Model } from "../model.js";
import { messagesFrom, paramsGuardName } from "../model.js";
import { header } from "./header.js";

function entry(m: MessageModel): string {
  const p = paramsGuardName(m);
  const isParams = m.paramsRequired ? `is${p}` : `(p: unknown) => p === undefined || is${p}(p)`;
  const explainParams = m.paramsRequired ? `explain${p}` : `(p: unknown) => (p === undefined ? [] : explain${p}(p))`;
  const fields = [
    `kind: ${JSON.stringify(m.kind)}`,
    `paramsType: ${JSON.stringify(m.paramsType)}`,
    ...(m.result ? [`resultType: ${JSON.stringify(m.result)}`] : []),
    `isParams: ${isParams}`,
    `explainParams: ${explainParams}`,
    ...(m.result ? [`isResult: is${m.result}`, `explainResult: explain${m.result}`] : []),
  ];
  return `  ${JSON.stringify(m.method)}: { ${fields.join(", ")} },`;
}

function typeMap(name: string, doc: string, messages: MessageModel[]): string[] {
  return [
    `/** ${doc} */`,
    `export interface ${name} {`,
    ...messages.map((m) => `  ${JSON.stringify(m.method)}: { params: ${m.paramsType}; paramsRequired: ${m.paramsRequired}${m.result ? `; result: ${m.result}` : ""} };`),
    "}",
  ];
}

export function emitDispatch(model: Model, runtimeImport: string): string {
  const guardNames = new Set<string>();
  const typeNames = new Set<string>();
  for (const m of model.messages) {
    guardNames.add(paramsGuardName(m));
    if (m.result) guardNames.add(m.result);
    typeNames.add(m.message);
    if (m.params.ref) typeNames.add(m.params.ref);
    if (m.result) typeNames.add(m.result);
  }
  const sorted = (s: Set<string>) => [...s].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const guards = sorted(guardNames);
  const c2s = messagesFrom(model, "client");
  const s2c = messagesFrom(model, "server");
  const lines = [
    header(model, "Dispatch tables per direction and the type-level method maps."),
    `import type { DispatchTable } from "${runtimeImport}";`,
    `import { ${guards.map((g) => `is${g}`).join(", ")} } from "./guards.js";`,
    `import { ${guards.map((g) => `explain${g}`).join(", ")} } from "./validators.js";`,
    `import type { ${sorted(typeNames).join(", ")} } from "./types.js";`,
    `export { isJSONRPCMessage as isMessage } from "./guards.js";`,
    "",
    "/** Methods the client sends and the server receives. */",
    "export const clientToServer = {",
    ...c2s.map(entry),
    "} as const satisfies DispatchTable;",
    "",
    "/** Methods the server sends and the client receives. */",
    "export const serverToClient = {",
    ...s2c.map(entry),
    "} as const satisfies DispatchTable;",
    "",
    ...typeMap("ClientRequests", "Requests the client sends: params and result types.", c2s.filter((m) => m.kind === "request")),
    ...typeMap("ClientNotifications", "Notifications the client sends.", c2s.filter((m) => m.kind === "notification")),
    ...typeMap("ServerRequests", "Requests the server sends: params and result types.", s2c.filter((m) => m.kind === "request")),
    ...typeMap("ServerNotifications", "Notifications the server sends.", s2c.filter((m) => m.kind === "notification")),
    "",
    "export type ClientRequestMethod = keyof ClientRequests;",
    "export type ClientNotificationMethod = keyof ClientNotifications;",
    "export type ServerRequestMethod = keyof ServerRequests;",
    "export type ServerNotificationMethod = keyof ServerNotifications;",
    "type AnyRequests = ClientRequests & ServerRequests;",
    "type AnyNotifications = ClientNotifications & ServerNotifications;",
    "/** The params type of any method. */",
    "export type ParamsOf<M extends keyof AnyRequests | keyof AnyNotifications> = M extends keyof AnyRequests ? AnyRequests[M][\"params\"] : M extends keyof AnyNotifications ? AnyNotifications[M][\"params\"] : never;",
    "/** The result type of any request method. */",
    "export type ResultOf<M extends keyof AnyRequests> = AnyRequests[M][\"result\"];",
    "",
  ];
  return lines.join("\n");
}
