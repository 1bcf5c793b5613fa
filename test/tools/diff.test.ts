// mcpgen diff on two catalogues and mcpgen tools check against the live server: each tool classified for its callers, exit codes 0, 1 and 2.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCliAsync } from "../kit/cli.js";
import { tempDir } from "../kit/paths.js";
import { cliIn, EVERYTHING } from "./helpers.js";

type Json = { [key: string]: unknown };
type Tool = { name: string; description?: string; inputSchema: Json; outputSchema?: Json };
interface Report {
  format: string;
  summary: { total: number; breaking: number; compatible: number };
  subjects: { section: string; subject: string; classes: string[]; callers: string }[];
  changes: { subject: string; part: string; kind: string; callers: string; old: string | null; new: string | null }[];
}

let work: string;
let everything: { tools: Tool[] } & Json;

const cli = (args: string[]) => cliIn(work, args);

function write(name: string, value: unknown): string {
  writeFileSync(join(work, name), JSON.stringify(value, null, 2) + "\n");
  return name;
}

/** server-everything's catalogue with `edit` applied to its echo tool. */
function editedEcho(name: string, edit: (echo: Tool) => void): string {
  const copy = structuredClone(everything);
  edit(copy.tools.find((t) => t.name === "echo")!);
  return write(name, copy);
}

beforeAll(async () => {
  work = tempDir("tools-diff");
  const pulled = await runCliAsync(["tools", "pull", "--server", EVERYTHING, "--out", "everything.json"], work);
  expect(pulled.status, pulled.stderr).toBe(0);
  everything = JSON.parse(readFileSync(join(work, "everything.json"), "utf8")) as typeof everything;
  // echo with one more required argument: narrower than what the server accepts.
  editedEcho("narrowed.json", (echo) => {
    (echo.inputSchema["properties"] as Json)["count"] = { type: "integer" };
    (echo.inputSchema["required"] as string[]).push("count");
  });
  // echo described otherwise: documentation drift only.
  editedEcho("described.json", (echo) => {
    echo.description = "Says it again.";
  });
  // echo with its argument optional: the live server, which requires it, is narrower than this snapshot.
  editedEcho("widened.json", (echo) => {
    echo.inputSchema["required"] = [];
  });
}, 60_000);

describe("mcpgen diff <old catalogue> <new catalogue>", () => {
  it("reports a narrowed input as breaking for callers (exit 1), in text, Markdown and JSON", async () => {
    const text = await cli(["diff", "everything.json", "narrowed.json"]);
    expect(text.err).toBe("");
    expect(text.code).toBe(1);
    expect(text.out).toContain("OLD everything.json (mcp-servers/everything 2.0.0, protocol 2025-11-25)");
    expect(text.out).toContain("tool echo: input-narrowed (BREAKING)");
    expect(text.out).toContain("required argument count added to echo: callers built on OLD do not send it");
    expect(text.out).toContain("1 change: 1 breaking for callers, 0 compatible");

    const json = await cli(["diff", "everything.json", "narrowed.json", "--format", "json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as Report;
    expect(report.format).toBe("mcpgen-catalogue-diff/1");
    expect(report.subjects).toEqual([
      { section: "tools", subject: "echo", classes: ["input-narrowed"], callers: "breaking" },
    ]);
    const echoAt = everything.tools.findIndex((t) => t.name === "echo");
    expect(report.changes).toMatchObject([
      {
        subject: "echo",
        part: "input",
        kind: "field-added-required",
        callers: "breaking",
        old: `/tools/${echoAt}/inputSchema`,
        new: `/tools/${echoAt}/inputSchema/properties/count`,
      },
    ]);

    const markdown = await cli(["diff", "everything.json", "narrowed.json", "--format", "markdown"]);
    expect(markdown.out).toContain("#### `tool echo`: input-narrowed (**breaking**)");
    expect(markdown.out).toContain("| **breaking** | input | required argument count added to echo");
  });

  it("exit codes as for schemas: 0 when nothing breaks, 1 with --fail-on any for any change, 0 for equal files", async () => {
    expect((await cli(["diff", "everything.json", "described.json"])).code).toBe(0);
    expect((await cli(["diff", "everything.json", "described.json", "--fail-on", "any"])).code).toBe(1);
    expect((await cli(["diff", "everything.json", "narrowed.json", "--fail-on", "none"])).code).toBe(0);
    const same = await cli(["diff", "everything.json", "everything.json", "--fail-on", "any"]);
    expect(same.out).toContain("no changes");
    expect(same.code).toBe(0);
  });

  interface Prop {
    type?: string;
    enum?: string[];
    description?: string;
  }
  interface ObjectSchema {
    type: "object";
    title?: string;
    properties: Record<string, Prop>;
    required: string[];
  }
  interface SearchTool {
    name: string;
    description?: string;
    inputSchema: ObjectSchema;
    outputSchema?: ObjectSchema;
  }
  const tool: SearchTool = {
    name: "t",
    description: "Searches.",
    inputSchema: {
      type: "object",
      properties: { q: { type: "string", enum: ["a", "b"] }, n: { type: "number" } },
      required: ["q"],
    },
    outputSchema: {
      type: "object",
      properties: { hits: { type: "integer" }, note: { type: "string" } },
      required: ["hits"],
    },
  };
  const catalogue = (tools: (Tool | SearchTool)[], prompts: Json[] = []) => ({
    mcpgenCatalogue: 1,
    server: { name: "s", version: "1" },
    protocolVersion: "2025-11-25",
    tools,
    prompts,
    resourceTemplates: [],
  });
  const edit = (change: (t: SearchTool & { outputSchema: ObjectSchema }) => void): SearchTool[] => {
    const copy = structuredClone(tool) as SearchTool & { outputSchema: ObjectSchema };
    change(copy);
    return [copy];
  };

  it.each<[string, SearchTool[], string[], string, number]>([
    ["a tool added", [tool, { ...tool, name: "u" }], ["added"], "u", 0],
    ["a tool removed", [], ["removed"], "t", 1],
    ["a new required property", edit((t) => void (t.inputSchema.required = ["q", "n"])), ["input-narrowed"], "t", 1],
    ["a property removed", edit((t) => void delete t.inputSchema.properties.n), ["input-narrowed"], "t", 1],
    ["a type narrowed", edit((t) => void (t.inputSchema.properties.n.type = "integer")), ["input-narrowed"], "t", 1],
    ["enum values removed", edit((t) => void (t.inputSchema.properties.q.enum = ["a"])), ["input-narrowed"], "t", 1],
    [
      "an optional property added",
      edit((t) => void (t.inputSchema.properties.z = { type: "boolean" })),
      ["input-widened"],
      "t",
      0,
    ],
    ["enum values added", edit((t) => void t.inputSchema.properties.q.enum!.push("c")), ["input-widened"], "t", 0],
    [
      "a result property no longer required",
      edit((t) => void (t.outputSchema.required = [])),
      ["output-widened"],
      "t",
      1,
    ],
    [
      "a result type widened",
      edit((t) => void (t.outputSchema.properties.hits.type = "number")),
      ["output-widened"],
      "t",
      1,
    ],
    [
      "a result property made required",
      edit((t) => void t.outputSchema.required.push("note")),
      ["output-narrowed"],
      "t",
      0,
    ],
    ["the outputSchema removed", edit((t) => void delete (t as SearchTool).outputSchema), ["output-widened"], "t", 1],
    ["the description", edit((t) => void (t.description = "Finds.")), ["description-only"], "t", 0],
    [
      "a property's description",
      edit((t) => void (t.inputSchema.properties.q.description = "The query.")),
      ["description-only"],
      "t",
      0,
    ],
    ["a title inside the schema", edit((t) => void (t.outputSchema.title = "Hits")), ["description-only"], "t", 0],
    [
      "a keyword mcpgen does not compare",
      edit((t) => void ((t.inputSchema as unknown as Json)["patternProperties"] = { "^x-": { type: "string" } })),
      ["input-changed"],
      "t",
      1,
    ],
  ])("%s", async (_name, tools, classes, subject, code) => {
    const r = await cli([
      "diff",
      write("old.json", catalogue([tool])),
      write("new.json", catalogue(tools)),
      "--format",
      "json",
    ]);
    const report = JSON.parse(r.out) as Report;
    expect(report.subjects).toEqual([
      { section: "tools", subject, classes, callers: code === 1 ? "breaking" : "compatible" },
    ]);
    expect(r.code).toBe(code);
  });

  it("prompts: an argument made required breaks callers, a prompt added does not", async () => {
    const prompt = { name: "p", arguments: [{ name: "city", required: false }] };
    const r = await cli([
      "diff",
      write("old.json", catalogue([tool], [prompt])),
      write(
        "new.json",
        catalogue([tool], [{ ...prompt, arguments: [{ name: "city", required: true }] }, { name: "q" }]),
      ),
      "--format",
      "json",
    ]);
    const report = JSON.parse(r.out) as Report;
    expect(report.subjects).toEqual([
      { section: "prompts", subject: "p", classes: ["input-narrowed"], callers: "breaking" },
      { section: "prompts", subject: "q", classes: ["added"], callers: "compatible" },
    ]);
    expect(r.code).toBe(1);
  });

  it("bad input exits 2: a catalogue against a schema, a bad catalogue with its pointer, schema-only options", async () => {
    const mixed = await cli(["diff", "everything.json", write("schema.json", { $defs: {} })]);
    expect(mixed.err).toBe(
      'error: schema.json#: not a tool catalogue (no "mcpgenCatalogue" member), but everything.json is one: compare two catalogues or two schemas',
    );
    expect(mixed.code).toBe(2);
    const bad = catalogue([{ name: "t", inputSchema: { type: "object", properties: { a: { $ref: "#/nowhere" } } } }]);
    const dangling = await cli(["diff", "everything.json", write("bad.json", bad)]);
    expect(dangling.err).toContain(
      'error: bad.json#/tools/0/inputSchema/properties/a/$ref: $ref "#/nowhere" names nothing',
    );
    expect(dangling.code).toBe(2);
    const option = await cli(["diff", "everything.json", "narrowed.json", "--convention"]);
    expect(option.err).toBe("error: --convention: for schemas, not tool catalogues");
    expect(option.code).toBe(2);
  });
});

describe("mcpgen tools check", () => {
  it("passes a snapshot the server still matches (exit 0)", async () => {
    const r = await runCliAsync(["tools", "check", "--catalogue", "everything.json", "--server", EVERYTHING], work);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^everything\.json matches `.*` \(\d+ tools, \d+ prompts, \d+ resource templates\)\n$/);
    expect(r.status).toBe(0);
    const json = await runCliAsync(
      ["tools", "check", "--catalogue", "everything.json", "--server", EVERYTHING, "--format", "json"],
      work,
    );
    expect((JSON.parse(json.stdout) as Report).changes).toEqual([]);
    expect(json.status).toBe(0);
  }, 60_000);

  it("reports the input the server narrowed since the snapshot (exit 1, even with --fail-on breaking)", async () => {
    const r = await runCliAsync(
      ["tools", "check", "--catalogue", "widened.json", "--server", EVERYTHING, "--fail-on", "breaking"],
      work,
    );
    expect(r.stdout).toContain("NEW live `");
    expect(r.stdout).toContain("tool echo: input-narrowed (BREAKING)");
    expect(r.stdout).toContain("argument message of echo made required: callers built on OLD may leave it out");
    expect(r.stderr).toContain("widened.json differs from `");
    expect(r.status).toBe(1);
    // The snapshot narrowed by hand: the live echo lacks the argument callers built on it send.
    const narrowed = await runCliAsync(
      ["tools", "check", "--catalogue", "narrowed.json", "--server", EVERYTHING],
      work,
    );
    expect(narrowed.stdout).toContain("argument count removed from echo: callers built on OLD may still send it");
    expect(narrowed.status).toBe(1);
  }, 60_000);

  it("reports any drift by default (exit 1), only breaking drift with --fail-on breaking", async () => {
    const r = await runCliAsync(["tools", "check", "--catalogue", "described.json", "--server", EVERYTHING], work);
    expect(r.stdout).toContain("tool echo: description-only (compatible)");
    expect(r.status).toBe(1);
    const lenient = await runCliAsync(
      ["tools", "check", "--catalogue", "described.json", "--server", EVERYTHING, "--fail-on", "breaking"],
      work,
    );
    expect(lenient.status).toBe(0);
  }, 60_000);

  it("exits 2 on a bad snapshot with the file and JSON pointer, before starting the server", async () => {
    const bad = structuredClone(everything);
    bad.tools[0]!.inputSchema = { type: "object", properties: { a: { $ref: "#/$defs/Gone" } } };
    write("bad-snapshot.json", bad);
    const r = await runCliAsync(
      ["tools", "check", "--catalogue", "bad-snapshot.json", "--server", "no-such-program-mcpgen"],
      work,
    );
    expect(r.stderr).toBe(
      'error: bad-snapshot.json#/tools/0/inputSchema/properties/a/$ref: $ref "#/$defs/Gone" names nothing in this inputSchema (references resolve inside the tool\'s own schema; nothing is fetched)\n',
    );
    expect(r.status).toBe(2);
  }, 30_000);
});
