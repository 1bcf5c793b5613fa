// McpServer's resources: fixed URIs and URI templates, their definitions, and resources/read.
import { ErrorCode, RpcError, type JsonObject } from "../rpc/jsonrpc.js";
import type { McpContext } from "./context.js";
import { compileUriTemplate, type UriTemplateMatcher } from "./uri-template.js";
import type { McpAnnotations, McpIcon, McpReadResourceResult } from "./types.js";
import { defined, handlerResult } from "./results.js";

export interface McpResourceConfig {
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: McpAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/** A resource's content: the full result, or a string as the text of one content item. */
export type McpResourceReadResult = McpReadResourceResult | string;

export type McpResourceReader = (
  uri: string,
  ctx: McpContext,
) => McpResourceReadResult | Promise<McpResourceReadResult>;
export type McpTemplateReader = (
  uri: string,
  variables: { [name: string]: string },
  ctx: McpContext,
) => McpResourceReadResult | Promise<McpResourceReadResult>;

export interface ResourceEntry {
  readonly definition: JsonObject;
  readonly mimeType: string | undefined;
  readonly read: McpResourceReader;
}

export interface TemplateEntry {
  readonly definition: JsonObject;
  readonly mimeType: string | undefined;
  readonly matcher: UriTemplateMatcher;
  readonly read: McpTemplateReader;
}

export function resourceEntry(uri: string, config: McpResourceConfig, read: McpResourceReader): ResourceEntry {
  return { definition: defined({ uri, ...config }), mimeType: config.mimeType, read };
}

export function templateEntry(uriTemplate: string, config: McpResourceConfig, read: McpTemplateReader): TemplateEntry {
  return {
    definition: defined({ uriTemplate, ...config }),
    mimeType: config.mimeType,
    matcher: compileUriTemplate(uriTemplate),
    read,
  };
}

/** The longest resource URI McpServer takes by default, in characters (UTF-16 code units); see `maxUriLength`. */
export const DEFAULT_MAX_URI_LENGTH = 8192;

/**
 * The `uri` of a resources/read, subscribe or unsubscribe request, refused with -32602 when missing or longer than
 * `maxUriLength` (0 or Infinity: no cap), before anything is looked up or matched.
 * @internal
 */
export function resourceUri(method: string, params: JsonObject | undefined, maxUriLength: number): string {
  const uri = params?.uri;
  if (typeof uri !== "string") throw new RpcError(ErrorCode.InvalidParams, `${method} needs a uri`);
  if (maxUriLength > 0 && uri.length > maxUriLength) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `${method}: the uri is ${uri.length} characters long, more than this server takes (maxUriLength ${maxUriLength})`,
      { maxUriLength },
    );
  }
  return uri;
}

/** resources/read: the fixed resource at the URI, else the first template that matches it. */
export async function readResource(
  resources: ReadonlyMap<string, ResourceEntry>,
  templates: ReadonlyMap<string, TemplateEntry>,
  params: JsonObject | undefined,
  ctx: McpContext,
  maxUriLength: number,
): Promise<JsonObject> {
  const uri = resourceUri("resources/read", params, maxUriLength);
  let result: McpResourceReadResult | undefined = undefined;
  let mimeType: string | undefined = undefined;
  const fixed = resources.get(uri);
  if (fixed !== undefined) {
    mimeType = fixed.mimeType;
    result = await fixed.read(uri, ctx);
  } else {
    for (const template of templates.values()) {
      const variables = template.matcher.match(uri);
      if (variables === undefined) continue;
      mimeType = template.mimeType;
      result = await template.read(uri, variables, ctx);
      break;
    }
    if (result === undefined) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
  }
  return handlerResult(
    result,
    "contents",
    (text) => ({ contents: [mimeType === undefined ? { uri, text } : { uri, mimeType, text }] }),
    () => `Reading ${uri} produced something other than a ReadResourceResult`,
  );
}
