// McpServer's prompts: their definitions, typed arguments, and prompts/get.
import { ErrorCode, RpcError, isPlainObject as isObject, type JsonObject } from "../rpc/jsonrpc.js";
import type { McpContext } from "./context.js";
import type { McpGetPromptResult, McpIcon, McpPromptArgument } from "./types.js";
import { defined, handlerResult } from "./results.js";

export interface McpPromptConfig<A extends readonly McpPromptArgument[]> {
  title?: string;
  description?: string;
  arguments?: A;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Prompt arguments by name: required ones are strings, others may be missing. */
export type PromptArguments<A extends readonly McpPromptArgument[]> = Simplify<
  { [P in A[number] as P extends { required: true } ? P["name"] : never]: string } & {
    [P in A[number] as P extends { required: true } ? never : P["name"]]?: string;
  }
>;

export type McpPromptHandler<A> = (
  args: A,
  ctx: McpContext,
) => McpGetPromptResult | string | Promise<McpGetPromptResult | string>;

export interface PromptEntry {
  readonly definition: JsonObject;
  readonly required: readonly string[];
  readonly get: McpPromptHandler<never>;
}

export function promptEntry<A extends readonly McpPromptArgument[]>(
  name: string,
  config: McpPromptConfig<A>,
  get: McpPromptHandler<PromptArguments<A>>,
): PromptEntry {
  const args = config.arguments === undefined ? undefined : config.arguments.map((a) => defined({ ...a }));
  return {
    definition: defined({
      name,
      title: config.title,
      description: config.description,
      arguments: args,
      icons: config.icons,
      _meta: config._meta,
    }),
    required: (config.arguments ?? []).filter((a) => a.required === true).map((a) => a.name),
    get: get as McpPromptHandler<never>,
  };
}

/** prompts/get: missing required arguments are refused with -32602 before the prompt's handler runs. */
export async function getPrompt(
  prompts: ReadonlyMap<string, PromptEntry>,
  params: JsonObject | undefined,
  ctx: McpContext,
): Promise<JsonObject> {
  const name = params?.name;
  const prompt = typeof name === "string" ? prompts.get(name) : undefined;
  if (prompt === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${String(name)}`, { name });
  const args = isObject(params!.arguments) ? params!.arguments : {};
  const missing = prompt.required.filter((a) => typeof args[a] !== "string");
  if (missing.length > 0) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Missing required argument(s) for prompt ${name}: ${missing.join(", ")}`,
      {
        missing,
      },
    );
  }
  return handlerResult(
    await prompt.get(args as never, ctx),
    "messages",
    (text) => ({ messages: [{ role: "user", content: { type: "text", text } }] }),
    () => `Prompt ${name} produced something other than a GetPromptResult`,
  );
}
