// Compile-only ties between runtime/server/types.ts and generated/types.ts: a change on either side that the other does not follow fails the typecheck.
import type * as G from "../../generated/types.js";
import type * as R from "../../runtime/server/types.js";
import type * as T from "../../runtime/eras/2025-11-25/tasks/protocol.js";

// The runtime keeps its own copies of these shapes so that it never imports generated/ (the generated SDK stands
// on the runtime, not the other way round). Nothing else holds the copies to the schema, so each is tied here to
// its generated counterpart: both directions of assignability, and the member names. A member added, dropped,
// renamed or retyped on one side only is a compile error in `npm run typecheck`. Where the copy differs on
// purpose, the difference is named at the check, with the reason.

/** Values of `A` are values of `B`. */
type Fits<A, B> = [A] extends [B] ? true : false;
/** The member names of `A` that `B` lacks (never when there are none). */
type Extra<A, B> = Exclude<keyof A, keyof B>;
/**
 * `T` without its index signature. The schema lets results carry members it does not name; the runtime's copies
 * name only the declared ones (no index signature, so a misspelled member in an object literal is an error).
 */
type Declared<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * The runtime type `Rt` and the generated `Gen` are the same shape: each fits the other and both name the same
 * members, except `Omitted` (members of `Gen` the runtime leaves out) and `Opaque` (members both name, whose
 * value the runtime passes through as plain JSON without looking inside, so only their presence is compared).
 */
type Tied<Rt, Gen, Omitted extends PropertyKey = never, Opaque extends PropertyKey = never> = [
  Fits<Omit<Rt, Opaque>, Omit<Gen, Opaque>>,
  Fits<Omit<Gen, Omitted | Opaque>, Omit<Rt, Opaque>>,
  [Extra<Rt, Gen>] extends [never] ? true : { runtimeOnly: Extra<Rt, Gen> },
  [Exclude<Extra<Gen, Rt>, Omitted>] extends [never] ? true : { generatedOnly: Exclude<Extra<Gen, Rt>, Omitted> },
  // An omission or opaque member that no longer exists on the generated side is stale: it must be dropped here.
  [Exclude<Omitted | Opaque, keyof Gen>] extends [never]
    ? true
    : { notInGenerated: Exclude<Omitted | Opaque, keyof Gen> },
];

/** Compiles only when every check in `T` is `true`. */
type Holds<T extends readonly true[]> = T;
/** Compiles only when `T` is `true`. */
type Is<T extends true> = T;

type ContentOf<K extends R.McpContent["type"]> = Extract<R.McpContent, { type: K }>;
type ElicitModes = G.ElicitRequestFormParams | G.ElicitRequestURLParams;

export type Checks = [
  // String unions: the same members exactly.
  Is<Fits<R.McpRole, G.Role>>,
  Is<Fits<G.Role, R.McpRole>>,
  Is<Fits<R.McpLoggingLevel, G.LoggingLevel>>,
  Is<Fits<G.LoggingLevel, R.McpLoggingLevel>>,

  Holds<Tied<R.McpAnnotations, G.Annotations>>,
  Holds<Tied<R.McpIcon, G.Icon>>,
  Holds<Tied<R.McpTextResourceContents, G.TextResourceContents>>,
  Holds<Tied<R.McpBlobResourceContents, G.BlobResourceContents>>,
  Is<Fits<R.McpResourceContents, G.TextResourceContents | G.BlobResourceContents>>,
  Is<Fits<G.TextResourceContents | G.BlobResourceContents, R.McpResourceContents>>,

  // Content: every member of the union on its own (keyof a union is only what its members share), then the union.
  Holds<Tied<ContentOf<"text">, G.TextContent>>,
  Holds<Tied<ContentOf<"image">, G.ImageContent>>,
  Holds<Tied<ContentOf<"audio">, G.AudioContent>>,
  Holds<Tied<ContentOf<"resource_link">, G.ResourceLink>>,
  Holds<Tied<ContentOf<"resource">, G.EmbeddedResource>>,
  Is<Fits<R.McpContent, G.ContentBlock>>,
  Is<Fits<G.ContentBlock, R.McpContent>>,

  // isPending is the async-tools layer's answer to tools/async/get, never what a tool handler returns.
  Holds<Tied<R.McpToolResult, Declared<G.CallToolResult>, "isPending">>,
  // preferAsync is read by the async-tools client from the generated Tool; McpServer tools do not set it.
  Holds<Tied<R.McpToolAnnotations, G.ToolAnnotations, "preferAsync">>,
  Holds<Tied<R.McpReadResourceResult, Declared<G.ReadResourceResult>>>,
  Holds<Tied<R.McpPromptMessage, G.PromptMessage>>,
  Holds<Tied<R.McpGetPromptResult, Declared<G.GetPromptResult>>>,
  Holds<Tied<R.McpPromptArgument, G.PromptArgument>>,

  // Sampling: the runtime relays what the client sends (tool use and tool results included) without reading
  // the content blocks, nor the model preferences, metadata, tools or tool choice; task-augmented sampling is
  // not offered by the runtime.
  Holds<Tied<R.McpSamplingMessage, G.SamplingMessage, never, "content">>,
  Holds<
    Tied<
      R.McpCreateMessageParams,
      G.CreateMessageRequestParams,
      "task",
      "modelPreferences" | "metadata" | "tools" | "toolChoice" | "messages"
    >
  >,
  // Its messages are the sampling messages tied above.
  Is<Fits<R.McpCreateMessageParams["messages"], R.McpSamplingMessage[]>>,
  Holds<Tied<R.McpCreateMessageResult, Declared<G.CreateMessageResult>, never, "content">>,

  // Elicitation: the runtime has one shape for both modes, with the members of either optional. Each generated
  // mode fits it (the requested schema is passed through unread), and it names the members of both modes;
  // task-augmented elicitation is not offered by the runtime.
  Is<Fits<Omit<G.ElicitRequestFormParams, "task" | "requestedSchema">, Omit<R.McpElicitParams, "requestedSchema">>>,
  Is<Fits<Omit<G.ElicitRequestURLParams, "task">, R.McpElicitParams>>,
  Is<Fits<Exclude<keyof R.McpElicitParams, keyof G.ElicitRequestFormParams | keyof G.ElicitRequestURLParams>, never>>,
  Is<
    Fits<
      Exclude<keyof G.ElicitRequestFormParams | keyof G.ElicitRequestURLParams, keyof R.McpElicitParams | "task">,
      never
    >
  >,
  Is<Fits<R.McpElicitParams["mode"], ElicitModes["mode"]>>,
  Holds<Tied<R.McpElicitResult, Declared<G.ElicitResult>>>,

  Holds<Tied<R.McpRoot, G.Root>>,
  Holds<Tied<R.McpListRootsResult, Declared<G.ListRootsResult>>>,

  // Tasks: the runtime's copies in runtime/eras/2025-11-25/tasks/protocol.ts.
  Holds<Tied<T.TaskState, G.Task>>,
  Holds<Tied<T.CreateTaskReply, Declared<G.CreateTaskResult>>>,
  Holds<Tied<T.TaskMetadata, G.TaskMetadata>>,
  Is<Fits<T.TaskStatus, G.TaskStatus>>,
  Is<Fits<G.TaskStatus, T.TaskStatus>>,
];
