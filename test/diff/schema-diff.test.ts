// mcpgen diff on the official MCP revisions and on our combined schema: the changes each changelog names, classified.
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { diffSides } from "../../generator/diff/diff.js";
import { formatJson, formatMarkdown, formatText } from "../../generator/diff/format.js";
import { loadSide } from "../../generator/diff/source.js";
import type { Change, DiffReport } from "../../generator/diff/types.js";
import { applyOverlay, readPatches } from "../../generator/schema-build.js";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";

/** Paths as a user in the project would type them, so reports (and snapshots) do not depend on the machine. */
const rev = (name: string): string => relative(repoRoot, join(referenceDir, "mcp-schema", name, "schema.json"));

function diff(oldSpec: string, newSpec: string): DiffReport {
  return diffSides(loadSide(oldSpec, "OLD", {}, repoRoot), loadSide(newSpec, "NEW", {}, repoRoot));
}

const find = (r: DiffReport, pred: (c: Change) => boolean): Change[] => r.changes.filter(pred);
const one = (r: DiffReport, pred: (c: Change) => boolean): Change => {
  const found = find(r, pred);
  expect(found, JSON.stringify(found.map((c) => c.reason))).toHaveLength(1);
  return found[0]!;
};

describe("2025-03-26 -> 2025-06-18", () => {
  let r: DiffReport;
  beforeAll(() => {
    r = diff(rev("2025-03-26"), rev("2025-06-18"));
  });

  it("says that methods were derived by convention on both sides", () => {
    expect(r.old.methods).toBe("convention");
    expect(r.new.methods).toBe("convention");
    expect(
      r.notes.filter((n) =>
        /^(OLD|NEW): no methods sidecar: \d+ requests and \d+ notifications derived from the schema's unions; logging\/setLevel, ping, resources\/subscribe and resources\/unsubscribe answer with the empty result$/.test(
          n,
        ),
      ),
    ).toHaveLength(2);
  });

  it("reports JSON-RPC batching removed as breaking for both sides, with pointers into both files", () => {
    const batches = find(r, (c) => c.section === "envelope" && c.kind === "union-member-removed");
    expect(batches.map((c) => c.path).sort()).toEqual([
      "<array of JSONRPCRequest|JSONRPCNotification>",
      "<array of JSONRPCResponse|JSONRPCError>",
    ]);
    for (const c of batches) {
      expect([c.clients, c.servers]).toEqual(["breaking", "breaking"]);
      expect(c.old).toMatch(/^\/definitions\/JSONRPCMessage\/anyOf\/[25]$/);
      expect(c.new).toBe("/definitions/JSONRPCMessage");
    }
  });

  it("reports elicitation as a new server-to-client request and a new client capability, both compatible", () => {
    const m = one(r, (c) => c.subject === "elicitation/create" && c.kind === "method-added");
    expect([m.clients, m.servers]).toEqual(["compatible", "compatible"]);
    expect(m.old).toBeNull();
    const cap = one(
      r,
      (c) => c.section === "capabilities" && c.subject === "ClientCapabilities" && c.path === "elicitation",
    );
    expect(cap.kind).toBe("capability-added");
    expect([cap.clients, cap.servers]).toEqual(["compatible", "compatible"]);
  });

  it("reports structured tool output as optional additions, compatible", () => {
    const sc = one(r, (c) => c.subject === "tools/call" && c.part === "result" && c.path === "structuredContent");
    expect(sc.kind).toBe("field-added-optional");
    expect(sc.clients).toBe("compatible");
    expect(one(r, (c) => c.subject === "tools/list" && c.path === "tools[].outputSchema").kind).toBe(
      "field-added-optional",
    );
  });

  it("reports resource links, new in ContentBlock, once under the definition: breaking clients only (they receive the results)", () => {
    const link = one(
      r,
      (c) => c.section === "definitions" && c.subject === "ContentBlock" && c.path === "<ResourceLink>",
    );
    expect(link.kind).toBe("union-member-added");
    expect([link.clients, link.servers]).toEqual(["breaking", "compatible"]);
    expect(link.new).toBe("/definitions/ContentBlock/anyOf/3");
    // Each place that reaches ContentBlock keeps its own path, verdict and reason.
    expect(link.reachedBy!.map((p) => [p.subject, p.part, p.path, p.clients, p.servers])).toEqual([
      ["prompts/get", "result", "messages[].content.<ResourceLink>", "breaking", "compatible"],
      ["tools/call", "result", "content[].<ResourceLink>", "breaking", "compatible"],
    ]);
    expect(find(r, (c) => c.section === "methods" && c.path.endsWith("<ResourceLink>"))).toEqual([]);
  });

  it("treats reordered keys and reworded descriptions as no change", () => {
    expect(find(r, (c) => c.kind === "description-changed")).toEqual([]);
    const docs = diffSides(
      loadSide(rev("2025-03-26"), "OLD", {}, repoRoot),
      loadSide(rev("2025-06-18"), "NEW", {}, repoRoot),
      { includeDocs: true },
    );
    const described = docs.changes.filter((c) => c.kind === "description-changed");
    expect(described.length).toBeGreaterThan(0);
    expect(described.every((c) => c.clients === "compatible" && c.servers === "compatible")).toBe(true);
  });
});

describe("2025-06-18 -> 2025-11-25", () => {
  let r: DiffReport;
  beforeAll(() => {
    r = diff(rev("2025-06-18"), rev("2025-11-25"));
  });

  it("reports JSONRPCErrorResponse.id made optional: receivers on both sides built on OLD expect it", () => {
    const c = one(r, (c) => c.section === "envelope" && c.kind === "field-made-optional");
    expect(c.path).toBe("<JSONRPCErrorResponse>.id");
    expect([c.clients, c.servers]).toEqual(["breaking", "breaking"]);
    expect(c.old).toBe("/definitions/JSONRPCError/properties/id");
    expect(c.new).toBe("/$defs/JSONRPCErrorResponse/properties/id");
  });

  it("reports CancelledNotificationParams.requestId made optional, breaking both (the notification goes both ways)", () => {
    const c = one(r, (c) => c.subject === "notifications/cancelled" && c.path === "requestId");
    expect(c.kind).toBe("field-made-optional");
    expect([c.clients, c.servers]).toEqual(["breaking", "breaking"]);
    expect(c.new).toBe("/$defs/CancelledNotificationParams/properties/requestId");
  });

  it("reports tasks as added methods and capabilities, all compatible", () => {
    const added = find(r, (c) => c.kind === "method-added").map((c) => c.subject);
    expect(added).toEqual(
      expect.arrayContaining([
        "tasks/cancel",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "notifications/tasks/status",
        "notifications/elicitation/complete",
      ]),
    );
    for (const side of ["ClientCapabilities", "ServerCapabilities"]) {
      const cap = one(r, (c) => c.subject === side && c.path === "tasks");
      expect([cap.kind, cap.clients, cap.servers]).toEqual(["capability-added", "compatible", "compatible"]);
    }
    expect(one(r, (c) => c.subject === "tools/call" && c.part === "params" && c.path === "task").kind).toBe(
      "field-added-optional",
    );
  });

  it("reports tool use in sampling as new content the client receives from the server", () => {
    const c = one(
      r,
      (c) =>
        c.subject === "sampling/createMessage" &&
        c.part === "params" &&
        c.path === "messages[].content.<ToolUseContent>",
    );
    expect([c.clients, c.servers]).toEqual(["breaking", "compatible"]);
    expect(c.reason).toContain("clients built on OLD do not handle it");
  });

  it("matches the JSON snapshot", async () => {
    await expect(formatJson(r) + "\n").toMatchFileSnapshot("__snapshots__/2025-06-18_2025-11-25.json");
  });
});

describe("2025-11-25 -> 2026-07-28", () => {
  let r: DiffReport;
  beforeAll(() => {
    r = diff(rev("2025-11-25"), rev("2026-07-28"));
  });

  it("reports InputRequiredResult as a new result of tools/call, prompts/get and resources/read, breaking clients only", () => {
    const added = find(r, (c) => c.kind === "result-variant-added");
    expect(added.map((c) => [c.subject, c.part, c.path, c.clients, c.servers, c.new])).toEqual([
      ["prompts/get", "result", "<InputRequiredResult>", "breaking", "compatible", "/$defs/InputRequiredResult"],
      ["resources/read", "result", "<InputRequiredResult>", "breaking", "compatible", "/$defs/InputRequiredResult"],
      ["tools/call", "result", "<InputRequiredResult>", "breaking", "compatible", "/$defs/InputRequiredResult"],
    ]);
    expect(added[2]!.reason).toBe(
      "result InputRequiredResult added to tools/call: clients built on OLD do not expect it as an answer",
    );
    // The member both sides share is still compared field by field, under its name.
    expect(
      one(r, (c) => c.subject === "tools/call" && c.part === "result" && c.path === "<CallToolResult>.resultType").kind,
    ).toBe("field-added-required");
  });

  it("reports a change to a shared definition once, under it, with every method that reaches it", () => {
    const c = one(
      r,
      (c) =>
        c.section === "definitions" &&
        c.subject === "RequestMetaObject" &&
        c.path === "io.modelcontextprotocol/protocolVersion",
    );
    expect([c.kind, c.clients, c.servers]).toEqual(["field-added-required", "breaking", "compatible"]);
    expect(c.new).toBe("/$defs/RequestMetaObject/properties/io.modelcontextprotocol~1protocolVersion");
    expect(c.reason).toBe(
      "required field io.modelcontextprotocol/protocolVersion added to RequestMetaObject: breaks clients in all of the 8 places that reach it",
    );
    expect(c.reachedBy!.map((p) => `${p.subject} ${p.part}`)).toEqual([
      "completion/complete params",
      "prompts/get params",
      "prompts/list params",
      "resources/list params",
      "resources/read params",
      "resources/templates/list params",
      "tools/call params",
      "tools/list params",
    ]);
    // Per-method detail for tools: each place with its path, verdict, reason and pointers.
    expect(c.reachedBy![6]).toEqual({
      section: "methods",
      subject: "tools/call",
      part: "params",
      path: "_meta.io.modelcontextprotocol/protocolVersion",
      clients: "breaking",
      servers: "compatible",
      reason:
        "required param _meta.io.modelcontextprotocol/protocolVersion added to tools/call params: clients built on OLD do not send it",
      old: "/$defs/CallToolRequestParams/properties/_meta",
      new: "/$defs/RequestMetaObject/properties/io.modelcontextprotocol~1protocolVersion",
    });
    // ... and not once per method besides.
    expect(
      find(
        r,
        (c) =>
          c.section === "methods" &&
          c.new === "/$defs/RequestMetaObject/properties/io.modelcontextprotocol~1protocolVersion",
      ),
    ).toEqual([]);
    // A place the report would otherwise name several times is named once.
    const places = r.changes.flatMap((c) =>
      (c.reachedBy ?? [c]).map((p) => JSON.stringify([p.section, p.subject, p.part, p.path, c.kind])),
    );
    expect(new Set(places).size).toBe(places.length);
  });

  it("summarizes at the top: counts by verdict, and the three most important breaking changes by sides times reach", () => {
    const s = r.summary;
    expect(s.byVerdict.both + s.byVerdict.clientsOnly + s.byVerdict.serversOnly + s.byVerdict.compatible).toBe(s.total);
    expect(s.total).toBe(r.changes.length);
    expect(s.breakingClients).toBe(r.changes.filter((c) => c.clients === "breaking").length);
    expect(s.important.map((i) => [i.section, i.subject, i.path, i.reach])).toEqual([
      ["envelope", "JSONRPCMessage", "<JSONRPCResultResponse>.result.resultType", 34],
      ["definitions", "RequestMetaObject", "io.modelcontextprotocol/clientCapabilities", 8],
      ["definitions", "RequestMetaObject", "io.modelcontextprotocol/protocolVersion", 8],
    ]);
    const text = formatText(r).split("\n");
    expect(text[3]).toBe(
      `summary: ${s.total} changes: ${s.byVerdict.both} break clients and servers, ${s.byVerdict.clientsOnly} clients only, ${s.byVerdict.serversOnly} servers only; ${s.byVerdict.compatible} compatible`,
    );
    expect(text[5]).toMatch(
      /^ {2}1\. BREAKS clients\+servers envelope JSONRPCMessage: required field <JSONRPCResultResponse>\.result\.resultType added to JSONRPCMessage: .* \[34 methods\]$/,
    );
  });

  it("matches the Markdown snapshot", async () => {
    await expect(formatMarkdown(r) + "\n").toMatchFileSnapshot("__snapshots__/2025-11-25_2026-07-28.md");
  });
});

describe("our combined schema against its base", () => {
  let patched: string;
  beforeAll(() => {
    const dir = tempDir("diff-base");
    const base = JSON.parse(readFileSync(join(repoRoot, "schema/base/2025-11-25.schema.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const { schema, conflicts } = applyOverlay(base, readPatches(join(repoRoot, "schema/patches.json")), {
      base: "",
      definitions: {},
      extend: [],
    });
    expect(conflicts).toEqual([]);
    patched = join(dir, "base-patched.json");
    writeFileSync(patched, JSON.stringify(schema));
    // The sidecar's entries for the base's methods (capabilities the names do not say, empty results) hold for
    // both sides; those of the overlay's methods have nothing to apply to in the base.
    const sidecar = JSON.parse(readFileSync(join(repoRoot, "schema/methods.json"), "utf8")) as {
      methods: { method: string }[];
    };
    const defs = Object.values(
      (schema as { $defs: Record<string, { properties?: { method?: { const?: unknown } } }> }).$defs,
    );
    const inBase = new Set(defs.map((d) => d.properties?.method?.const));
    writeFileSync(
      join(dir, "methods.json"),
      JSON.stringify({ methods: sidecar.methods.filter((m) => inBase.has(m.method)) }),
    );
  });

  it("reports exactly the overlay's additions, all compatible", () => {
    const r = diff(patched, "schema/schema.json");
    expect(r.new.methods).toBe("sidecar");
    const overlay = JSON.parse(readFileSync(join(repoRoot, "schema/overlay.json"), "utf8")) as {
      definitions: Record<string, unknown>;
      extend: { path: string }[];
    };
    // Every method whose message the overlay defines is an addition; nothing else is added or removed.
    const methodOf = (d: unknown): unknown =>
      (d as { properties?: { method?: { const?: unknown } } }).properties?.method?.const;
    const overlayMethods = Object.values(overlay.definitions)
      .map(methodOf)
      .filter((m): m is string => typeof m === "string")
      .sort();
    expect(
      find(r, (c) => c.kind === "method-added")
        .map((c) => c.subject)
        .sort(),
    ).toEqual(overlayMethods);
    // Every property the overlay extends appears as one optional addition (or capability) somewhere.
    for (const ext of overlay.extend.filter((e) => e.path.includes("/properties/"))) {
      const name = ext.path.split("/").pop()!;
      const where = find(r, (c) => c.new !== null && c.new.endsWith(`/properties/${name}`));
      expect(where.length, ext.path).toBeGreaterThan(0);
      expect(where.every((c) => ["field-added-optional", "capability-added"].includes(c.kind))).toBe(true);
    }
    expect(r.changes.every((c) => c.clients === "compatible" && c.servers === "compatible")).toBe(true);
    expect(new Set(r.changes.map((c) => c.kind))).toEqual(
      new Set(["method-added", "field-added-optional", "capability-added"]),
    );
  });

  it("against the unpatched base also shows our defect patch: integer widened to number in ElicitResult breaks servers on OLD", () => {
    const r = diff("schema/base/2025-11-25.schema.json", "schema/schema.json");
    const c = one(r, (c) => c.kind === "type-widened");
    expect(c.subject).toBe("elicitation/create");
    expect(c.part).toBe("result");
    expect([c.clients, c.servers]).toEqual(["compatible", "breaking"]);
    expect(c.reason).toContain("type boolean|integer|string -> boolean|number|string");
  });

  it("a method's capability is the same fact from either side: the official file (derived) and ours (sidecar) agree", () => {
    // OLD has no sidecar, so its capabilities are derived; the specification's exceptions (completion/complete,
    // resources/(un)subscribe, tasks/cancel, tasks/list) must come out as our sidecar-backed table has them.
    const r = diff("schema/base/2025-11-25.schema.json", "schema/schema.json");
    expect(r.changes.filter((c) => c.kind.startsWith("method-capability"))).toEqual([]);
    const breaking = r.changes.filter((c) => c.clients === "breaking" || c.servers === "breaking");
    expect(breaking.map((c) => [c.subject, c.kind])).toEqual([["elicitation/create", "type-widened"]]);
  });
});

describe("schemas with keywords the model does not represent", () => {
  it("names each keyword left out of the comparison instead of ignoring it", () => {
    const dir = tempDir("diff-keyword");
    const schema = JSON.parse(readFileSync(join(referenceDir, "mcp-schema/draft/schema.json"), "utf8"));
    schema.$defs.CompleteResult.properties.completion.patternProperties = { "^x-": { type: "string" } };
    writeFileSync(join(dir, "schema.json"), JSON.stringify(schema));
    const r = diff(rev("2025-11-25"), relative(repoRoot, join(dir, "schema.json")));
    expect(
      r.notes.some(
        (n) =>
          n.startsWith("NEW: keyword patternProperties is not represented") &&
          n.includes("/$defs/CompleteResult/properties/completion/patternProperties"),
      ),
    ).toBe(true);
    const removed = one(r, (c) => c.subject === "initialize" && c.kind === "method-removed");
    expect([removed.clients, removed.servers]).toEqual(["breaking", "compatible"]);
  });

  it("compares a keyword the model holds: maxItems on completion values, added in draft, narrows the result", () => {
    const r = diff(rev("2025-11-25"), rev("draft"));
    expect(r.notes.filter((n) => n.includes("is not represented"))).toEqual([]);
    const bound = one(r, (c) => c.subject === "completion/complete" && c.kind === "bound-narrowed");
    expect([bound.part, bound.path, bound.new]).toEqual([
      "result",
      "completion.values",
      "/$defs/CompleteResult/properties/completion/properties/values",
    ]);
    expect(bound.reason).toContain("maxItems none -> 100");
    expect([bound.clients, bound.servers]).toEqual(["compatible", "breaking"]);
  });
});

describe("negotiation: a method's capability and task-augmentability", () => {
  let sidecar: string;
  beforeAll(() => {
    sidecar = join(tempDir("diff-negotiation"), "methods.json");
    const entries = [
      ...["logging/setLevel", "ping", "resources/subscribe", "resources/unsubscribe"].map((method) => ({
        method,
        result: "EmptyResult",
      })),
      // A capability the schema does not tie to the method (its category names none that the derivation would take).
      { method: "initialize", capability: "logging" },
      { method: "resources/read", capability: false },
      { method: "tools/list", capability: "prompts" },
      { method: "tools/call", task: "tasks" },
      { method: "sampling/createMessage", task: false },
    ];
    writeFileSync(sidecar, JSON.stringify({ methods: entries }));
  });
  const pair = (oldMethods: string | undefined, newMethods: string | undefined): DiffReport =>
    diffSides(
      loadSide(rev("2025-11-25"), "OLD", oldMethods ? { methods: oldMethods } : {}, repoRoot),
      loadSide(rev("2025-11-25"), "NEW", newMethods ? { methods: newMethods } : {}, repoRoot),
    );
  const rows = (r: DiffReport) =>
    r.changes.map((c) => [c.subject, c.path, c.kind, c.clients, c.servers, c.old !== null && c.new !== null]);

  it("reports each change of what must be declared, and whom it breaks", () => {
    expect(rows(pair(undefined, sidecar))).toEqual([
      ["initialize", "capability", "method-capability-added", "compatible", "breaking", true],
      ["resources/read", "capability", "method-capability-removed", "breaking", "compatible", true],
      ["sampling/createMessage", "task", "task-augmentation-removed", "compatible", "breaking", true],
      ["tools/call", "task", "task-augmentation-changed", "breaking", "compatible", true],
      ["tools/list", "capability", "method-capability-changed", "breaking", "breaking", true],
    ]);
  });

  it("the other way round: what was taken away comes back, compatibly for task augmentation", () => {
    const r = pair(sidecar, undefined);
    expect(rows(r).map(([subject, , kind, clients, servers]) => [subject, kind, clients, servers])).toEqual([
      ["initialize", "method-capability-removed", "breaking", "compatible"],
      ["resources/read", "method-capability-added", "compatible", "breaking"],
      ["sampling/createMessage", "task-augmentation-added", "compatible", "compatible"],
      ["tools/call", "task-augmentation-changed", "breaking", "compatible"],
      ["tools/list", "method-capability-changed", "breaking", "breaking"],
    ]);
    expect(one(r, (c) => c.subject === "sampling/createMessage").reason).toBe(
      "sampling/createMessage may now be task-augmented (tasks.requests.sampling.createMessage): servers built on NEW do so only when the receiver declares tasks.requests.sampling.createMessage, which clients built on OLD do not",
    );
  });
});
