// Structural MCP shapes the high-level server works with, and the argument and result types a tool's schemas imply.
import type { JsonObject } from "../rpc/jsonrpc.js";
import type { StandardInput, StandardOutput, StandardSchemaV1 } from "./standard-schema.js";

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

/**
 * What a tool handler returns: a CallToolResult, or a string as shorthand for one text block. `T` is the type of its
 * structuredContent, inferred from the tool's outputSchema.
 */
export interface McpToolResult<T = JsonObject> {
  content: McpContent[];
  structuredContent?: T;
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

/** What `type` (with properties, items) says, ignoring const, enum and the combinators. */
type FromType<S> = S extends { type: "object"; properties: infer P }
  ? ObjectFromProperties<P, S extends { required: readonly (infer R)[] } ? R : never>
  : S extends { type: "array"; items: infer I }
    ? FromSchema<I>[]
    : S extends { type: infer N }
      ? N extends readonly (infer M)[]
        ? TypeFromName<M>
        : TypeFromName<N>
      : unknown;

type LooseObject = { [key: string]: unknown };

/**
 * A schema with anyOf/oneOf: the union of its branches, narrowed by what its own `type` says. Branches that say
 * nothing a type can express (`{ required: ["a"] }`, the usual "a or b" pattern) leave the schema's own type as is.
 */
type FromBranches<S, Branches> = unknown extends Branches
  ? FromType<S>
  : unknown extends FromType<S>
    ? Branches
    : LooseObject extends FromType<S>
      ? Branches
      : FromType<S> & Branches;

/**
 * The TypeScript type of values a schema accepts, for schemas written as literals (a `const` type parameter
 * keeps them literal). Covers type, properties/required, items, enum, const, anyOf and oneOf (as unions);
 * anything else is `unknown`.
 */
export type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer B)[] }
      ? FromBranches<S, FromSchema<B>>
      : S extends { oneOf: readonly (infer B)[] }
        ? FromBranches<S, FromSchema<B>>
        : FromType<S>;

/** The object type a JSON Schema describes, else any JSON object (a schema typed `JsonSchema`, not a literal). */
type JsonArguments<S> =
  unknown extends FromSchema<S> ? LooseObject : FromSchema<S> extends LooseObject ? FromSchema<S> : LooseObject;

/** What a tool's inputSchema or outputSchema may be: a JSON Schema, or a Standard Schema v1 (zod 4, Valibot...). */
export type ToolSchema = JsonSchema | StandardSchemaV1;

/**
 * A tool handler's argument type: a Standard Schema's output type (what its validation gives back), else inferred
 * from a literal JSON Schema, else any JSON object.
 */
export type ToolArguments<S> = S extends StandardSchemaV1
  ? unknown extends StandardOutput<S>
    ? LooseObject
    : StandardOutput<S>
  : JsonArguments<S>;

/** The arguments as a client sends them, before validation: a Standard Schema's input type, else as ToolArguments. */
export type ToolInput<S> = S extends StandardSchemaV1
  ? unknown extends StandardInput<S>
    ? LooseObject
    : StandardInput<S>
  : JsonArguments<S>;

/**
 * The structuredContent a handler returns for a tool with this outputSchema: a Standard Schema's input type (its
 * validation runs on it before it is sent), else inferred from a literal JSON Schema; any JSON object without one.
 */
export type ToolStructuredContent<O> = O extends undefined ? JsonObject : ToolInput<O>;

/**
 * A tool handler's result for this outputSchema: a successful result's structuredContent is typed from it, an error
 * result's is not (the schema does not apply to it). Without an outputSchema, any McpToolResult.
 */
export type McpToolResultFor<O> = [O] extends [undefined]
  ? McpToolResult
  : (McpToolResult<ToolStructuredContent<O>> & { isError?: false }) | (McpToolResult & { isError: true });
