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

interface Broken {
  name: string;
  file: string;
  definition: string;
  mutate: (v: Record<string, any>) => unknown;
  pointer: string;
  unions: string[];
}
const broken: Broken[] = [
  {
    name: "resumePolicy without resumeToken",
    file: "ResumePolicyNotification.json",
    definition: "ResumePolicyNotification",
    mutate: (v) => {
      delete v.params.resumeToken;
      return v;
    },
    pointer: "/params",
    unions: ["ServerNotification"],
  },
  {
    name: "resumePolicy with a string minWait",
    file: "ResumePolicyNotification.json",
    definition: "ResumePolicyNotification",
    mutate: (v) => {
      v.params.minWait = "1";
      return v;
    },
    pointer: "/params/minWait",
    unions: ["ServerNotification"],
  },
  {
    name: "resume with a numeric resumeToken",
    file: "ResumeRequest.json",
    definition: "ResumeRequest",
    mutate: (v) => {
      v.params.resumeToken = 7;
      return v;
    },
    pointer: "/params/resumeToken",
    unions: ["ClientRequest"],
  },
  {
    name: "resume without params",
    file: "ResumeRequest.json",
    definition: "ResumeRequest",
    mutate: (v) => {
      delete v.params;
      return v;
    },
    pointer: "",
    unions: ["ClientRequest"],
  },
  {
    name: "resume with a boolean progressToken",
    file: "ResumeRequest.json",
    definition: "ResumeRequest",
    mutate: (v) => {
      v.params._meta.progressToken = true;
      return v;
    },
    pointer: "/params/_meta/progressToken",
    unions: ["ClientRequest"],
  },
  {
    name: "getStatus with a null requestId",
    file: "GetRequestStatusRequest.json",
    definition: "GetRequestStatusRequest",
    mutate: (v) => {
      v.params.requestId = null;
      return v;
    },
    pointer: "/params/requestId",
    unions: ["ClientRequest"],
  },
  {
    name: "status result with an unknown status",
    file: "GetRequestStatusResult.json",
    definition: "GetRequestStatusResult",
    mutate: (v) => {
      v.status = "pending";
      return v;
    },
    pointer: "/status",
    unions: [],
  },
  {
    name: "status result without hasPendingMessage",
    file: "GetRequestStatusResult.json",
    definition: "GetRequestStatusResult",
    mutate: (v) => {
      delete v.hasPendingMessage;
      return v;
    },
    pointer: "",
    unions: [],
  },
  {
    name: "received without a resumeToken",
    file: "RequestsReceivedNotification.json",
    definition: "RequestsReceivedNotification",
    mutate: (v) => {
      delete v.params.resumeToken;
      return v;
    },
    pointer: "/params",
    unions: ["ClientNotification"],
  },
  {
    name: "received with lastSeq 0",
    file: "RequestsReceivedNotification.json",
    definition: "RequestsReceivedNotification",
    mutate: (v) => {
      v.params.lastSeq = 0;
      return v;
    },
    pointer: "/params/lastSeq",
    unions: ["ClientNotification"],
  },
  {
    name: "received with a fractional lastSeq",
    file: "RequestsReceivedNotification.json",
    definition: "RequestsReceivedNotification",
    mutate: (v) => {
      v.params.lastSeq = 2.5;
      return v;
    },
    pointer: "/params/lastSeq",
    unions: ["ClientNotification"],
  },
  {
    name: "async call without a tool name",
    file: "CallToolAsyncRequest.json",
    definition: "CallToolAsyncRequest",
    mutate: (v) => {
      delete v.params.name;
      return v;
    },
    pointer: "/params",
    unions: ["ClientRequest"],
  },
  {
    name: "async call with array arguments",
    file: "CallToolAsyncRequest.json",
    definition: "CallToolAsyncRequest",
    mutate: (v) => {
      v.params.arguments = ["intro"];
      return v;
    },
    pointer: "/params/arguments",
    unions: ["ClientRequest"],
  },
  {
    name: "async call with jsonrpc 1.0",
    file: "CallToolAsyncRequest.json",
    definition: "CallToolAsyncRequest",
    mutate: (v) => {
      v.jsonrpc = "1.0";
      return v;
    },
    pointer: "/jsonrpc",
    unions: ["ClientRequest", "JSONRPCMessage"],
  },
  {
    name: "join with a fractional token (AsyncToken is string | integer)",
    file: "JoinCallToolAsyncRequest.json",
    definition: "JoinCallToolAsyncRequest",
    mutate: (v) => {
      v.params.token = 1.5;
      return v;
    },
    pointer: "/params/token",
    unions: ["ClientRequest"],
  },
  {
    name: "get with a string timeout",
    file: "GetToolAsyncResultRequest.json",
    definition: "GetToolAsyncResultRequest",
    mutate: (v) => {
      v.params.timeout = "2.5";
      return v;
    },
    pointer: "/params/timeout",
    unions: ["ClientRequest"],
  },
  {
    name: "get with a fractional token",
    file: "GetToolAsyncResultRequest.json",
    definition: "GetToolAsyncResultRequest",
    mutate: (v) => {
      v.params.token = 9001.5;
      return v;
    },
    pointer: "/params/token",
    unions: ["ClientRequest"],
  },
  {
    name: "cancel without a token",
    file: "CancelToolAsyncNotification.json",
    definition: "CancelToolAsyncNotification",
    mutate: (v) => {
      v.params = {};
      return v;
    },
    pointer: "/params",
    unions: ["ClientNotification"],
  },
  {
    name: "async result with a string accepted",
    file: "CallToolAsyncResult.json",
    definition: "CallToolAsyncResult",
    mutate: (v) => {
      v.accepted = "yes";
      return v;
    },
    pointer: "/accepted",
    unions: [],
  },
  {
    name: "async result with an object token",
    file: "CallToolAsyncResult.json",
    definition: "CallToolAsyncResult",
    mutate: (v) => {
      v.token = { id: 1 };
      return v;
    },
    pointer: "/token",
    unions: [],
  },
  {
    name: "tool result with a string isPending",
    file: "CallToolResult.pending.json",
    definition: "CallToolResult",
    mutate: (v) => {
      v.isPending = "true";
      return v;
    },
    pointer: "/isPending",
    unions: [],
  },
  {
    name: "tool with a numeric preferAsync",
    file: "Tool.prefer-async.json",
    definition: "Tool",
    mutate: (v) => {
      v.annotations.preferAsync = 1;
      return v;
    },
    pointer: "/annotations/preferAsync",
    unions: [],
  },
  {
    name: "server capabilities with a string maxKeepAliveTime",
    file: "ServerCapabilities.async.json",
    definition: "ServerCapabilities",
    mutate: (v) => {
      v.async.maxKeepAliveTime = "3600";
      return v;
    },
    pointer: "/async/maxKeepAliveTime",
    unions: [],
  },
  {
    name: "server capabilities with async: true",
    file: "ServerCapabilities.async.json",
    definition: "ServerCapabilities",
    mutate: (v) => {
      v.async = true;
      return v;
    },
    pointer: "/async",
    unions: [],
  },
  {
    name: "client capabilities with resumableRequests: true",
    file: "ClientCapabilities.resumable.json",
    definition: "ClientCapabilities",
    mutate: (v) => {
      v.resumableRequests = true;
      return v;
    },
    pointer: "/resumableRequests",
    unions: [],
  },
  {
    name: "progress with a numeric resourceUri",
    file: "ProgressNotification.resource-uri.json",
    definition: "ProgressNotification",
    mutate: (v) => {
      v.params.resourceUri = 42;
      return v;
    },
    pointer: "/params/resourceUri",
    unions: ["ClientNotification", "ServerNotification"],
  },
];

describe("broken variants of the overlay's additions", () => {
  test.each(broken.map((b) => [b.name, b] as const))("%s: rejected by Ajv, guard, explainer and unions", (_name, b) => {
    const value = b.mutate(clone(load(b.file)));
    expectRejected(b.definition, value, b.pointer);
    for (const union of b.unions) expectRejected(union, value);
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
