// Methods derived from a schema alone (no sidecar): its message unions plus the XRequest -> XResult naming rule.
import type { MethodEntry } from "../load.js";
import { compareCodeUnits, isObject } from "../json.js";

/** Requests whose answer is the empty result rather than `<Stem>Result`. */
export const EMPTY_RESULT_METHODS = ["logging/setLevel", "ping", "resources/subscribe", "resources/unsubscribe"] as const;

export const CONVENTION_NOTE =
  "requests paired with results by name (XRequest -> XResult); ping, logging/setLevel, resources/subscribe and resources/unsubscribe return the empty result";

export interface DerivedMethods {
  methods: MethodEntry[];
  /** What could not be derived, one line each (e.g. a request with no result of the expected name). */
  notes: string[];
}


function unionMembers(defs: Record<string, unknown>, union: string, prefix: string): string[] {
  const node = defs[union];
  if (!isObject(node) || !Array.isArray(node["anyOf"])) return [];
  return node["anyOf"]
    .map((m) => (isObject(m) && typeof m["$ref"] === "string" && m["$ref"].startsWith(prefix) ? m["$ref"].slice(prefix.length) : undefined))
    .filter((r): r is string => r !== undefined);
}

function methodOf(defs: Record<string, unknown>, message: string): string | undefined {
  const def = defs[message];
  const props = isObject(def) && isObject(def["properties"]) ? def["properties"] : undefined;
  const method = props && isObject(props["method"]) ? props["method"]["const"] : undefined;
  return typeof method === "string" ? method : undefined;
}

function paramsRef(defs: Record<string, unknown>, message: string, prefix: string): string | undefined {
  const def = defs[message] as Record<string, unknown>;
  const params = isObject(def["properties"]) ? def["properties"]["params"] : undefined;
  return isObject(params) && typeof params["$ref"] === "string" && params["$ref"].startsWith(prefix) ? params["$ref"].slice(prefix.length) : undefined;
}

/**
 * Derives the methods table from ClientRequest/ServerRequest/ClientNotification/ServerNotification: a message in
 * both the client and the server union goes both ways. `defsKey` is "$defs" (2020-12) or "definitions" (draft-07).
 */
export function deriveMethods(defs: Record<string, unknown>, defsKey: "$defs" | "definitions"): DerivedMethods {
  const prefix = `#/${defsKey}/`;
  const notes: string[] = [];
  const entries = new Map<string, MethodEntry>();
  for (const kind of ["request", "notification"] as const) {
    const suffix = kind === "request" ? "Request" : "Notification";
    const client = unionMembers(defs, `Client${suffix}`, prefix);
    const server = unionMembers(defs, `Server${suffix}`, prefix);
    for (const message of [...new Set([...client, ...server])]) {
      const method = methodOf(defs, message);
      if (method === undefined) {
        notes.push(`${message} is in a message union but has no constant "method"; left out`);
        continue;
      }
      const direction = client.includes(message) && server.includes(message) ? "both" : client.includes(message) ? "client-to-server" : "server-to-client";
      const entry: MethodEntry = { method, kind, direction, message };
      const params = paramsRef(defs, message, prefix);
      if (params !== undefined) entry.params = params;
      if (kind === "request") {
        const result = (EMPTY_RESULT_METHODS as readonly string[]).includes(method)
          ? ["EmptyResult", "Result"].find((name) => name in defs)
          : `${message.replace(/Request$/, "")}Result`;
        if (result !== undefined && result in defs) entry.result = result;
        else notes.push(`${method}: no result definition named ${result ?? "EmptyResult"} for ${message}; its result is not compared`);
      }
      entries.set(method, entry);
    }
  }
  const methods = [...entries.values()].sort((a, b) => compareCodeUnits(a.method, b.method));
  return { methods, notes };
}
