// The era map (generated/eras.ts) and the 2026-07-28 wire module: the facts each revision has, derived from its
// model (so a revision that drops something drops it here by itself), and wire-only types kept out of the stubs.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildModel } from "../../generator/build-model.js";
import { SchemaErrors } from "../../generator/errors.js";
import { deriveEras, revisionFacts } from "../../generator/eras.js";
import { loadDefinitions, parseMethodsSidecar } from "../../generator/load.js";
import { deriveMethods } from "../../generator/methods.js";
import type { Model } from "../../generator/model.js";
import { eras, methods, revisions, sdkRevision } from "../../generated/eras.js";
import * as modernDispatch from "../../generated/2026-07-28/dispatch.js";
import * as modernGuards from "../../generated/2026-07-28/guards.js";
import * as modernValidators from "../../generated/2026-07-28/validators.js";
import { createOracle, exported, isJsonPointer, type Explain, type Guard } from "../guards/oracle.js";
import { referenceDir, repoRoot } from "../kit/paths.js";

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const modernDir = join(repoRoot, "schema", MODERN);
const modernSchemaText = readFileSync(join(modernDir, "schema.json"), "utf8");
const modernSidecarText = readFileSync(join(modernDir, "methods.json"), "utf8");

/** The 2026-07-28 model as generate builds it, from the schema after `edit` (a copy) and the revision's sidecar. */
function modernModel(edit: (defs: Record<string, any>) => void = () => {}, sidecar = modernSidecarText): Model {
  const schema = JSON.parse(modernSchemaText) as { $defs: Record<string, any> };
  edit(schema.$defs);
  const loaded = loadDefinitions("schema.json", "schema.json", JSON.stringify(schema));
  return buildModel({ ...loaded, sidecar: parseMethodsSidecar("methods.json", sidecar) });
}

const removeMember = (union: { anyOf: { $ref: string }[] }, name: string): void => {
  const before = union.anyOf.length;
  union.anyOf = union.anyOf.filter((m) => m.$ref !== `#/$defs/${name}`);
  expect(union.anyOf.length).toBe(before - 1);
};

describe("generated/eras.ts", () => {
  it("lists the revisions oldest first, the SDK's being 2025-11-25", () => {
    expect(revisions).toEqual([LEGACY, MODERN]);
    expect(sdkRevision).toBe(LEGACY);
    expect(eras[LEGACY].module).toBe(".");
    expect(eras[MODERN].module).toBe("./2026-07-28");
  });

  // Each method with the revisions that have it as a message of its own.
  const presence: [string, string[]][] = [
    // Gone in 2026-07-28: the handshake, ping, per-session notices, server-to-client requests.
    ["initialize", [LEGACY]],
    ["notifications/initialized", [LEGACY]],
    ["ping", [LEGACY]],
    ["logging/setLevel", [LEGACY]],
    ["resources/subscribe", [LEGACY]],
    ["resources/unsubscribe", [LEGACY]],
    ["notifications/roots/list_changed", [LEGACY]],
    ["notifications/elicitation/complete", [LEGACY]],
    ["elicitation/create", [LEGACY]],
    ["sampling/createMessage", [LEGACY]],
    ["roots/list", [LEGACY]],
    ["tasks/get", [LEGACY]],
    ["notifications/tasks/status", [LEGACY]],
    // The project's drafts stay on 2025-11-25 (the overlay: SEP-975, async tool calls).
    ["requests/resume", [LEGACY]],
    ["requests/getStatus", [LEGACY]],
    ["notifications/requests/resumePolicy", [LEGACY]],
    ["tools/async/call", [LEGACY]],
    ["tools/async/cancel", [LEGACY]],
    // New in 2026-07-28.
    ["server/discover", [MODERN]],
    ["subscriptions/listen", [MODERN]],
    ["notifications/subscriptions/acknowledged", [MODERN]],
    // In both.
    ["tools/call", [LEGACY, MODERN]],
    ["tools/list", [LEGACY, MODERN]],
    ["resources/read", [LEGACY, MODERN]],
    ["prompts/get", [LEGACY, MODERN]],
    ["completion/complete", [LEGACY, MODERN]],
    ["notifications/cancelled", [LEGACY, MODERN]],
    ["notifications/progress", [LEGACY, MODERN]],
    ["notifications/message", [LEGACY, MODERN]],
    ["notifications/tools/list_changed", [LEGACY, MODERN]],
  ];
  it.each(presence)("%s exists in %j", (method, expected) => {
    expect(Object.hasOwn(methods, method)).toBe(true);
    expect(Object.keys(methods[method]!)).toEqual(expected);
  });

  // How a method travels where it changed: 2026-07-28 has no server-to-client requests, and clients cancel.
  const travel: [string, string, string][] = [
    ["notifications/cancelled", LEGACY, "both"],
    ["notifications/cancelled", MODERN, "both"],
    ["notifications/progress", LEGACY, "both"],
    ["notifications/progress", MODERN, "server-to-client"],
    ["tools/call", MODERN, "client-to-server"],
  ];
  it.each(travel)("%s goes %s: %s", (method, revision, direction) => {
    expect(methods[method]![revision as typeof LEGACY]?.direction).toBe(direction);
  });

  it("every method of a revision's dispatch tables is in the map under that revision, and nothing else is", async () => {
    const legacy = await import("../../generated/dispatch.js");
    const tables = {
      [LEGACY]: [legacy.clientToServer, legacy.serverToClient],
      [MODERN]: [modernDispatch.clientToServer, modernDispatch.serverToClient],
    };
    for (const [revision, [c2s, s2c]] of Object.entries(tables)) {
      const inTables = [...new Set([...Object.keys(c2s!), ...Object.keys(s2c!)])].sort();
      const inMap = Object.keys(methods)
        .filter((m) => revision in methods[m]!)
        .sort();
      expect(inMap, revision).toEqual(inTables);
    }
  });

  it("has the cacheable requests of 2026-07-28, each with the result that extends CacheableResult", () => {
    // The caching chapter lists them: server/discover, tools/list, prompts/list, resources/list,
    // resources/templates/list, resources/read.
    expect(eras[MODERN].cacheable).toEqual({
      "server/discover": "DiscoverResult",
      "tools/list": "ListToolsResult",
      "prompts/list": "ListPromptsResult",
      "resources/list": "ListResourcesResult",
      "resources/templates/list": "ListResourceTemplatesResult",
      "resources/read": "ReadResourceResult",
    });
    expect(eras[LEGACY].cacheable).toEqual({});
  });

  it("names the params member each 2026-07-28 request's Mcp-Name header carries (Standard Request Headers)", () => {
    expect(eras[MODERN].mcpName).toEqual({ "tools/call": "name", "prompts/get": "name", "resources/read": "uri" });
    expect(eras[LEGACY].mcpName).toEqual({});
  });

  const inputs: [string, string, string, string][] = [
    ["elicitation/create", "isElicitRequestParams", "isElicitResult", "elicitation"],
    ["sampling/createMessage", "isCreateMessageRequestParams", "isCreateMessageResult", "sampling"],
    ["roots/list", "isListRootsRequest$Params", "isListRootsResult", "roots"],
  ];
  it.each(inputs)(
    "has the 2026-07-28 input request %s: params %s, result %s, client capability %s, and its guards exist",
    (method, paramsGuard, resultGuard, capability) => {
      expect(eras[MODERN].inputRequests[method]).toEqual({ paramsGuard, resultGuards: [resultGuard], capability });
      const guards = modernGuards as unknown as Record<string, unknown>;
      expect(typeof guards[paramsGuard]).toBe("function");
      expect(typeof guards[resultGuard]).toBe("function");
      // The wire module has the same as a dispatch table, guards included.
      const spec = modernDispatch.inputRequests[method as keyof typeof modernDispatch.inputRequests];
      expect(spec.capability).toBe(capability);
      expect(spec.isResult).toBe(guards[resultGuard]);
    },
  );

  it("has exactly those input requests, and none in 2025-11-25", () => {
    expect(Object.keys(eras[MODERN].inputRequests).sort()).toEqual(inputs.map((i) => i[0]).sort());
    expect(Object.keys(modernDispatch.inputRequests).sort()).toEqual(inputs.map((i) => i[0]).sort());
    expect(eras[LEGACY].inputRequests).toEqual({});
  });
});

describe("the era map follows each revision's model", () => {
  it("a revision whose schema drops a request drops it from that revision, and from the cacheable table", () => {
    const base = revisionFacts(MODERN, modernModel(), false);
    expect(base.methods.has("tools/list")).toBe(true);
    expect(base.cacheable.has("tools/list")).toBe(true);
    const dropped = revisionFacts(
      MODERN,
      modernModel((d) => removeMember(d["ClientRequest"], "ListToolsRequest")),
      false,
    );
    expect(dropped.methods.has("tools/list")).toBe(false);
    expect(dropped.cacheable.has("tools/list")).toBe(false);
    const map = deriveEras([
      { revision: MODERN, model: modernModel((d) => removeMember(d["ClientRequest"], "ListToolsRequest")), sdk: true },
      { revision: "2099-01-01", model: modernModel(), sdk: false },
    ]);
    expect(map.methods.get("tools/list")).toEqual(["2099-01-01"]);
    expect(map.methods.get("tools/call")).toEqual([MODERN, "2099-01-01"]);
  });

  it("a result is cacheable only while it has every CacheableResult member, required as there", () => {
    const withoutTtl = revisionFacts(
      MODERN,
      modernModel((d) => delete d["ListToolsResult"].properties.ttlMs),
      false,
    );
    expect(withoutTtl.cacheable.has("tools/list")).toBe(false);
    const optionalScope = revisionFacts(
      MODERN,
      modernModel((d) => {
        d["ListPromptsResult"].required = d["ListPromptsResult"].required.filter((r: string) => r !== "cacheScope");
      }),
      false,
    );
    expect(optionalScope.cacheable.has("prompts/list")).toBe(false);
    const otherShape = revisionFacts(
      MODERN,
      modernModel((d) => (d["ReadResourceResult"].properties.ttlMs.minimum = 1)),
      false,
    );
    expect(otherShape.cacheable.has("resources/read")).toBe(false);
    // Descriptions do not count: a result that words ttlMs differently still extends CacheableResult.
    const reworded = revisionFacts(
      MODERN,
      modernModel((d) => (d["ListToolsResult"].properties.ttlMs.description = "How long to keep it.")),
      false,
    );
    expect(reworded.cacheable.get("tools/list")).toBe("ListToolsResult");
    // No CacheableResult at all (2025-11-25): nothing is cacheable.
    expect(
      revisionFacts(
        MODERN,
        modernModel((d) => delete d["CacheableResult"]),
        false,
      ).cacheable.size,
    ).toBe(0);
  });

  it("input requests are the InputRequest union's members: one taken out is gone from the table", () => {
    const facts = revisionFacts(
      MODERN,
      modernModel((d) => removeMember(d["InputRequest"], "ListRootsRequest")),
      false,
    );
    expect([...facts.inputRequests.keys()]).toEqual(["elicitation/create", "sampling/createMessage"]);
    // Their capability is derived from ClientCapabilities: without `roots` there, roots/list would need none.
    const noRoots = revisionFacts(
      MODERN,
      modernModel((d) => delete d["ClientCapabilities"].properties.roots),
      false,
    );
    expect(noRoots.inputRequests.get("roots/list")).toEqual({
      params: "ListRootsRequest$Params",
      results: ["ListRootsResult"],
    });
  });
});

describe("the method table of 2026-07-28", () => {
  it("reads a message union the schema writes as a copy of its one member as that member: clients cancel too", () => {
    const schema = JSON.parse(modernSchemaText) as { $defs: Record<string, any> };
    // The official schema inlines ClientNotification as a copy of CancelledNotification, not as a union.
    expect(schema.$defs["ClientNotification"].anyOf).toBeUndefined();
    expect(schema.$defs["ClientNotification"].properties.method.const).toBe("notifications/cancelled");
    const cancelled = deriveMethods(schema.$defs, "$defs").methods.find((m) => m.method === "notifications/cancelled");
    expect(cancelled).toMatchObject({ direction: "both", message: "CancelledNotification" });
    // A copy of no definition is a message of its own.
    schema.$defs["ClientNotification"].properties.method.const = "notifications/client_only";
    const own = deriveMethods(schema.$defs, "$defs").methods.find((m) => m.method === "notifications/client_only");
    expect(own).toMatchObject({ direction: "client-to-server", message: "ClientNotification" });
  });

  it("reads a union written as a $ref to its one member as that member", () => {
    const schema = JSON.parse(modernSchemaText) as { $defs: Record<string, any> };
    schema.$defs["ClientNotification"] = { $ref: "#/$defs/CancelledNotification", description: "One member." };
    const cancelled = deriveMethods(schema.$defs, "$defs").methods.find((m) => m.method === "notifications/cancelled");
    expect(cancelled).toMatchObject({ direction: "both", message: "CancelledNotification" });
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    [
      "a member the params lack",
      { method: "tools/call", mcpName: "tool" },
      /the params of CallToolRequest have no member tool/,
    ],
    ["an optional member", { method: "tools/call", mcpName: "requestState" }, /requestState is optional/],
    [
      "a member that is not a string",
      { method: "completion/complete", mcpName: "ref" },
      /ref in the params of CompleteRequest is not a string/,
    ],
    ["a notification", { method: "notifications/cancelled", mcpName: "requestId" }, /only a request the client sends/],
  ];
  it.each(bad)("refuses a sidecar mcpName naming %s, pointing at the entry's mcpName", (_what, entry, message) => {
    const sidecar = JSON.stringify({ methods: [entry] });
    let error: unknown;
    try {
      modernModel(undefined, sidecar);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaErrors);
    const errors = (error as SchemaErrors).errors;
    expect(errors.map((e) => e.where)).toEqual(["/methods/0/mcpName"]);
    expect(errors[0]!.message).toMatch(message);
  });
});

describe("the stubs stay one set", () => {
  const wireOnly = ["InputRequiredResult", "resultType", "ttlMs", "cacheScope", "inputRequests", "requestState"];
  it.each(["client.ts", "server.ts", "index.ts", "sdk.ts"])(
    "generated/%s names no 2026-07-28 wire-only member",
    (file) => {
      const text = readFileSync(join(repoRoot, "generated", file), "utf8");
      for (const word of wireOnly) expect(text, word).not.toContain(word);
    },
  );

  it("the handlers and calls are typed by 2025-11-25's results, and the 2026-07-28 module has no stubs", () => {
    const server = readFileSync(join(repoRoot, "generated/server.ts"), "utf8");
    expect(server).toContain(
      "onCallTool(handler: (params: CallToolRequestParams, context: RequestContext) => CallToolResult",
    );
    expect(readdirSync(join(repoRoot, "generated", MODERN)).sort()).toEqual([
      "dispatch.ts",
      "guards.ts",
      "index.ts",
      "types.ts",
      "validators.ts",
    ]);
    // The SDK's types are 2025-11-25's: the 2026-07-28 result members are in its own module only.
    const legacyTypes = readFileSync(join(repoRoot, "generated/types.ts"), "utf8");
    const modernTypes = readFileSync(join(repoRoot, "generated", MODERN, "types.ts"), "utf8");
    expect(legacyTypes).not.toContain("ttlMs");
    expect(modernTypes).toContain("ttlMs");
  });
});

describe("the committed 2026-07-28 guards on the spec's examples", () => {
  const oracle = createOracle(join(modernDir, "schema.json"));
  const guards = modernGuards as unknown as Record<string, unknown>;
  const validators = modernValidators as unknown as Record<string, unknown>;
  const guardFor = (name: string) => exported<Guard>(guards, "is", name, "generated/2026-07-28/guards.ts");
  const explainFor = (name: string) =>
    exported<Explain>(validators, "explain", name, "generated/2026-07-28/validators.ts");
  const examplesDir = join(referenceDir, "examples-2026-07-28");
  const examples = readdirSync(examplesDir)
    .filter((type) => statSync(join(examplesDir, type)).isDirectory())
    .sort()
    .flatMap((type) =>
      readdirSync(join(examplesDir, type))
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((file) => ({
          type,
          file,
          value: JSON.parse(readFileSync(join(examplesDir, type, file), "utf8")) as unknown,
        })),
    );

  it("guard, explainer and Ajv (on schema/2026-07-28/schema.json) give every example the same verdict", () => {
    expect(examples.length).toBe(129);
    const verdicts = examples.map((e) => {
      const issues = explainFor(e.type)(e.value);
      return {
        example: `${e.type}/${e.file}`,
        ajv: oracle.oracleFor(e.type)(e.value),
        guard: guardFor(e.type)(e.value),
        explained: issues.length === 0,
        pointers: issues.every((i) => isJsonPointer(i.pointer)),
      };
    });
    expect(verdicts.filter((v) => v.guard !== v.ajv || v.explained !== v.ajv || !v.pointers)).toEqual([]);
    expect(verdicts.filter((v) => !v.ajv).map((v) => v.example)).toEqual([]);
  });

  it("the input-request table accepts the examples' answers and params, and refuses another request's answer", () => {
    const byType = (type: string) => examples.filter((e) => e.type === type).map((e) => e.value);
    const table = modernDispatch.inputRequests;
    for (const r of byType("ElicitResult")) expect(table["elicitation/create"].isResult(r)).toBe(true);
    for (const r of byType("CreateMessageResult")) expect(table["sampling/createMessage"].isResult(r)).toBe(true);
    for (const r of byType("ListRootsResult")) expect(table["roots/list"].isResult(r)).toBe(true);
    for (const r of byType("ListRootsResult")) expect(table["sampling/createMessage"].isResult(r)).toBe(false);
    // The requests inside the spec's input_required result pass their entries' params guards.
    const [withRequests] = byType("InputRequiredResult") as {
      inputRequests: Record<string, { method: string; params: unknown }>;
    }[];
    const asked = Object.values(withRequests!.inputRequests);
    expect(asked.map((a) => a.method).sort()).toEqual(["elicitation/create", "sampling/createMessage"]);
    for (const a of asked) expect(table[a.method as keyof typeof table].isParams(a.params), a.method).toBe(true);
  });
});
