// The pure parts of the client's 2026-07-28 support: what a failed probe is evidence of, header values, x-mcp-header marks.
import { describe, expect, it } from "vitest";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import { ConnectionClosedError, InvalidResultError, RequestTimeoutError } from "../../runtime/rpc/errors.js";
import { probeEvidence } from "../../runtime/mcp/negotiation.js";
import { encodeHeaderValue, mirroredParams, requestHeaders } from "../../runtime/eras/2026-07-28/request-headers.js";
import { decodeHeaderValue } from "../../runtime/transports/http/modern-headers.js";

const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });

describe("probeEvidence", () => {
  it.each([
    ["-32601 from the server", new RpcError(-32601, "Method not found"), "legacy"],
    ["-32602 from the server", new RpcError(-32602, "Invalid params"), "legacy"],
    ["-32000 'Server not initialized'", new RpcError(-32000, "Bad Request: Server not initialized"), "legacy"],
    ["a timeout (stdio)", new RequestTimeoutError("server/discover", 3000), "legacy"],
    ["HTTP 400 without a JSON-RPC body", httpError(400), "legacy"],
    ["HTTP 404", httpError(404), "legacy"],
    ["HTTP 405", httpError(405), "legacy"],
    ["HTTP 401", httpError(401), "none"],
    ["HTTP 403", httpError(403), "none"],
    ["HTTP 500", httpError(500), "none"],
    ["HTTP 503", httpError(503), "none"],
    ["a network failure", new TypeError("fetch failed"), "none"],
    ["the connection closed", new ConnectionClosedError(), "none"],
    ["a lost stream", new RpcError(-32000, "stream lost", { reason: "stream-lost" }), "none"],
    ["an invalid result", new InvalidResultError("server/discover", 0, {}, []), "none"],
    ["-32020 header mismatch", new RpcError(-32020, "Header mismatch"), "none"],
    ["-32021 missing capability", new RpcError(-32021, "Missing capability"), "none"],
    ["-32022 without data.supported", new RpcError(-32022, "Unsupported"), "none"],
  ])("%s: %s", (_, error, kind) => {
    expect(probeEvidence(error).kind).toBe(kind);
  });

  it("-32022 with data.supported: modern, with the revisions named", () => {
    expect(probeEvidence(new RpcError(-32022, "no", { supported: ["2026-07-28", "2025-11-25"] }))).toEqual({
      kind: "modern",
      supported: ["2026-07-28", "2025-11-25"],
    });
  });
});

describe("header values (the binding's Value Encoding table)", () => {
  it.each([
    ["us-west1", "us-west1"],
    ["us west 1", "us west 1"],
    ["", ""],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["\tindented", "=?base64?CWluZGVudGVk?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("%j -> %j, and the server's decoder gives it back", (value, header) => {
    expect(encodeHeaderValue(value)).toBe(header);
    expect(decodeHeaderValue(header)).toBe(value);
  });
});

describe("x-mcp-header marks", () => {
  const tool = (properties: object, extra: object = {}) => ({ type: "object", properties, ...extra });
  it.each([
    ["empty name", tool({ v: { type: "string", "x-mcp-header": "" } })],
    ["on an object", tool({ v: { type: "object", "x-mcp-header": "V" } })],
    ["on an array", tool({ v: { type: "array", "x-mcp-header": "V" } })],
    ["on a number", tool({ v: { type: "number", "x-mcp-header": "V" } })],
    ["untyped", tool({ v: { "x-mcp-header": "V" } })],
    ["a space in the name", tool({ v: { type: "string", "x-mcp-header": "My V" } })],
    ["a colon in the name", tool({ v: { type: "string", "x-mcp-header": "V:1" } })],
    ["non-ASCII name", tool({ v: { type: "string", "x-mcp-header": "Région" } })],
    [
      "twice, another case",
      tool({ a: { type: "string", "x-mcp-header": "V" }, b: { type: "string", "x-mcp-header": "v" } }),
    ],
    ["under items", tool({ l: { type: "array", items: { type: "string", "x-mcp-header": "V" } } })],
    ["under anyOf", tool({}, { anyOf: [tool({ v: { type: "string", "x-mcp-header": "V" } })] })],
    ["in $defs", tool({}, { $defs: { d: { type: "string", "x-mcp-header": "V" } } })],
    ["on the root", { type: "object", "x-mcp-header": "V" }],
  ])("invalid: %s", (_, schema) => {
    expect(typeof mirroredParams(schema)).toBe("string");
  });

  it("valid: nested properties, integer and boolean; the headers carry what has a value (null and absent omitted)", () => {
    const params = mirroredParams(
      tool({
        region: { type: "string", "x-mcp-header": "Region" },
        opts: tool({ n: { type: "integer", "x-mcp-header": "N" }, on: { type: "boolean", "x-mcp-header": "On" } }),
      }),
    );
    expect(params).toEqual([
      { path: ["region"], header: "Region" },
      { path: ["opts", "n"], header: "N" },
      { path: ["opts", "on"], header: "On" },
    ]);
    const headers = requestHeaders(
      "2026-07-28",
      "tools/call",
      { name: "t", arguments: { region: null, opts: { n: -7, on: false } } },
      params as never,
    );
    expect(headers).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "t",
      "mcp-param-n": "-7",
      "mcp-param-on": "false",
    });
  });
});
