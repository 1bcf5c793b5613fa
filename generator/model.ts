// The intermediate model: every definition as a normalized node and every message with its method, direction,
// params and result. Emitters read only this.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "object" | "array";

/**
 * A normalized schema node. Exactly one of ref, anyOf, allOf or the value keywords is in use; `not` and
 * `conditional` may stand beside the value keywords (a schema that puts anyOf or allOf beside anything else is
 * split into an allOf by the normalize step).
 */
export interface SchemaNode {
  description?: string;
  /** Name of a definition. */
  ref?: string;
  anyOf?: SchemaNode[];
  /** Set on an anyOf whose members are objects told apart by one const-valued required property. */
  discriminator?: Discriminator;
  allOf?: SchemaNode[];
  /** Allowed JSON types; absent means any. "integer" is never listed beside "number". */
  types?: JsonType[];
  const?: JsonValue;
  enum?: JsonValue[];
  /** Numbers only: other types pass these. */
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  /** Checked as Ajv does by default: the quotient must be an integer below 1e21, with no tolerance for rounding. */
  multipleOf?: number;
  /** Strings only; lengths count Unicode code points, as JSON Schema says, not UTF-16 units. */
  minLength?: number;
  maxLength?: number;
  /** ECMA-262 source, compiled with the `u` flag; unanchored, as in JSON Schema. */
  pattern?: string;
  /** Arrays only. */
  minItems?: number;
  maxItems?: number;
  /** Set only when true; items compare by JSON equality (1 and 1.0 are equal, key order is not significant). */
  uniqueItems?: true;
  /** Objects only. */
  minProperties?: number;
  maxProperties?: number;
  /** Every key of an object must be valid against this node. */
  propertyNames?: SchemaNode;
  /** When the key is present, every listed key must be too. Sorted by key; each list sorted. */
  dependentRequired?: { key: string; requires: string[] }[];
  /** Must be invalid against this node. */
  not?: SchemaNode;
  /** if/then/else; absent when there is neither then nor else (an `if` alone asserts nothing). */
  conditional?: { if: SchemaNode; then?: SchemaNode; else?: SchemaNode };
  /** Kept for documentation; formats are annotations in 2020-12 and are not asserted. */
  format?: string;
  /** Sorted by name (code-unit order). */
  properties?: PropertyNode[];
  /** Sorted. */
  required?: string[];
  /**
   * Unknown keys: absent when the schema says nothing (allowed, but not part of the TypeScript type), "open"
   * when it says `{}` or `true` (allowed and typed as an index signature), "closed" for false, or a node.
   */
  additional?: "open" | "closed" | SchemaNode;
  items?: SchemaNode;
  /** Any object, written in TypeScript as `object` rather than as an index signature. */
  opaque?: true;
}

export interface PropertyNode {
  name: string;
  node: SchemaNode;
}

export interface Discriminator {
  key: string;
  /** Tag value to member index, sorted by value. */
  cases: { value: string; member: number }[];
}

export interface Definition {
  name: string;
  node: SchemaNode;
}

export type Direction = "client-to-server" | "server-to-client" | "both";

export interface MessageModel {
  method: string;
  kind: "request" | "notification";
  direction: Direction;
  /** The definition of the whole message (e.g. CallToolRequest). */
  message: string;
  /** TypeScript type of params: a definition name, or an indexed access into the message when declared inline. */
  paramsType: string;
  /** The params node (a ref to a definition, or the inline node). */
  params: SchemaNode;
  paramsRequired: boolean;
  /**
   * Requests only: the definitions the result may be, in the schema's order. Most requests have one; a union
   * (2026-07-28's `InputRequiredResult | CallToolResult`) has several, and any of them is a valid answer.
   */
  results?: string[];
  /**
   * Requests that can be task-augmented (`task` in their params): the receiver's capability that allows it, as a
   * dotted path ("tasks.requests.tools.call"), and the definition such a request is answered with instead.
   */
  task?: { capability: string; result: string };
  /**
   * The capability the receiver must advertise before a peer may send it this method, as a dotted path into its
   * capabilities ("tools", "resources.subscribe"); absent when none is needed (ping, initialize, notifications).
   */
  capability?: string;
  /** Answers with the result of the task-augmented request whose task it names (tasks/result): typed by that method. */
  taskPayload?: true;
  /** Requests only: the member of params whose value the `Mcp-Name` HTTP header carries (from the sidecar). */
  mcpName?: string;
  /** Base of the stub names: CallToolRequest -> "CallTool". */
  stem: string;
}

export interface Model {
  /** `command` regenerates the files; their headers name it (default `mcpgen generate`). */
  source: { name: string; sha256: string; command?: string };
  definitions: Definition[];
  messages: MessageModel[];
  /**
   * The requests a server may ask inside an `input_required` result (2026-07-28's InputRequest union), sorted by
   * method; absent when the schema has none. Not in `messages`: they never travel as messages of their own.
   */
  inputRequests?: MessageModel[];
}

export function definitionMap(model: Model): Map<string, SchemaNode> {
  return new Map(model.definitions.map((d) => [d.name, d.node]));
}

/** Follows refs to the node they name. */
export function resolveRef(defs: ReadonlyMap<string, SchemaNode>, node: SchemaNode): SchemaNode {
  let current = node;
  for (let hops = 0; current.ref !== undefined; hops++) {
    if (hops > 64) throw new Error(`reference cycle through ${current.ref}`);
    const next = defs.get(current.ref);
    if (!next) throw new Error(`unknown definition ${current.ref}`);
    current = next;
  }
  return current;
}

export function messagesFrom(
  model: Model,
  side: "client" | "server",
  kind?: "request" | "notification",
): MessageModel[] {
  const direction = side === "client" ? "client-to-server" : "server-to-client";
  return model.messages.filter(
    (m) => (m.direction === direction || m.direction === "both") && (kind === undefined || m.kind === kind),
  );
}

/** Requests the side may send task-augmented: those the other side may be asked to run as tasks. */
export function taskMethods(model: Model, side: "client" | "server"): MessageModel[] {
  return messagesFrom(model, side, "request").filter((m) => m.task !== undefined);
}

/** TypeScript type of a request's result: its definition, or the union of several; undefined for notifications. */
export function resultType(m: MessageModel): string | undefined {
  return m.results?.join(" | ");
}

/**
 * The messages, then the input requests whose params no message shares: the carriers of params that get a guard
 * and an explainer, each guard once.
 */
export function paramsCarriers(model: Model): MessageModel[] {
  const named = new Set(model.messages.map(paramsGuardName));
  return [...model.messages, ...(model.inputRequests ?? []).filter((m) => !named.has(paramsGuardName(m)))];
}

/** Name of the guard and validator suffix for a message's params: its definition, or `<Message>$Params` when inline. */
export function paramsGuardName(m: MessageModel): string {
  return m.params.ref ?? `${m.message}$Params`;
}

/** Node fields that hold a keyword's number as JSON Schema writes it (normalize copies them, emitters write them back). */
export const NUMBER_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
] as const;

/** Every node field that holds its keyword's value unchanged: the numbers, `pattern` and `uniqueItems`. */
export const VALUE_KEYWORDS = [...NUMBER_KEYWORDS, "pattern", "uniqueItems"] as const;

/** The keywords a SchemaNode represents (oneOf as anyOf): what the model reads, and what comparing two schemas compares. */
export const MODEL_KEYWORDS = [
  "$ref",
  "type",
  "const",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
  "$defs",
  "definitions",
  ...VALUE_KEYWORDS,
  "propertyNames",
  "dependentRequired",
  "not",
  "if",
  "then",
  "else",
] as const;
