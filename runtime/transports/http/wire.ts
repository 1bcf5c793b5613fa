// Shared HTTP wire details of the Streamable HTTP transport: header names, shape checks, error bodies, ids, byte counts.
import { isRequestId, type JsonRpcMessage, type RequestId } from "../../rpc/jsonrpc.js";
import { isPlainObject } from "../../rpc/jsonrpc.js";

export const SESSION_HEADER = "mcp-session-id";
export const PROTOCOL_VERSION_HEADER = "mcp-protocol-version";
export const LAST_EVENT_ID_HEADER = "last-event-id";
/** MCP 2026-07-28's request headers mirrored from the body: the method, the name it acts on, tool parameters. */
export const METHOD_HEADER = "mcp-method";
export const NAME_HEADER = "mcp-name";
export const PARAM_HEADER_PREFIX = "mcp-param-";

/** The version a server assumes when a client sends no MCP-Protocol-Version header (spec, 2025-11-25). */
export const DEFAULT_ASSUMED_PROTOCOL_VERSION = "2025-03-26";

export type MessageKind = "request" | "notification" | "response";

/** The kind of a JSON-RPC 2.0 message by its envelope alone, or undefined when it is not one. */
export function classifyMessage(value: unknown): MessageKind | undefined {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0") return undefined;
  if (typeof value.method === "string") {
    if (value.params !== undefined && !isPlainObject(value.params)) return undefined;
    if (!("id" in value)) return "notification";
    return isRequestId(value.id) ? "request" : undefined;
  }
  const hasResult = "result" in value;
  const hasError = "error" in value;
  if (hasResult === hasError) return undefined;
  if (hasResult && !isPlainObject(value.result)) return undefined;
  if (hasError) {
    const e = value.error;
    if (!isPlainObject(e) || typeof e.code !== "number" || typeof e.message !== "string") return undefined;
    // An error for an unreadable request has no id.
    if ("id" in value && value.id !== null && !isRequestId(value.id)) return undefined;
    return "response";
  }
  return isRequestId(value.id) ? "response" : undefined;
}

/** A map key for a request id that keeps 1 and "1" apart. */
export function requestKey(id: RequestId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}

/** The id of a request; undefined for a notification or a response. */
export function requestIdOf(message: JsonRpcMessage): RequestId | undefined {
  return "method" in message && "id" in message ? (message as { id: RequestId }).id : undefined;
}

export function responseId(message: JsonRpcMessage): RequestId | undefined {
  return "method" in message ? undefined : (message as { id?: RequestId }).id;
}

/** Body of an HTTP error reply: a JSON-RPC error response, with the refused request's id and data when given. */
export function errorBody(code: number, message: string, id?: RequestId, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify(id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error });
}

/** The media type of a Content-Type or Accept entry: lower-cased, parameters dropped. */
export function mediaTypeOf(value: string): string {
  return value.split(";")[0].trim().toLowerCase();
}

/** Media types in an Accept header, lower-cased, parameters dropped. */
export function acceptedTypes(accept: string | undefined): string[] {
  if (!accept) return [];
  return accept
    .split(",")
    .map(mediaTypeOf)
    .filter((t) => t.length > 0);
}

/** Whether an Accept header lists every one of `types`, by name or wildcard (the header is parsed once). */
export function accepts(accept: string | undefined, ...types: string[]): boolean {
  const listed = acceptedTypes(accept);
  return types.every((type) => {
    const major = type.split("/")[0];
    return listed.some((t) => t === type || t === "*/*" || t === `${major}/*`);
  });
}

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && mediaTypeOf(contentType) === "application/json";
}

/** Whether `name` is an HTTP field name (RFC 9110 token), in either case. */
export function isHeaderName(name: string): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);
}

/** Visible ASCII only (0x21-0x7E), as the spec requires of session ids. */
export function isVisibleAscii(value: string): boolean {
  return value.length > 0 && /^[\x21-\x7e]+$/.test(value);
}

/**
 * `bytes` random bytes as base64url without padding, from the Web Crypto API that browsers, workers and Node
 * (20 and later, as `globalThis.crypto`) all have.
 */
export function randomId(bytes: number): string {
  const data = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  let binary = "";
  for (const byte of data) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Node's Buffer where there is one: its byteLength counts without copying, several times faster than encoding. */
const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: "utf8"): number } }).Buffer;
const encoder = new TextEncoder();

/** The length of `text` in UTF-8 bytes. */
export function utf8ByteLength(text: string): number {
  return nodeBuffer ? nodeBuffer.byteLength(text, "utf8") : encoder.encode(text).byteLength;
}
