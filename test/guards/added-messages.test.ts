// The overlay's additions (SEP-975 resumable requests, PR 617 async tool calls): a hand-written valid example of
// each, accepted by Ajv, the guard and every union it belongs to; and broken variants both reject.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { explainFor, guardFor, isJsonPointer, oracleFor, repoRoot } from "./oracle.js";

const fixturesDir = path.resolve(repoRoot, "test/fixtures/added-messages");
const load = (file: string): Record<string, any> =>
  JSON.parse(readFileSync(path.join(fixturesDir, file), "utf8")) as Record<string, any>;
const clone = <T>(v: T): T => structuredClone(v);

/** Wraps a result in the response that carries it, so the message-level unions see it too. */
const response = (result: unknown) => ({ jsonrpc: "2.0", id: 99, result });
const initializeRequest = (capabilities: unknown) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "test-client", version: "1.0.0" } },
});
const initializeResult = (capabilities: unknown) => ({
  protocolVersion: "2025-11-25",
  capabilities,
  serverInfo: { name: "test-server", version: "1.0.0" },
});

interface Case {
  file: string;
  definition: string;
  /** Unions (or containers) that must accept it, each with the value it is checked as. */
  members: (v: unknown) => [string, unknown][];
  /** Unions that must not accept it: the other direction. */
  nonMembers: (v: unknown) => [string, unknown][];
}

const asRequest = (union: string, other: string) => ({
  members: (v: unknown): [string, unknown][] => [
    [union, v],
    ["JSONRPCRequest", v],
    ["JSONRPCMessage", v],
  ],
  nonMembers: (v: unknown): [string, unknown][] => [[other, v]],
});
const asNotification = (union: string, other: string) => ({
  members: (v: unknown): [string, unknown][] => [
    [union, v],
    ["JSONRPCNotification", v],
    ["JSONRPCMessage", v],
  ],
  nonMembers: (v: unknown): [string, unknown][] => [[other, v]],
});
const asServerResult = {
  members: (v: unknown): [string, unknown][] => [
    ["ServerResult", v],
    ["JSONRPCResultResponse", response(v)],
    ["JSONRPCMessage", response(v)],
  ],
  nonMembers: (): [string, unknown][] => [],
};

const cases: Case[] = [
  {
    file: "ResumePolicyNotification.json",
    definition: "ResumePolicyNotification",
    ...asNotification("ServerNotification", "ClientNotification"),
  },
  { file: "ResumeRequest.json", definition: "ResumeRequest", ...asRequest("ClientRequest", "ServerRequest") },
  {
    file: "GetRequestStatusRequest.json",
    definition: "GetRequestStatusRequest",
    ...asRequest("ClientRequest", "ServerRequest"),
  },
  { file: "GetRequestStatusResult.json", definition: "GetRequestStatusResult", ...asServerResult },
  {
    file: "CallToolAsyncRequest.json",
    definition: "CallToolAsyncRequest",
    ...asRequest("ClientRequest", "ServerRequest"),
  },
  {
    file: "JoinCallToolAsyncRequest.json",
    definition: "JoinCallToolAsyncRequest",
    ...asRequest("ClientRequest", "ServerRequest"),
  },
  {
    file: "GetToolAsyncResultRequest.json",
    definition: "GetToolAsyncResultRequest",
    ...asRequest("ClientRequest", "ServerRequest"),
  },
  {
    file: "CancelToolAsyncNotification.json",
    definition: "CancelToolAsyncNotification",
    ...asNotification("ClientNotification", "ServerNotification"),
  },
  {
    file: "RequestsReceivedNotification.json",
    definition: "RequestsReceivedNotification",
    ...asNotification("ClientNotification", "ServerNotification"),
  },
  { file: "CallToolAsyncResult.json", definition: "CallToolAsyncResult", ...asServerResult },
  { file: "CallToolResult.pending.json", definition: "CallToolResult", ...asServerResult },
  {
    file: "Tool.prefer-async.json",
    definition: "Tool",
    members: (v) => [
      ["ListToolsResult", { tools: [v] }],
      ["ServerResult", { tools: [v] }],
      ["JSONRPCMessage", response({ tools: [v] })],
    ],
    nonMembers: () => [],
  },
  {
    file: "ServerCapabilities.async.json",
    definition: "ServerCapabilities",
    members: (v) => [
      ["InitializeResult", initializeResult(v)],
      ["ServerResult", initializeResult(v)],
      ["JSONRPCMessage", response(initializeResult(v))],
    ],
    nonMembers: () => [],
  },
  {
    file: "ClientCapabilities.resumable.json",
    definition: "ClientCapabilities",
    members: (v) => [
      ["InitializeRequest", initializeRequest(v)],
      ["ClientRequest", initializeRequest(v)],
      ["JSONRPCMessage", initializeRequest(v)],
    ],
    nonMembers: (v) => [["ServerRequest", initializeRequest(v)]],
  },
  {
    // Progress flows both ways, so both notification unions take it.
    file: "ProgressNotification.resource-uri.json",
    definition: "ProgressNotification",
    members: (v) => [
      ["ClientNotification", v],
      ["ServerNotification", v],
      ["JSONRPCNotification", v],
      ["JSONRPCMessage", v],
    ],
    nonMembers: (v) => [["ClientRequest", v]],
  },
];

function expectAccepted(definition: string, value: unknown): void {
  expect({
    definition,
    oracle: oracleFor(definition)(value),
    guard: guardFor(definition)(value),
    issues: explainFor(definition)(value),
  }).toEqual({ definition, oracle: true, guard: true, issues: [] });
}

function expectRejected(definition: string, value: unknown, pointer?: string): void {
  const issues = explainFor(definition)(value);
  expect({ definition, oracle: oracleFor(definition)(value), guard: guardFor(definition)(value) }).toEqual({
    definition,
    oracle: false,
    guard: false,
  });
  expect(issues.length).toBeGreaterThan(0);
  for (const issue of issues) expect(isJsonPointer(issue.pointer)).toBe(true);
  if (pointer !== undefined) expect(issues.map((i) => i.pointer)).toContain(pointer);
}

describe("hand-written examples of the overlay's additions", () => {
  test("every fixture file has a case, and every case a file", () => {
    expect(
      readdirSync(fixturesDir)
        .filter((f) => f.endsWith(".json"))
        .sort(),
    ).toEqual(cases.map((c) => c.file).sort());
  });

  test.each(cases.map((c) => [c.file, c] as const))("%s is valid, and a member of its unions", (_file, c) => {
    const value = load(c.file);
    expectAccepted(c.definition, value);
    for (const [union, wrapped] of c.members(value)) expectAccepted(union, wrapped);
    for (const [union, wrapped] of c.nonMembers(value)) expectRejected(union, wrapped);
  });
});

/** A change that breaks a fixture, and the pointer the explainer must name for it. */
interface Breakage {
  apply: (v: Record<string, any>) => void;
  pointer: string;
}
/** The parent object of a JSON pointer's target, and the target's key. */
function locate(v: Record<string, any>, path: string): [Record<string, any>, string] {
  const keys = path.split("/").slice(1);
  const last = keys.pop()!;
  return [keys.reduce((o, k) => o[k], v), last];
}
/** Sets the value at path: the issue is at path. */
const set = (path: string, value: unknown): Breakage => ({
  apply: (v) => {
    const [parent, key] = locate(v, path);
    parent[key] = value;
  },
  pointer: path,
});
/** Removes a required property: the issue is at the object that misses it. */
const drop = (path: string): Breakage => ({
  apply: (v) => {
    const [parent, key] = locate(v, path);
    delete parent[key];
  },
  pointer: path.slice(0, path.lastIndexOf("/")),
});

/** [name, fixture file (its definition is the name before the first dot), the change, unions that must reject it too] */
const broken: [string, string, Breakage, string[]][] = [
  [
    "resumePolicy without resumeToken",
    "ResumePolicyNotification.json",
    drop("/params/resumeToken"),
    ["ServerNotification"],
  ],
  [
    "resumePolicy with a string minWait",
    "ResumePolicyNotification.json",
    set("/params/minWait", "1"),
    ["ServerNotification"],
  ],
  ["resume with a numeric resumeToken", "ResumeRequest.json", set("/params/resumeToken", 7), ["ClientRequest"]],
  ["resume without params", "ResumeRequest.json", drop("/params"), ["ClientRequest"]],
  [
    "resume with a boolean progressToken",
    "ResumeRequest.json",
    set("/params/_meta/progressToken", true),
    ["ClientRequest"],
  ],
  [
    "getStatus with a null requestId",
    "GetRequestStatusRequest.json",
    set("/params/requestId", null),
    ["ClientRequest"],
  ],
  ["status result with an unknown status", "GetRequestStatusResult.json", set("/status", "pending"), []],
  ["status result without hasPendingMessage", "GetRequestStatusResult.json", drop("/hasPendingMessage"), []],
  [
    "received without a resumeToken",
    "RequestsReceivedNotification.json",
    drop("/params/resumeToken"),
    ["ClientNotification"],
  ],
  ["received with lastSeq 0", "RequestsReceivedNotification.json", set("/params/lastSeq", 0), ["ClientNotification"]],
  [
    "received with a fractional lastSeq",
    "RequestsReceivedNotification.json",
    set("/params/lastSeq", 2.5),
    ["ClientNotification"],
  ],
  ["async call without a tool name", "CallToolAsyncRequest.json", drop("/params/name"), ["ClientRequest"]],
  [
    "async call with array arguments",
    "CallToolAsyncRequest.json",
    set("/params/arguments", ["intro"]),
    ["ClientRequest"],
  ],
  [
    "async call with jsonrpc 1.0",
    "CallToolAsyncRequest.json",
    set("/jsonrpc", "1.0"),
    ["ClientRequest", "JSONRPCMessage"],
  ],
  [
    "join with a fractional token (AsyncToken is string | integer)",
    "JoinCallToolAsyncRequest.json",
    set("/params/token", 1.5),
    ["ClientRequest"],
  ],
  ["get with a string timeout", "GetToolAsyncResultRequest.json", set("/params/timeout", "2.5"), ["ClientRequest"]],
  ["get with a fractional token", "GetToolAsyncResultRequest.json", set("/params/token", 9001.5), ["ClientRequest"]],
  ["cancel without a token", "CancelToolAsyncNotification.json", set("/params", {}), ["ClientNotification"]],
  ["async result with a string accepted", "CallToolAsyncResult.json", set("/accepted", "yes"), []],
  ["async result with an object token", "CallToolAsyncResult.json", set("/token", { id: 1 }), []],
  ["tool result with a string isPending", "CallToolResult.pending.json", set("/isPending", "true"), []],
  ["tool with a numeric preferAsync", "Tool.prefer-async.json", set("/annotations/preferAsync", 1), []],
  [
    "server capabilities with a string maxKeepAliveTime",
    "ServerCapabilities.async.json",
    set("/async/maxKeepAliveTime", "3600"),
    [],
  ],
  ["server capabilities with async: true", "ServerCapabilities.async.json", set("/async", true), []],
  [
    "client capabilities with resumableRequests: true",
    "ClientCapabilities.resumable.json",
    set("/resumableRequests", true),
    [],
  ],
  [
    "progress with a numeric resourceUri",
    "ProgressNotification.resource-uri.json",
    set("/params/resourceUri", 42),
    ["ClientNotification", "ServerNotification"],
  ],
];
describe("broken variants of the overlay's additions", () => {
  test.each(broken)("%s: rejected by Ajv, guard, explainer and unions", (_name, file, change, unions) => {
    const value = clone(load(file));
    change.apply(value);
    expectRejected(file.split(".")[0]!, value, change.pointer);
    for (const union of unions) expectRejected(union, value);
  });

  test("open objects take unknown keys: an extra field keeps every addition valid", () => {
    // Not a mutation that breaks anything: the additions declare no additionalProperties: false, so Ajv and the
    // guards must both keep accepting. This catches a guard that closes an object the schema leaves open.
    for (const c of cases) {
      const value = clone(load(c.file));
      value["x-extension"] = { anything: [1, "two", null] };
      expectAccepted(c.definition, value);
    }
  });

  test("wrapped in unions, a broken result is still rejected where a tagged member owns it", () => {
    // InitializeResult requires serverInfo: once it is missing, ServerResult still accepts through the open Result
    // member, which is exactly what Ajv says; the guard must not be stricter than the schema.
    const capabilities = load("ServerCapabilities.async.json");
    const { serverInfo: _dropped, ...noServerInfo } = initializeResult(capabilities);
    expectRejected("InitializeResult", noServerInfo, "");
    expectAccepted("ServerResult", noServerInfo);
    // A request with a known method but broken params has no fallback member in ClientRequest.
    const call = clone(load("CallToolAsyncRequest.json"));
    delete call.params;
    expectRejected("ClientRequest", call);
    // ...but it is still a well-formed JSON-RPC request: JSONRPCMessage only looks at the envelope.
    expectAccepted("JSONRPCMessage", call);
  });
});
