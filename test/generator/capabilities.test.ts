// The capability each method needs: derived from its category and the receiver's capability object, settled by
// the methods sidecar where the name does not say it, and checked against the schema.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../generator/build-model.js";
import { SchemaErrors } from "../../generator/errors.js";
import { loadSchema } from "../../generator/load.js";
import type { Model } from "../../generator/model.js";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";

const official = join(referenceDir, "mcp-schema", "2025-11-25", "schema.json");
const ours = join(repoRoot, "schema", "schema.json");
let dir: string;
beforeAll(() => {
  dir = tempDir("capabilities");
});

/** The official sidecar entries that name the empty result (a sidecar must, for every such request). */
const emptyResults = ["logging/setLevel", "ping", "resources/subscribe", "resources/unsubscribe"].map((method) => ({
  method,
  result: "EmptyResult",
}));

let serial = 0;
function withSidecar(entries: object[]): { schemaFile: string; methodsFile: string } {
  const methodsFile = join(dir, `m${serial++}.json`);
  writeFileSync(methodsFile, JSON.stringify({ methods: entries }));
  return { schemaFile: official, methodsFile };
}

const capabilities = (m: Model): Record<string, string | undefined> =>
  Object.fromEntries(m.messages.map((x) => [x.method, x.capability]));

describe("the capability a method needs", () => {
  it("our schema with its sidecar: the category where it names the capability, the sidecar's entries elsewhere", () => {
    const model = buildModel(loadSchema(ours));
    const c = capabilities(model);
    expect(c).toMatchObject({
      "tools/call": "tools",
      "tools/async/call": "tools",
      "resources/read": "resources",
      "resources/subscribe": "resources.subscribe",
      "resources/unsubscribe": "resources.subscribe",
      "prompts/get": "prompts",
      "logging/setLevel": "logging",
      "completion/complete": "completions",
      "tasks/get": "tasks",
      "tasks/result": "tasks",
      "tasks/list": "tasks.list",
      "tasks/cancel": "tasks.cancel",
      "sampling/createMessage": "sampling",
      "elicitation/create": "elicitation",
      "roots/list": "roots",
    });
    // No category, or one that names no capability: nothing needed.
    for (const method of [
      "ping",
      "initialize",
      "requests/resume",
      "notifications/progress",
      "notifications/tasks/status",
    ])
      expect(c[method], method).toBeUndefined();
  });

  it("a sidecar's false takes the capability away; a path replaces the derived one", () => {
    const files = withSidecar([
      ...emptyResults,
      { method: "tools/list", capability: false, why: "listing is open to all" },
      { method: "prompts/get", capability: "prompts.listChanged" },
    ]);
    const c = capabilities(buildModel(loadSchema(files.schemaFile, files.methodsFile)));
    expect(c["tools/list"]).toBeUndefined();
    expect(c["tools/call"]).toBe("tools");
    expect(c["prompts/get"]).toBe("prompts.listChanged");
  });

  it("refuses a path the receiver's capabilities lack, naming the entry; both ways, both sides must have it", () => {
    const files = withSidecar([
      ...emptyResults,
      { method: "completion/complete", capability: "completion" },
      { method: "roots/list", capability: "tools" },
      { method: "tasks/get", capability: "tasks.requests.tools.call" },
    ]);
    let messages: string[] = [];
    try {
      buildModel(loadSchema(files.schemaFile, files.methodsFile));
    } catch (error) {
      if (!(error instanceof SchemaErrors)) throw error;
      messages = error.errors.map((e) => `${e.where}: ${e.message}`);
    }
    expect(messages).toEqual([
      "/methods/4/capability: ServerCapabilities has no member completion",
      "/methods/5/capability: ClientCapabilities has no member tools",
      "/methods/6/capability: ClientCapabilities has no member tasks.requests.tools.call",
    ]);
  });

  it("a schema without capability objects derives none", () => {
    const schema = JSON.parse(readFileSync(official, "utf8")) as { $defs: Record<string, unknown> };
    delete schema.$defs["ServerCapabilities"];
    const file = join(dir, "no-capabilities.schema.json");
    writeFileSync(
      file,
      JSON.stringify(schema).replaceAll('{"$ref":"#/$defs/ServerCapabilities"}', '{"type":"object"}'),
    );
    const model = buildModel(loadSchema(file));
    const c = capabilities(model);
    expect(c["tools/call"]).toBeUndefined();
    expect(c["roots/list"]).toBe("roots");
  });
});
