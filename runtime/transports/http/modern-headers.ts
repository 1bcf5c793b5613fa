// MCP 2026-07-28's mirrored request headers: each one checked against the body field it mirrors, Base64 form decoded.
import { isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import type { HeaderRecord } from "./server/exchange.js";
import { METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, PROTOCOL_VERSION_HEADER } from "./wire.js";
import { PROTOCOL_VERSION_META, claimsModernEra as paramsClaimModernEra } from "../../eras/2026-07-28/envelope.js";
import { NAME_SOURCES, SENTINEL_PREFIX, SENTINEL_SUFFIX, paramValueAt } from "../../eras/2026-07-28/request-headers.js";

/**
 * A tool parameter the tool's inputSchema marks with `x-mcp-header`: clients mirror its value into the request
 * header `Mcp-Param-{header}`, and the server checks the two agree.
 */
export interface ParamHeader {
  /** The chain of `properties` keys from the inputSchema's root to the parameter (`["region"]`). */
  readonly path: readonly string[];
  /** The `x-mcp-header` value: the header is `Mcp-Param-{header}`, its name compared case-insensitively. */
  readonly header: string;
}

/** The mirrored parameters of a tool by its name; undefined for a tool the server does not know. */
export type ParamHeadersOf = (toolName: string) => readonly ParamHeader[] | undefined;

const TOOLS_CALL = "tools/call";

/** RFC 9110 field values as the binding allows them: visible ASCII, space and tab (no obs-text). */
const PLAIN_VALUE = /^[\t\x20-\x7e]*$/;
const BASE64 = /^[A-Za-z0-9+/]*$/;
/** A decimal number as a client writes an integer (`42`, `-7`, `42.0`, `1e3`); nothing Number() alone would take. */
const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Whether a POSTed request or notification claims the modern era: its `params._meta` names a protocol version. */
export function claimsModernEra(message: unknown): boolean {
  return isPlainObject(message) && isPlainObject(message.params) && paramsClaimModernEra(message.params);
}

/**
 * A header value as the binding defines it: the text of a `=?base64?...?=` sentinel (Base64 of UTF-8), or the value
 * itself when plain. Undefined when it is not a valid value: characters outside visible ASCII, space and tab, or a
 * sentinel whose content is not Base64 of UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!PLAIN_VALUE.test(value)) return undefined;
  if (
    value.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length ||
    !value.startsWith(SENTINEL_PREFIX) ||
    !value.endsWith(SENTINEL_SUFFIX)
  )
    return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, -SENTINEL_SUFFIX.length);
  // Padded, in the standard alphabet only (not base64url): one text has one spelling, as the binding's test cases
  // require (a value without its padding is refused).
  const bare = encoded.replace(/={1,2}$/, "");
  if (!BASE64.test(bare) || encoded.length % 4 !== 0) return undefined;
  const binary = atob(bare);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Why the mirrored headers of a modern request disagree with its body, as the message of a HeaderMismatch error;
 * undefined when they agree. Checked in the specification's order: MCP-Protocol-Version, Mcp-Method, Mcp-Name,
 * then each `Mcp-Param-*` header `paramHeadersOf` names for the called tool (none without it). A body field of
 * the wrong shape is left to the session, which refuses the params themselves.
 */
export function headerMismatch(
  headers: HeaderRecord,
  request: { readonly method: string; readonly params?: JsonObject },
  paramHeadersOf?: ParamHeadersOf,
): string | undefined {
  const params = request.params ?? {};
  const meta = isPlainObject(params._meta) ? params._meta : {};
  // A body without a version is not compared: its envelope is incomplete, which the session answers (-32602).
  const version = meta[PROTOCOL_VERSION_META];
  const problem =
    (version === undefined ? undefined : exact(headers, PROTOCOL_VERSION_HEADER, "MCP-Protocol-Version", version)) ??
    exact(headers, METHOD_HEADER, "Mcp-Method", request.method);
  if (problem !== undefined) return problem;
  const nameField = NAME_SOURCES.get(request.method);
  if (nameField !== undefined && typeof params[nameField] === "string") {
    const name = mirrored(headers, NAME_HEADER, "Mcp-Name", params[nameField], true);
    if (name !== undefined) return name;
  }
  if (paramHeadersOf === undefined || request.method !== TOOLS_CALL || typeof params.name !== "string") return;
  const mirrors = paramHeadersOf(params.name);
  if (mirrors === undefined) return;
  if (!Array.isArray(mirrors)) throw new TypeError("headerParams returned something other than an array");
  for (const { path, header } of mirrors) {
    const value = paramValueAt(params.arguments, path);
    const label = `Mcp-Param-${header}`;
    const problem = mirrored(headers, PARAM_HEADER_PREFIX + header.toLowerCase(), label, value, value !== undefined);
    if (problem !== undefined) return problem;
  }
  return;
}

/** A header that must be present and equal the body value character for character (no Base64 form). */
function exact(headers: HeaderRecord, name: string, label: string, body: unknown): string | undefined {
  const value = headers[name];
  if (value === undefined) return `Header mismatch: the ${label} header is required`;
  if (!PLAIN_VALUE.test(value)) return `Header mismatch: the ${label} header value has invalid characters`;
  if (value !== body) return differs(label, value, body);
  return;
}

/**
 * A header that mirrors `body` and may use the Base64 form. `required`: the body holds a value, so the header
 * must be there; otherwise (absent or null) it must not be, since it would then disagree with the body.
 */
function mirrored(
  headers: HeaderRecord,
  name: string,
  label: string,
  body: unknown,
  required: boolean,
): string | undefined {
  const raw = headers[name];
  if (raw === undefined) return required ? `Header mismatch: the ${label} header is required` : undefined;
  if (!required) return `Header mismatch: the ${label} header is present but the body carries no value for it`;
  const value = decodeHeaderValue(raw);
  if (value === undefined) return `Header mismatch: the ${label} header value is not a valid header value`;
  if (!sameValue(value, body)) return differs(label, value, body);
  return;
}

/** Whether a decoded header value stands for `body`: strings exactly, booleans as true/false, numbers numerically. */
function sameValue(header: string, body: unknown): boolean {
  if (typeof body === "string") return header === body;
  if (typeof body === "boolean") return header === String(body);
  if (typeof body === "number") return DECIMAL.test(header) && Number(header) === body;
  // An object or array cannot be mirrored into a header, so no header value matches it.
  return false;
}

function differs(label: string, header: string, body: unknown): string {
  return `Header mismatch: ${label} header value ${quote(header)} does not match body value ${quote(body)}`;
}

/** A value for an error message: JSON, cut to a length that keeps the message readable. */
function quote(value: unknown): string {
  const text = value === undefined ? "(none)" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
