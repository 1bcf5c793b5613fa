// Structural MCP shapes the high-level server works with, and argument types inferred from a tool's JSON Schema.
import type { JsonObject } from "../rpc/jsonrpc.js";

// These mirror the schema's types closely enough that the generated SDK's values fit them, without the runtime
// importing generated/. They carry no index signatures, so object literals are checked for misspelled members.

export type McpRole = "user" | "assistant";

export interface McpAnnotations {
  audience?: McpRole[];
  priority?: number;
  lastModified?: string;
}

export interface McpIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
}

export interface McpTextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: JsonObject;
}

export interface McpBlobResourceContents {
  uri: string;
  mimeType?: string;
  /** Base64. */
  blob: string;
  _meta?: JsonObject;
}

export type McpResourceContents = McpTextResourceContents | McpBlobResourceContents;

export type McpContent =
  | { type: "text"; text: string; annotations?: McpAnnotations; _meta?: JsonObject }
  | { type: "image"; data: string; mimeType: string; annotations?: McpAnnotations; _meta?: JsonObject }
  | { type: "audio"; data: string; mimeType: string; annotations?: McpAnnotations; _meta?: JsonObject }
  | {
      type: "resource_link";
      uri: string;
      name: string;
      title?: string;
      description?: string;
      mimeType?: string;
      size?: number;
      icons?: McpIcon[];
      annotations?: McpAnnotations;
      _meta?: JsonObject;
    }
  | { type: "resource"; resource: McpResourceContents; annotations?: McpAnnotations; _meta?: JsonObject };

/** What a tool handler returns: a CallToolResult, or a string as shorthand for one text block. */
export interface McpToolResult {
  content: McpContent[];
  structuredContent?: JsonObject;
  isError?: boolean;
  _meta?: JsonObject;
}

export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpReadResourceResult {
  contents: McpResourceContents[];
  _meta?: JsonObject;
}

export interface McpPromptMessage {
  role: McpRole;
  content: McpContent;
}

export interface McpGetPromptResult {
  description?: string;
  messages: McpPromptMessage[];
  _meta?: JsonObject;
}

export interface McpPromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

export { LOGGING_LEVELS, type McpLoggingLevel } from "../mcp/logging.js";

// ---- sampling, elicitation, roots: what a tool may ask the client for ------------------------------------

export interface McpSamplingMessage {
  role: McpRole;
  content: McpContent | McpContent[] | JsonObject;
  _meta?: JsonObject;
}

export interface McpCreateMessageParams {
  messages: McpSamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  includeContext?: "none" | "thisServer" | "allServers";
  modelPreferences?: JsonObject;
  metadata?: JsonObject;
  tools?: JsonObject[];
  toolChoice?: JsonObject;
  _meta?: JsonObject;
}

export interface McpCreateMessageResult {
  role: McpRole;
  content: McpContent | McpContent[] | JsonObject;
  model: string;
  stopReason?: string;
  _meta?: JsonObject;
}

export interface McpElicitParams {
  message: string;
  /** Form mode (the default): a flat object schema of primitive properties. */
  requestedSchema?: JsonObject;
  mode?: "form" | "url";
  url?: string;
  elicitationId?: string;
  _meta?: JsonObject;
}

export interface McpElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: { [key: string]: string | number | boolean | string[] };
  _meta?: JsonObject;
}

export interface McpRoot {
  uri: string;
  name?: string;
  _meta?: JsonObject;
}

export interface McpListRootsResult {
  roots: McpRoot[];
  _meta?: JsonObject;
}

// ---- JSON Schema, and the argument type a literal schema describes -----------------------------------------

export type JsonSchemaTypeName = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

/** The part of JSON Schema the server understands itself; other keywords pass through to the client untouched. */
export interface JsonSchema {
  type?: JsonSchemaTypeName | readonly JsonSchemaTypeName[];
  properties?: { readonly [name: string]: JsonSchema };
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: readonly unknown[];
  const?: unknown;
  description?: string;
  [keyword: string]: unknown;
}

/** A tool's input or output schema: the spec requires an object schema at the top. */
export interface ObjectJsonSchema extends JsonSchema {
  type: "object";
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type TypeFromName<N> = N extends "string"
  ? string
  : N extends "number" | "integer"
    ? number
    : N extends "boolean"
      ? boolean
      : N extends "null"
        ? null
        : N extends "array"
          ? unknown[]
          : N extends "object"
            ? { [key: string]: unknown }
            : unknown;

type ObjectFromProperties<P, R> = Simplify<
  { -readonly [K in keyof P & R]: FromSchema<P[K]> } & { -readonly [K in Exclude<keyof P, R>]?: FromSchema<P[K]> }
>;

/**
 * The TypeScript type of values a schema accepts, for schemas written as literals (a `const` type parameter
 * keeps them literal). Covers type, properties/required, items, enum and const; anything else is `unknown`.
 */
export type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { type: "object"; properties: infer P }
      ? ObjectFromProperties<P, S extends { required: readonly (infer R)[] } ? R : never>
      : S extends { type: "array"; items: infer I }
        ? FromSchema<I>[]
        : S extends { type: infer N }
          ? N extends readonly (infer M)[]
            ? TypeFromName<M>
            : TypeFromName<N>
          : unknown;

/** A tool's argument type: inferred from a literal schema, else any JSON object. */
export type ToolArguments<S> =
  unknown extends FromSchema<S>
    ? { [key: string]: unknown }
    : FromSchema<S> extends { [key: string]: unknown }
      ? FromSchema<S>
      : { [key: string]: unknown };
