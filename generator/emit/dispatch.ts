// Emits dispatch.ts: per-direction method tables (kind, guards, lazily loaded explainers, type names) as const
// objects, and the type-level maps that make the stubs typed (ClientRequests, ParamsOf<M>, ResultOf<M>, ...).
import type { MessageModel, Model } from "../model.js";
import { messagesFrom, paramsGuardName, resultType, taskMethods } from "../model.js";
import { header } from "./header.js";

function entry(m: MessageModel): string {
  const p = paramsGuardName(m);
  const isParams = m.paramsRequired ? `is${p}` : `(p: unknown) => p === undefined || is${p}(p)`;
  const explainParams = m.paramsRequired ? `explain("explain${p}")` : `explain("explain${p}", true)`;
  const results = m.results ?? [];
  // A union result is valid when any member is, so its guard is the members' guards or-ed together.
  const isResult =
    results.length === 1 ? `is${results[0]}` : `(r: unknown) => ${results.map((r) => `is${r}(r)`).join(" || ")}`;
  const explainResult =
    results.length === 1
      ? `explain("explain${results[0]}")`
      : `explainAny(${results.map((r) => JSON.stringify(`explain${r}`)).join(", ")})`;
  const fields = [
    `kind: ${JSON.stringify(m.kind)}`,
    `paramsType: ${JSON.stringify(m.paramsType)}`,
    ...(results.length ? [`resultType: ${JSON.stringify(resultType(m))}`] : []),
    `isParams: ${isParams}`,
    `explainParams: ${explainParams}`,
    ...(results.length ? [`isResult: ${isResult}`, `explainResult: ${explainResult}`] : []),
    ...(m.capability !== undefined ? [`capability: ${JSON.stringify(m.capability)}`] : []),
    ...(m.task
      ? [
          `isTaskResult: is${m.task.result}`,
          `explainTaskResult: explain("explain${m.task.result}")`,
          `taskCapability: ${JSON.stringify(m.task.capability)}`,
        ]
      : []),
  ];
  return `  ${JSON.stringify(m.method)}: { ${fields.join(", ")} },`;
}

function typeMap(name: string, doc: string, messages: MessageModel[]): string[] {
  return [
    `/** ${doc} */`,
    `export interface ${name} {`,
    ...messages.map(
      (m) =>
        `  ${JSON.stringify(m.method)}: { params: ${m.paramsType}; paramsRequired: ${m.paramsRequired}${m.results ? `; result: ${resultType(m)}` : ""} };`,
    ),
    "}",
  ];
}

function taskUnion(name: string, doc: string, methods: MessageModel[]): string[] {
  const members = methods.map((m) => JSON.stringify(m.method)).join(" | ") || "never";
  return [`/** ${doc} */`, `export type ${name} = ${members};`];
}

export function emitDispatch(model: Model, runtimeImport: string): string {
  const guardNames = new Set<string>();
  const typeNames = new Set<string>();
  const inputs = model.inputRequests ?? [];
  for (const m of [...model.messages, ...inputs]) {
    guardNames.add(paramsGuardName(m));
    typeNames.add(m.message);
    if (m.params.ref) typeNames.add(m.params.ref);
    for (const r of [...(m.results ?? []), ...(m.task ? [m.task.result] : [])]) {
      guardNames.add(r);
      typeNames.add(r);
    }
  }
  const unionResults = [...model.messages, ...inputs].some((m) => (m.results?.length ?? 0) > 1);
  const sorted = (s: Set<string>) => [...s].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const guards = sorted(guardNames);
  const c2s = messagesFrom(model, "client");
  const s2c = messagesFrom(model, "server");
  const lines = [
    header(model, "Dispatch tables per direction and the type-level method maps."),
    `import type { DispatchTable, ValidationIssue } from "${runtimeImport}";`,
    `import { ${guards.map((g) => `is${g}`).join(", ")} } from "./guards.js";`,
    `import type { ${sorted(typeNames).join(", ")} } from "./types.js";`,
    `export { isJSONRPCMessage as isMessage } from "./guards.js";`,
    "",
    "// Only a message that fails its fast guard needs the detailed validators (the schema's table and its interpreter):",
    "// they load on first use, through import(), so bundlers put them in a chunk of their own, off the entry.",
    `type Explainers = typeof import("./validators.js");`,
    "let explainers: Promise<Explainers> | undefined;",
    "/** An explainer that loads the validators module on first call; `optional` params may be absent. */",
    "function explain(name: keyof Explainers, optional = false): (value: unknown) => ValidationIssue[] | Promise<ValidationIssue[]> {",
    "  return (value) => {",
    "    if (optional && value === undefined) return [];",
    "    // A failed load is not kept, so a later call tries again.",
    `    explainers ??= import("./validators.js").catch((error: unknown) => { explainers = undefined; throw error; });`,
    "    return explainers.then((m) => m[name](value));",
    "  };",
    "}",
    ...(unionResults
      ? [
          "",
          "/** An explainer for a result that may be any of several definitions: no issues when one of them has none. */",
          "function explainAny(...names: (keyof Explainers)[]): (value: unknown) => Promise<ValidationIssue[]> {",
          "  const each = names.map((name) => explain(name));",
          "  return async (value) => {",
          "    const found = await Promise.all(each.map((e) => e(value)));",
          "    if (found.some((issues) => issues.length === 0)) return [];",
          '    return found.flatMap((issues, i) => issues.map((issue) => ({ ...issue, message: `${issue.message} (as ${names[i]!.slice("explain".length)})` })));',
          "  };",
          "}",
        ]
      : []),
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
    ...(inputs.length
      ? [
          "/**",
          " * Requests the server may ask inside an `input_required` result (the schema's InputRequest), which the client",
          " * answers in the `inputResponses` of its retry; `capability` is the client's capability each needs.",
          " */",
          "export const inputRequests = {",
          ...inputs.map(entry),
          "} as const satisfies DispatchTable;",
          "",
        ]
      : []),
    ...typeMap(
      "ClientRequests",
      "Requests the client sends: params and result types.",
      c2s.filter((m) => m.kind === "request"),
    ),
    ...typeMap(
      "ClientNotifications",
      "Notifications the client sends.",
      c2s.filter((m) => m.kind === "notification"),
    ),
    ...typeMap(
      "ServerRequests",
      "Requests the server sends: params and result types.",
      s2c.filter((m) => m.kind === "request"),
    ),
    ...typeMap(
      "ServerNotifications",
      "Notifications the server sends.",
      s2c.filter((m) => m.kind === "notification"),
    ),
    ...(inputs.length
      ? [
          ...typeMap("InputRequestTypes", "Requests the server may ask inside an input_required result.", inputs),
          "export type InputRequestMethod = keyof InputRequestTypes;",
        ]
      : []),
    "",
    "export type ClientRequestMethod = keyof ClientRequests;",
    "export type ClientNotificationMethod = keyof ClientNotifications;",
    "export type ServerRequestMethod = keyof ServerRequests;",
    "export type ServerNotificationMethod = keyof ServerNotifications;",
    "type AnyRequests = ClientRequests & ServerRequests;",
    "type AnyNotifications = ClientNotifications & ServerNotifications;",
    "/** The params type of any method. */",
    'export type ParamsOf<M extends keyof AnyRequests | keyof AnyNotifications> = M extends keyof AnyRequests ? AnyRequests[M]["params"] : M extends keyof AnyNotifications ? AnyNotifications[M]["params"] : never;',
    "/** The result type of any request method. */",
    'export type ResultOf<M extends keyof AnyRequests> = AnyRequests[M]["result"];',
    ...taskUnion(
      "ClientTaskMethod",
      "Requests the client may send task-augmented, when the server declares their taskCapability.",
      taskMethods(model, "client"),
    ),
    ...taskUnion(
      "ServerTaskMethod",
      "Requests the server may send task-augmented, when the client declares their taskCapability.",
      taskMethods(model, "server"),
    ),
    "/** Any request that may be sent task-augmented: `tasks/result` of its task answers with `ResultOf<M>`. */",
    "export type TaskAugmentableMethod = ClientTaskMethod | ServerTaskMethod;",
    "",
  ];
  return lines.join("\n");
}
