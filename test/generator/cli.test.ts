// The CLI as a user runs it: real processes, exit codes (0 ok, 1 drift, 2 bad input) and messages that say where.
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { referenceDir, repoRoot, runCli, tempDir } from "../helpers.js";

let work: string;
beforeAll(() => {
  work = tempDir("cli");
  cpSync(join(repoRoot, "schema"), join(work, "schema"), { recursive: true });
});

describe("mcpgen generate", () => {
  it("writes one line per file and a total with the time", () => {
    const out = join(work, "out-generate");
    const r = runCli(["generate", "--schema", join(work, "schema/schema.json"), "--out", out]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.filter((l) => /^wrote +\S+\.ts \(\d+ bytes\)$/.test(l))).toHaveLength(8);
    expect(lines.at(-1)).toMatch(/^8 files, 8 changed, in \d+ ms$/);
  });

  it("fails with exit 2 naming a missing schema file", () => {
    const r = runCli(["generate", "--schema", join(work, "nope.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("nope.json");
    expect(r.stderr).toContain("no such file");
  });

  it("fails with exit 2 and line:column for invalid JSON", () => {
    const bad = join(work, "bad-json");
    cpSync(join(work, "schema"), bad, { recursive: true });
    writeFileSync(join(bad, "schema.json"), '{\n  "$defs": {\n    "A": { "type": "string", }\n  }\n}\n');
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/schema\.json:3:\d+: invalid JSON/);
  });

  it("fails with exit 2 and the JSON pointer of a dangling $ref", () => {
    const bad = join(work, "dangling");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const schema = JSON.parse(readFileSync(join(bad, "schema.json"), "utf8"));
    schema.$defs.CallToolRequestParams.properties.task.$ref = "#/$defs/NoSuchThing";
    writeFileSync(join(bad, "schema.json"), JSON.stringify(schema));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("schema.json#/$defs/CallToolRequestParams/properties/task/$ref");
    expect(r.stderr).toContain("NoSuchThing");
  });

  it("fails with exit 2 and the pointer when the schema breaks its meta-schema", () => {
    const bad = join(work, "meta");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const schema = JSON.parse(readFileSync(join(bad, "schema.json"), "utf8"));
    schema.$defs.Cursor.type = 5;
    writeFileSync(join(bad, "schema.json"), JSON.stringify(schema));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("schema.json#/$defs/Cursor/type: not a valid 2020-12 JSON Schema");
  });

  it("fails with exit 2 when the schema path is a directory", () => {
    const r = runCli(["generate", "--schema", work, "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("is a directory");
  });

  it("fails with exit 2 when a request method has no entry in the sidecar", () => {
    const bad = join(work, "unmapped");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    sidecar.methods = sidecar.methods.filter((m: { method: string }) => m.method !== "tools/call");
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("methods.json");
    expect(r.stderr).toContain("CallToolRequest");
    expect(r.stderr).toContain('"tools/call"');
  });

  it("fails with exit 2 when a request entry has no result, naming the entry", () => {
    const bad = join(work, "noresult");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    const i = sidecar.methods.findIndex((m: { method: string }) => m.method === "tools/list");
    delete sidecar.methods[i].result;
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`methods.json#/methods/${i}`);
    expect(r.stderr).toContain("result");
  });

  it("fails with exit 2 when an entry names a type that does not exist", () => {
    const bad = join(work, "notype");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    const i = sidecar.methods.findIndex((m: { method: string }) => m.method === "tools/list");
    sidecar.methods[i].result = "ListToolzResult";
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`methods.json#/methods/${i}/result`);
    expect(r.stderr).toContain("ListToolzResult");
  });

  it("rejects unknown options with exit 2 and a clear message", () => {
    const r = runCli(["generate", "--shcema", "x.json"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--shcema'");
  });

  it("has --help on every command", () => {
    for (const args of [["--help"], ["generate", "--help"], ["check", "--help"], ["schema", "build", "--help"]]) {
      const r = runCli(args);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).toContain("Usage: mcpgen");
    }
  });
});

describe("mcpgen check", () => {
  it("exits 0 on the committed tree", () => {
    const r = runCli(["check"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("exits 1 on a stale tree and names stale, missing and extra files with a diff", () => {
    const schemaFile = join(work, "schema/schema.json");
    const out = join(work, "out-check");
    expect(runCli(["generate", "--schema", schemaFile, "--out", out]).status).toBe(0);
    const types = join(out, "types.ts");
    writeFileSync(types, readFileSync(types, "utf8").replace("export interface CallToolResult {", "export interface CallToolResultX {"));
    rmSync(join(out, "guards.ts"));
    writeFileSync(join(out, "leftover.ts"), "export {};\n");
    const r = runCli(["check", "--schema", schemaFile, "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/stale +\S*types\.ts/);
    expect(r.stderr).toContain("- export interface CallToolResultX {");
    expect(r.stderr).toContain("+ export interface CallToolResult {");
    expect(r.stderr).toMatch(/missing +\S*guards\.ts/);
    expect(r.stderr).toMatch(/extra +\S*leftover\.ts/);
  });

  it("exits 1 when schema.json is stale against base + overlay", () => {
    const dir = join(work, "stale-combined");
    cpSync(join(work, "schema"), dir, { recursive: true });
    const out = join(work, "out-stale-combined");
    expect(runCli(["generate", "--schema", join(dir, "schema.json"), "--out", out]).status).toBe(0);
    const overlay = JSON.parse(readFileSync(join(dir, "overlay.json"), "utf8"));
    overlay.definitions.AsyncToken.description = "changed";
    writeFileSync(join(dir, "overlay.json"), JSON.stringify(overlay));
    const r = runCli(["check", "--schema", join(dir, "schema.json"), "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/stale +\S*schema\.json/);
  });
});

describe("mcpgen schema build", () => {
  it("rebuilds schema.json byte for byte from base + patches + overlay", () => {
    const dir = join(work, "rebuild");
    cpSync(join(work, "schema"), dir, { recursive: true });
    rmSync(join(dir, "schema.json"));
    const r = runCli(["schema", "build", "--dir", dir]);
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, "schema.json"), "utf8")).toBe(readFileSync(join(repoRoot, "schema/schema.json"), "utf8"));
  });

  it("keeps the vendored base byte for byte equal to the official file", () => {
    expect(readFileSync(join(repoRoot, "schema/base/2025-11-25.schema.json"))).toEqual(readFileSync(join(referenceDir, "mcp-schema/2025-11-25/schema.json")));
  });

  it("reports an overlay entry that no longer applies, with exit 2", () => {
    const dir = join(work, "conflict");
    cpSync(join(work, "schema"), dir, { recursive: true });
    const patches = JSON.parse(readFileSync(join(dir, "patches.json"), "utf8"));
    patches.patches[0].expect = ["string", "boolean"];
    writeFileSync(join(dir, "patches.json"), JSON.stringify(patches));
    const r = runCli(["schema", "build", "--dir", dir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("patches.json#/$defs/ElicitResult/properties/content/additionalProperties/anyOf/1/type");
  });
});
