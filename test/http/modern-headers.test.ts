// The MCP 2026-07-28 mirrored-header rules as a table: each header against the body field it mirrors, Base64 decoded.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import {
  claimsModernEra,
  decodeHeaderValue,
  headerMismatch,
  type ParamHeader,
} from "../../runtime/transports/http/modern-headers.js";

const base64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

describe("decodeHeaderValue", () => {
  // The specification's encoding examples, and the forms around them.
  it.each([
    ["us-west1", "us-west1"],
    ["=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"],
    ["=?base64?IHBhZGRlZCA=?=", " padded "],
    ["=?base64?bGluZTEKbGluZTI=?=", "line1\nline2"],
    ["=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?="],
    ["=?base64??=", ""],
    ["a b\tc", "a b\tc"],
    // The markers are case-sensitive: this is a plain value.
    ["=?BASE64?SGk=?=", "=?BASE64?SGk=?="],
    // Too short to be a sentinel (prefix and suffix would overlap).
    ["=?base64?=", "=?base64?="],
  ])("%j is %j", (header, decoded) => {
    expect(decodeHeaderValue(header)).toBe(decoded);
  });

  it.each([
    ["non-ASCII (obs-text as Node hands it over)", "caf\u00e9"],
    ["a control character", "a\u0001b"],
    ["a newline", "a\nb"],
    ["a sentinel with characters outside Base64", "=?base64?SGk*?="],
    ["a sentinel in base64url", "=?base64?_-8=?="],
    ["a sentinel whose length cannot be Base64", "=?base64?SGVsb?="],
    ["a sentinel that is not UTF-8", "=?base64?/w==?="],
    ["a sentinel with misplaced padding", "=?base64?SG=k?="],
    ["a sentinel without its padding", "=?base64?SGVsbG8?="],
    ["a sentinel with characters outside Base64 mid-way", "=?base64?SGVs!!!bG8=?="],
  ])("refuses %s", (_what, header) => {
    expect(decodeHeaderValue(header)).toBeUndefined();
  });
});

describe("claimsModernEra", () => {
  it.each([
    [{ jsonrpc: "2.0", id: 1, method: "x", params: { _meta: meta } }, true],
    [{ jsonrpc: "2.0", method: "x", params: { _meta: { "io.modelcontextprotocol/protocolVersion": 5 } } }, true],
    [{ jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: 1 } } }, false],
    [
      { jsonrpc: "2.0", id: 1, method: "x", params: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
      false,
    ],
    [{ jsonrpc: "2.0", id: 1, method: "x" }, false],
    [{ jsonrpc: "2.0", id: 1, result: { _meta: meta } }, false],
  ])("%j: %s", (message, claims) => {
    expect(claimsModernEra(message)).toBe(claims);
  });
});

const good = {
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "get_weather",
};
const call = (args: JsonObject = {}, name = "get_weather") => ({
  method: "tools/call",
  params: { name, arguments: args, _meta: meta },
});

describe("headerMismatch: the standard headers", () => {
  it.each([
    ["all three match", good, call(), undefined],
    ["Mcp-Name in the Base64 form", { ...good, "mcp-name": base64("get_weather") }, call(), undefined],
    ["a non-ASCII tool name in the Base64 form", { ...good, "mcp-name": base64("天気") }, call({}, "天気"), undefined],
    [
      "a name that looks like a sentinel, sent encoded",
      { ...good, "mcp-name": base64("=?base64?x?=") },
      call({}, "=?base64?x?="),
      undefined,
    ],
    [
      "resources/read names its uri",
      { ...good, "mcp-method": "resources/read", "mcp-name": "file:///a/b.json" },
      { method: "resources/read", params: { uri: "file:///a/b.json", _meta: meta } },
      undefined,
    ],
    [
      "prompts/get names its prompt",
      { ...good, "mcp-method": "prompts/get", "mcp-name": "greet" },
      { method: "prompts/get", params: { name: "greet", _meta: meta } },
      undefined,
    ],
    [
      "methods without a name need no Mcp-Name",
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
      { method: "tools/list", params: { _meta: meta } },
      undefined,
    ],
    [
      "a body without the name is left to the session (it refuses the params)",
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call" },
      { method: "tools/call", params: { _meta: meta } },
      undefined,
    ],
    [
      "MCP-Protocol-Version missing",
      { ...good, "mcp-protocol-version": undefined },
      call(),
      /MCP-Protocol-Version header is required/,
    ],
    [
      "MCP-Protocol-Version differs",
      { ...good, "mcp-protocol-version": "2025-11-25" },
      call(),
      /MCP-Protocol-Version header value "2025-11-25" does not match body value "2026-07-28"/,
    ],
    [
      "MCP-Protocol-Version against a body version that is not a string",
      { ...good, "mcp-protocol-version": "5" },
      {
        method: "tools/call",
        params: { name: "get_weather", _meta: { "io.modelcontextprotocol/protocolVersion": 5 } },
      },
      /MCP-Protocol-Version header value "5" does not match body value 5/,
    ],
    ["Mcp-Method missing", { ...good, "mcp-method": undefined }, call(), /Mcp-Method header is required/],
    [
      "Mcp-Method differs",
      { ...good, "mcp-method": "tools/list" },
      call(),
      /Mcp-Method header value "tools\/list" does not match body value "tools\/call"/,
    ],
    [
      "Mcp-Method differs in case (values are case-sensitive)",
      { ...good, "mcp-method": "Tools/Call" },
      call(),
      /Mcp-Method header value/,
    ],
    [
      "Mcp-Method with invalid characters",
      { ...good, "mcp-method": "tools/call\u00e9" },
      call(),
      /Mcp-Method header value has invalid characters/,
    ],
    ["Mcp-Name missing", { ...good, "mcp-name": undefined }, call(), /Mcp-Name header is required/],
    [
      "Mcp-Name differs",
      { ...good, "mcp-name": "other" },
      call(),
      /Mcp-Name header value "other" does not match body value "get_weather"/,
    ],
    [
      "Mcp-Name decodes to something else",
      { ...good, "mcp-name": base64("other") },
      call(),
      /Mcp-Name header value "other" does not match/,
    ],
    [
      "Mcp-Name with invalid characters",
      { ...good, "mcp-name": "get_weather\u00ff" },
      call(),
      /Mcp-Name header value is not a valid header value/,
    ],
    [
      "Mcp-Name in a broken Base64 form",
      { ...good, "mcp-name": "=?base64?***?=" },
      call(),
      /Mcp-Name header value is not a valid header value/,
    ],
    [
      "a Base64 sentinel is not decoded for Mcp-Method",
      { ...good, "mcp-method": base64("tools/call") },
      call(),
      /Mcp-Method header value/,
    ],
    [
      "Mcp-Name for resources/read differs from the uri",
      { ...good, "mcp-method": "resources/read", "mcp-name": "file:///a" },
      { method: "resources/read", params: { uri: "file:///b", _meta: meta } },
      /Mcp-Name header value "file:\/\/\/a" does not match body value "file:\/\/\/b"/,
    ],
  ])("%s", (_what, headers, request, expected) => {
    const problem = headerMismatch(headers, request);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });
});

describe("headerMismatch: Mcp-Param headers of x-mcp-header parameters", () => {
  const mirrors: Record<string, readonly ParamHeader[]> = {
    get_weather: [
      { path: ["region"], header: "Region" },
      { path: ["options", "limit"], header: "Limit" },
      { path: ["dry"], header: "Dry-Run" },
    ],
  };
  const headerParams = (tool: string) => mirrors[tool];
  const check = (args: JsonObject, params: Record<string, string>, name = "get_weather") =>
    headerMismatch({ ...good, "mcp-name": name, ...params }, call(args, name), headerParams);

  it.each([
    ["a string that matches", { region: "us-west1" }, { "mcp-param-region": "us-west1" }, undefined],
    [
      "a Base64 value that decodes to the string",
      { region: "Hello, 世界" },
      { "mcp-param-region": base64("Hello, 世界") },
      undefined,
    ],
    [
      "leading and trailing spaces carried in Base64",
      { region: " padded " },
      { "mcp-param-region": base64(" padded ") },
      undefined,
    ],
    ["an integer compared numerically", { options: { limit: 42 } }, { "mcp-param-limit": "42.0" }, undefined],
    ["a negative integer", { options: { limit: -7 } }, { "mcp-param-limit": "-7" }, undefined],
    ["a boolean as lower-case text", { dry: true }, { "mcp-param-dry-run": "true" }, undefined],
    ["a null value: the header is not expected", { region: null }, {}, undefined],
    ["a parameter not in the arguments: the header is not expected", {}, {}, undefined],
    ["an unrecognized Mcp-Param header is ignored", {}, { "mcp-param-other": "x" }, undefined],
    ["the value in the body but no header", { region: "us-west1" }, {}, /Mcp-Param-Region header is required/],
    [
      "a header without a value in the body",
      {},
      { "mcp-param-region": "us-west1" },
      /Mcp-Param-Region header is present but the body carries no value/,
    ],
    [
      "a header for a null value",
      { region: null },
      { "mcp-param-region": "null" },
      /Mcp-Param-Region header is present/,
    ],
    [
      "a string that differs",
      { region: "us-west1" },
      { "mcp-param-region": "eu-west1" },
      /Mcp-Param-Region header value "eu-west1" does not match body value "us-west1"/,
    ],
    [
      "a string that differs only in case",
      { region: "us-west1" },
      { "mcp-param-region": "US-WEST1" },
      /does not match/,
    ],
    [
      "an integer that differs",
      { options: { limit: 42 } },
      { "mcp-param-limit": "43" },
      /Mcp-Param-Limit header value "43" does not match body value 42/,
    ],
    ["an integer in hexadecimal", { options: { limit: 42 } }, { "mcp-param-limit": "0x2a" }, /does not match/],
    ["an empty header for an integer 0", { options: { limit: 0 } }, { "mcp-param-limit": "" }, /does not match/],
    ["a boolean in another case", { dry: true }, { "mcp-param-dry-run": "True" }, /does not match/],
    ["a boolean as a number", { dry: false }, { "mcp-param-dry-run": "0" }, /does not match/],
    [
      "an object where a primitive is annotated",
      { region: { a: 1 } },
      { "mcp-param-region": "[object Object]" },
      /does not match/,
    ],
    [
      "invalid characters",
      { region: "us-west1" },
      { "mcp-param-region": "us-west1\u00e9" },
      /Mcp-Param-Region header value is not a valid header value/,
    ],
    [
      "a plain value the client had to encode",
      { region: "=?base64?x?=" },
      { "mcp-param-region": "=?base64?x?=" },
      /not a valid header value/,
    ],
  ])("%s", (_what, args, params, expected) => {
    const problem = check(args as JsonObject, params);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  it("checks nothing for a tool the hook does not know, nor without the hook", () => {
    expect(check({ region: "us-west1" }, {}, "unknown_tool")).toBeUndefined();
    expect(headerMismatch(good, call({ region: "us-west1" }))).toBeUndefined();
  });
});
