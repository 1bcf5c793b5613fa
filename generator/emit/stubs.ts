// Emits client.ts and server.ts: typed stub classes over the runtime's Peer, rendered from templates/stub.hbs.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import Handlebars from "handlebars";
import type { MessageModel, Model } from "../model.js";
import { definitionMap, messagesFrom, resultType, taskMethods } from "../model.js";
import { header } from "./header.js";

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** First paragraph of a description, made safe inside a doc comment. */
function summary(text: string | undefined): string {
  if (!text) return "";
  return text
    .split(/\n\s*\n/)[0]!
    .replace(/\*\//g, "*\\/")
    .replace(/\n/g, "\n   * ");
}

interface StubData {
  header: string;
  runtimeImport: string;
  className: string;
  sessionClass: string;
  isClient: boolean;
  side: string;
  other: string;
  typeImports: string;
  requests: object[];
  /** Some request may be sent task-augmented: the stub imports the runtime's task requestor. */
  hasTasks: boolean;
  /** The union of this side's task-augmentable methods, naming the original request of a task's payload. */
  taskMethod: string;
  notifications: object[];
  handlers: object[];
  listeners: object[];
  /** The server passes the other revisions' tables (revisions.ts) to its sessions. */
  revisionTables: boolean;
}

function stubData(model: Model, side: "client" | "server", runtimeImport: string, revisionTables: boolean): StubData {
  const other = side === "client" ? "server" : "client";
  const defs = definitionMap(model);
  const outbound = messagesFrom(model, side);
  const inbound = messagesFrom(model, other);
  const types = new Set<string>();
  const use = (m: MessageModel) => {
    types.add(m.params.ref ?? m.message);
    for (const r of m.results ?? []) types.add(r);
    return m;
  };
  const names = new Map<string, string>();
  const claim = (name: string, method: string) => {
    const prior = names.get(name);
    if (prior) throw new Error(`stub name ${name} is used by both ${prior} and ${method}; rename one message`);
    names.set(name, method);
    return name;
  };
  const tasks = taskMethods(model, side);
  const base = (m: MessageModel) => ({
    method: m.method,
    paramsType: m.paramsType,
    paramsRequired: m.paramsRequired,
    result: resultType(m),
    doc: summary(defs.get(m.message)?.description),
  });
  return {
    header: header(model, `Typed ${side} stub over the runtime's Peer.`),
    runtimeImport,
    className: side === "client" ? "Client" : "Server",
    sessionClass: side === "client" ? "ClientSession" : "ServerSession",
    isClient: side === "client",
    side,
    other,
    requests: outbound
      .filter((m) => m.kind === "request")
      .map(use)
      .map((m) => ({
        ...base(m),
        name: claim(lowerFirst(m.stem), m.method),
        task: m.task?.capability ?? false,
        payload: m.taskPayload === true && tasks.length > 0,
      })),
    hasTasks: tasks.length > 0,
    taskMethod: side === "client" ? "ClientTaskMethod" : "ServerTaskMethod",
    notifications: outbound
      .filter((m) => m.kind === "notification")
      .map(use)
      .map((m) => ({ ...base(m), name: claim(`notify${m.stem}`, m.method) })),
    handlers: inbound
      .filter((m) => m.kind === "request")
      .map(use)
      .map((m) => ({ ...base(m), name: claim(`on${m.stem}`, m.method) })),
    listeners: inbound
      .filter((m) => m.kind === "notification")
      .map(use)
      .map((m) => ({ ...base(m), name: claim(`on${m.stem}`, m.method) })),
    revisionTables,
    typeImports: [...types].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(", "),
  };
}

export function loadStubTemplate(templatesDir: string): HandlebarsTemplateDelegate {
  const source = readFileSync(resolve(templatesDir, "stub.hbs"), "utf8");
  return Handlebars.compile(source, { noEscape: false, strict: true });
}

export function emitStub(
  model: Model,
  side: "client" | "server",
  template: HandlebarsTemplateDelegate,
  runtimeImport: string,
  revisionTables = false,
): string {
  return template(stubData(model, side, runtimeImport, revisionTables))
    .replace(/\r\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n");
}
