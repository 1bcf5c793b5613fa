// The headers a 2026-07-28 client mirrors from each request (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*), and which tools' `x-mcp-header` marks are valid.
import { isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";

/** A tool parameter mirrored into `Mcp-Param-{header}`: the chain of `properties` keys that reaches it. */
export interface MirroredParam {
  readonly path: readonly string[];
  readonly header: string;
}

/**
 * The params field each method mirrors into `Mcp-Name` (the binding's Standard Request Headers table): what the client
 * sends and the server checks.
 */
export const NAME_SOURCES: ReadonlyMap<string, string> = new Map([
  ["tools/call", "name"],
  ["resources/read", "uri"],
  ["prompts/get", "name"],
  // The Tasks extension routes by task: an intermediary sends every request for one task to the node holding it.
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"],
]);
const MARK = "x-mcp-header";
/** RFC 9110 `token` (1*tchar): what a field name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Sent as is: visible ASCII and inner spaces, nothing at either end a proxy could trim. Anything else is Base64. */
const PLAIN = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;
/** The binding's Base64 form of a header value: `=?base64?...?=`. */
export const SENTINEL_PREFIX = "=?base64?";
export const SENTINEL_SUFFIX = "?=";
const PRIMITIVE = new Set(["string", "integer", "boolean"]);
const encoder = new TextEncoder();

/**
 * A value as a header carries it: as is when it is plain visible ASCII (inner spaces allowed), else the binding's
 * `=?base64?...?=` form of its UTF-8 (also for a plain value that looks like that form, so it cannot be misread).
 */
export function encodeHeaderValue(text: string): string {
  const looksEncoded = text.startsWith(SENTINEL_PREFIX) && text.endsWith(SENTINEL_SUFFIX);
  if (PLAIN.test(text) && !looksEncoded) return text;
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return `${SENTINEL_PREFIX}${btoa(binary)}${SENTINEL_SUFFIX}`;
}

/**
 * The parameters a tool's inputSchema marks with `x-mcp-header`, or why the marks make the tool invalid (the binding
 * says a client drops such a tool): a mark must be a non-empty header token, unique without regard to case, on a
 * string, integer or boolean property reached from the root through `properties` alone.
 */
export function mirroredParams(inputSchema: unknown): readonly MirroredParam[] | string {
  const found: MirroredParam[] = [];
  const problem = collect(inputSchema, [], true, found);
  if (problem !== undefined) return problem;
  const seen = new Set<string>();
  for (const { header } of found) {
    const folded = header.toLowerCase();
    if (seen.has(folded)) return `x-mcp-header "${header}" is used twice (names compare without regard to case)`;
    seen.add(folded);
  }
  return found;
}

/** Walks every subschema: marks are collected where the chain from the root is `properties` keys only. */
function collect(schema: unknown, path: string[], reachable: boolean, out: MirroredParam[]): string | undefined {
  if (Array.isArray(schema)) {
    for (const item of schema) {
      const problem = collect(item, path, false, out);
      if (problem !== undefined) return problem;
    }
    return;
  }
  if (!isPlainObject(schema)) return;
  if (Object.hasOwn(schema, MARK)) {
    const problem = checkMark(schema, path, reachable);
    if (problem !== undefined) return problem;
    out.push({ path, header: schema[MARK] as string });
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === MARK) continue;
    if (key === "properties" && isPlainObject(value)) {
      for (const [name, property] of Object.entries(value)) {
        const problem = collect(property, [...path, name], reachable, out);
        if (problem !== undefined) return problem;
      }
      continue;
    }
    // Any other keyword's subschemas (items, anyOf, $defs, if/then...) cannot be mirrored.
    if (typeof value === "object" && value !== null) {
      const problem = collect(value, path, false, out);
      if (problem !== undefined) return problem;
    }
  }
  return;
}

function checkMark(schema: JsonObject, path: readonly string[], reachable: boolean): string | undefined {
  const header = schema[MARK];
  const where = path.length === 0 ? "the schema root" : `/${path.join("/")}`;
  if (typeof header !== "string" || header === "") return `x-mcp-header at ${where} must be a non-empty string`;
  if (!TOKEN.test(header)) return `x-mcp-header "${header}" at ${where} is not an HTTP header name token`;
  if (!reachable || path.length === 0)
    return `x-mcp-header "${header}" at ${where} is not on a property reached through properties alone`;
  const type = schema.type;
  if (typeof type !== "string" || !PRIMITIVE.has(type))
    return `x-mcp-header "${header}" at ${where} is on a ${JSON.stringify(type ?? "untyped")} property; only string, integer and boolean may be mirrored`;
  return;
}

/**
 * The headers of one request on the 2026-07-28 HTTP binding: the revision, the method, the name it acts on, and
 * `Mcp-Param-*` for the called tool's mirrored parameters that have a value (null counts as none).
 */
export function requestHeaders(
  version: string,
  method: string,
  params: JsonObject | undefined,
  mirrored: readonly MirroredParam[] | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": method };
  const field = NAME_SOURCES.get(method);
  const name = field === undefined ? undefined : params?.[field];
  if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
  if (mirrored === undefined) return headers;
  for (const { path, header } of mirrored) {
    const value = paramValueAt(params?.arguments, path);
    if (typeof value === "string") headers[`mcp-param-${header.toLowerCase()}`] = encodeHeaderValue(value);
    else if (typeof value === "boolean" || (typeof value === "number" && Number.isInteger(value)))
      headers[`mcp-param-${header.toLowerCase()}`] = String(value);
  }
  return headers;
}

/** The value at a chain of property keys, or undefined when any step is missing (null counts as missing). */
export function paramValueAt(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const key of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value === null ? undefined : value;
}
