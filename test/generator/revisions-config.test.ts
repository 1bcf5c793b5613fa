// A multi-revision mcpgen.config.json as a user's project has one: generate, check, diff and --watch as real
// processes over every revision it lists, and a bad config refused with exit 2 and where.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { repoRoot, tempDir } from "../kit/paths.js";
import { follow } from "../kit/streams.js";

const REVISIONS = [
  { revision: "2025-11-25", schema: "schema/schema.json", methods: "schema/methods.json", sdk: true },
  { revision: "2026-07-28", schema: "schema/2026-07-28/schema.json", methods: "schema/2026-07-28/methods.json" },
];
const SDK_FILES = [
  "client.ts",
  "dispatch.ts",
  "guards.ts",
  "index.ts",
  "sdk.ts",
  "server.ts",
  "types.ts",
  "validators.ts",
];
const WIRE_FILES = ["dispatch.ts", "guards.ts", "index.ts", "types.ts", "validators.ts"].map((f) => `2026-07-28/${f}`);
const ALL_FILES = [...WIRE_FILES, ...SDK_FILES, "eras.ts", "revisions.ts"].sort();

/** A project of the user's: a copy of our schema directory and a config listing both revisions, output in sdk/. */
function project(config: Record<string, unknown> = { out: "sdk", revisions: REVISIONS }): string {
  const dir = tempDir("revisions-config");
  cpSync(join(repoRoot, "schema"), join(dir, "schema"), { recursive: true });
  writeFileSync(join(dir, "mcpgen.config.json"), JSON.stringify(config, null, 2));
  return dir;
}

describe("generate and check with the config's revisions", () => {
  let dir: string;
  beforeAll(() => {
    dir = project();
  });

  it("generate writes the SDK revision into out, the other's wire module into out/<revision>, and eras.ts", () => {
    const r = runCli(["generate"], dir);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.slice(0, -1).map((l) => /^wrote +sdk\/(\S+) \(\d+ bytes\)$/.exec(l)?.[1])).toEqual(ALL_FILES);
    expect(lines.at(-1)).toMatch(/^15 files, 15 changed, in \d+ ms$/);
    // Headers name the command without the settings the config supplied, as for a single schema.
    for (const f of ["eras.ts", "types.ts", "2026-07-28/types.ts"])
      expect(readFileSync(join(dir, "sdk", f), "utf8").split("\n")[2], f).toBe(
        "// Do not edit: change the schema, overlay, sidecar or templates and run `mcpgen generate`.",
      );
    // The SDK revision's files are those of the repository's own generated/, but for where the runtime lies.
    const ours = readFileSync(join(repoRoot, "generated/client.ts"), "utf8");
    expect(readFileSync(join(dir, "sdk/client.ts"), "utf8").replace(/"(\.\.\/)+runtime\//g, '"RUNTIME/')).toBe(
      ours.replace(/"(\.\.\/)+runtime\//g, '"RUNTIME/'),
    );
    expect(readFileSync(join(dir, "sdk/eras.ts"), "utf8")).toBe(
      readFileSync(join(repoRoot, "generated/eras.ts"), "utf8"),
    );
  });

  it("check covers every revision: exit 0 naming each, exit 1 naming a stale, missing or extra file of any", () => {
    const ok = runCli(["check"], dir);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    expect(ok.stdout.trim()).toBe(
      "15 files in sdk match 2025-11-25 (schema/schema.json), 2026-07-28 (schema/2026-07-28/schema.json)",
    );

    const types = join(dir, "sdk/2026-07-28/types.ts");
    const original = readFileSync(types, "utf8");
    writeFileSync(types, original.replace("ttlMs: number\n", "ttlMs: string\n"));
    const eras = readFileSync(join(dir, "sdk/eras.ts"), "utf8");
    rmSync(join(dir, "sdk/eras.ts"));
    writeFileSync(join(dir, "sdk/2026-07-28/leftover.ts"), "export {};\n");
    const r = runCli(["check"], dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^stale +sdk\/2026-07-28\/types\.ts\n--- /m);
    expect(r.stdout).toMatch(/^-\s+ttlMs: string$/m);
    expect(r.stdout).toMatch(/^missing +sdk\/eras\.ts$/m);
    expect(r.stdout).toMatch(/^extra +sdk\/2026-07-28\/leftover\.ts$/m);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("3 files differ: run `mcpgen generate`");
    writeFileSync(types, original);
    writeFileSync(join(dir, "sdk/eras.ts"), eras);
    rmSync(join(dir, "sdk/2026-07-28/leftover.ts"));
    expect(runCli(["check"], dir).status).toBe(0);
  });

  it("check finds a revision's combined schema stale against its base + patches + overlay and names the build", () => {
    const stale = project();
    expect(runCli(["generate"], stale).status).toBe(0);
    const overlayFile = join(stale, "schema/2026-07-28/overlay.json");
    const overlay = JSON.parse(readFileSync(overlayFile, "utf8"));
    overlay.definitions.RegionHint = { type: "string", description: "Where to run." };
    writeFileSync(overlayFile, JSON.stringify(overlay));
    const r = runCli(["check"], stale);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^stale +schema\/2026-07-28\/schema\.json: differs from base \+ patches \+ overlay$/m);
    expect(r.stdout).toMatch(/^\+\s+"RegionHint": \{$/m);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
      "1 file differs: run `mcpgen schema build --dir schema/2026-07-28`, then `mcpgen generate`",
    );
    expect(runCli(["schema", "build", "--dir", "schema/2026-07-28"], stale).status).toBe(0);
    // The rebuilt schema has a new hash and a new type: the 2026-07-28 files and the era map are stale now.
    const after = runCli(["check"], stale);
    expect(after.status).toBe(1);
    expect(after.stdout).toMatch(/^stale +sdk\/2026-07-28\/types\.ts\n/m);
    expect(after.stdout).toContain("sdk/eras.ts");
    expect(after.stdout).not.toMatch(/^stale +sdk\/types\.ts/m);
  });

  it("a revision without a sidecar is derived from its schema, and the note names the revision", () => {
    const bare = project();
    rmSync(join(bare, "schema/2026-07-28/methods.json"));
    const config = { out: "sdk", revisions: [REVISIONS[0], { ...REVISIONS[1], methods: undefined }] };
    writeFileSync(join(bare, "mcpgen.config.json"), JSON.stringify(config));
    const r = runCli(["generate"], bare);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(
      "note: 2026-07-28: no methods sidecar (looked for schema/2026-07-28/methods.json): 10 requests and 8 notifications derived from the schema's unions\n",
    );
    // Without the sidecar nothing names the Mcp-Name params (the schema does not say them); the rest is derived.
    const eras = readFileSync(join(bare, "sdk/eras.ts"), "utf8");
    expect(eras).toMatch(/mcpName: \{\},\n\s+inputRequests: \{\n\s+"elicitation\/create"/);
    expect(eras).toContain('"tools/list": "ListToolsResult"');
  });

  it("--schema on the command line generates that one schema, as without revisions", () => {
    const r = runCli(["generate", "--schema", "schema/schema.json", "--out", "single"], dir);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(/^8 files, 8 changed/);
    expect(readFileSync(join(dir, "single/types.ts"), "utf8")).toBe(
      readFileSync(join(dir, "sdk/types.ts"), "utf8").replace(
        "run `mcpgen generate`.",
        "run `mcpgen generate --schema schema/schema.json --out single`.",
      ),
    );
    const methodsOnly = runCli(["generate", "--methods", "schema/methods.json"], dir);
    expect(methodsOnly.status).toBe(2);
    expect(methodsOnly.stderr).toContain("--methods names one sidecar, but the config lists revisions");
  });

  it("an explicit --config is named in every header", () => {
    const conf = tempDir("revisions-config-named");
    cpSync(join(repoRoot, "schema"), join(conf, "schema"), { recursive: true });
    mkdirSync(join(conf, "conf"));
    writeFileSync(
      join(conf, "conf/mcp.json"),
      JSON.stringify({
        out: "../gen",
        revisions: REVISIONS.map((r) => ({ ...r, schema: `../${r.schema}`, methods: `../${r.methods}` })),
      }),
    );
    expect(runCli(["generate", "--config", "conf/mcp.json"], conf).status).toBe(0);
    for (const f of ["eras.ts", "2026-07-28/dispatch.ts", "server.ts"])
      expect(readFileSync(join(conf, "gen", f), "utf8").split("\n")[2], f).toBe(
        "// Do not edit: change the schema, overlay, sidecar or templates and run `mcpgen generate --config conf/mcp.json`.",
      );
    expect(runCli(["check", "--config", "conf/mcp.json"], conf).status).toBe(0);
  });
});

describe("a bad multi-revision config", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "schema beside revisions",
      { schema: "schema/schema.json", revisions: REVISIONS },
      'mcpgen.config.json#/schema: "schema" and "revisions" exclude each other',
    ],
    [
      "an overlay setting beside revisions",
      { overlay: "schema/overlay.json", revisions: REVISIONS },
      'mcpgen.config.json#/overlay: "overlay" and "revisions" exclude each other: with revisions, each revision\'s overlay lies beside its schema',
    ],
    [
      "a revision listed twice",
      { revisions: [REVISIONS[0], { ...REVISIONS[1], revision: "2025-11-25" }] },
      "mcpgen.config.json#/revisions/1/revision: revision 2025-11-25 is listed twice (first at /revisions/0)",
    ],
    [
      "two SDK revisions",
      { revisions: [REVISIONS[0], { ...REVISIONS[1], sdk: true }] },
      "mcpgen.config.json#/revisions/1/sdk: only one revision can be the SDK's (the stubs are one set); 2025-11-25 and 2026-07-28 are marked",
    ],
    [
      "an unknown field in a revision",
      { revisions: [REVISIONS[0], { ...REVISIONS[1], overlay: "x.json" }] },
      'mcpgen.config.json#/revisions/1/overlay: unknown setting "overlay"',
    ],
    [
      "a revision name that is no folder name",
      { revisions: [REVISIONS[0], { ...REVISIONS[1], revision: "../up" }] },
      "mcpgen.config.json#/revisions/1/revision: must match pattern",
    ],
    [
      "a revision without a schema",
      { revisions: [REVISIONS[0], { revision: "2026-07-28" }] },
      "mcpgen.config.json#/revisions/1: must have required property 'schema'",
    ],
    [
      "a revision whose schema is missing",
      { revisions: [REVISIONS[0], { ...REVISIONS[1], schema: "schema/nope.json" }] },
      "schema/nope.json: schema: no such file",
    ],
  ];
  it.each(cases)("%s: exit 2 for generate and check, saying where", (_name, config, message) => {
    const dir = project(config);
    for (const command of ["generate", "check"]) {
      const r = runCli([command], dir);
      expect(r.status, command).toBe(2);
      expect(r.stderr, command).toContain(message);
    }
  });
});

describe("mcpgen diff with the config's revisions", () => {
  it("takes a revision's name for its schema and sidecar", () => {
    const dir = project();
    const r = runCli(["diff", "2025-11-25", "2026-07-28", "--format", "json", "--fail-on", "none"], dir);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as {
      old: unknown;
      new: unknown;
      changes: { subject: string; kind: string }[];
    };
    expect(report.old).toEqual({ file: "schema/schema.json", methods: "sidecar", methodsFile: "schema/methods.json" });
    expect(report.new).toEqual({
      file: "schema/2026-07-28/schema.json",
      methods: "sidecar",
      methodsFile: "schema/2026-07-28/methods.json",
    });
    const removed = report.changes.filter((c) => c.kind === "method-removed").map((c) => c.subject);
    expect(removed).toEqual(expect.arrayContaining(["initialize", "ping", "logging/setLevel", "tools/async/call"]));
    expect(removed).not.toContain("notifications/cancelled");
    // The same comparison between the files gives the same changes.
    const files = runCli(
      ["diff", "schema/schema.json", "schema/2026-07-28/schema.json", "--format", "json", "--fail-on", "none"],
      dir,
    );
    expect((JSON.parse(files.stdout) as { changes: unknown }).changes).toEqual(report.changes);
  });

  it("a file of the revision's name wins over the revision", () => {
    const dir = project();
    cpSync(join(dir, "schema/2026-07-28/schema.json"), join(dir, "2025-11-25"));
    const r = runCli(
      ["diff", "2025-11-25", "2026-07-28", "--old-methods", "schema/2026-07-28/methods.json", "--format", "json"],
      dir,
    );
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { old: { file: string }; changes: unknown[] };
    expect(report.old.file).toBe("2025-11-25");
    expect(report.changes).toEqual([]);
  });

  it("a name that is neither a file nor a revision is a missing file, exit 2", () => {
    const r = runCli(["diff", "2025-11-25", "2027-01-01"], project());
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("2027-01-01: no such file");
  });
});

describe("mcpgen generate --watch with the config's revisions", () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("rebuilds the revision whose overlay changed, then every file", async () => {
    const dir = project();
    child = spawn(process.execPath, [join(repoRoot, "bin/mcpgen.js"), "generate", "--watch"], { cwd: dir });
    const stdout = follow(child.stdout);
    const stderr = follow(child.stderr);
    await stdout(/regenerated 15 files, 15 changed/);
    await stderr(/watching .*2026-07-28\/overlay\.json/);
    const overlayFile = join(dir, "schema/2026-07-28/overlay.json");
    const overlay = JSON.parse(readFileSync(overlayFile, "utf8"));
    overlay.definitions.RegionHint = { type: "string", description: "Where to run." };
    writeFileSync(overlayFile, JSON.stringify(overlay));
    await stdout(/rebuilt {2}schema\/2026-07-28\/schema\.json/);
    const line = await stdout(/regenerated 15 files, \d+ changed[^\n]*/);
    expect(line).toContain("2026-07-28/types.ts");
    expect(line).toContain("eras.ts");
    expect(line).not.toMatch(/[ (]types\.ts/);
    expect(readFileSync(join(dir, "sdk/2026-07-28/types.ts"), "utf8")).toContain("export type RegionHint = string");
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
    expect(code).toBe(0);
  }, 60_000);
});
