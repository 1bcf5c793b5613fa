// The CLI as a user runs it: real processes, exit codes (0 ok, 1 drift, 2 bad input) and messages that say where.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { cliVersion, program } from "../../generator/cli.js";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";
import { runCli } from "../kit/cli.js";
import { EVERYTHING } from "../tools/helpers.js";

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

  it("without a sidecar derives the methods from the schema and says so in one line, for generate and check", () => {
    const dir = join(work, "no-sidecar");
    mkdirSync(dir);
    cpSync(join(work, "schema/schema.json"), join(dir, "schema.json"));
    const out = join(work, "out-no-sidecar");
    const r = runCli(["generate", "--schema", join(dir, "schema.json"), "--out", out]);
    expect(r.status).toBe(0);
    const note = `note: no methods sidecar (looked for ${relative(repoRoot, dir)}/methods.json): 25 requests and 14 notifications derived from the schema's unions; logging/setLevel, ping, requests/resume, resources/subscribe, resources/unsubscribe, tools/async/get and tools/async/join answer with the empty result\n`;
    expect(r.stderr).toBe(note);
    const check = runCli(["check", "--schema", join(dir, "schema.json"), "--out", out]);
    expect(check.status).toBe(0);
    expect(check.stderr).toBe(note);
  });

  it("with a sidecar assumes no empty result: a request with no result of its own and no entry is exit 2, naming it", () => {
    const bad = join(work, "unnamed-result");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    sidecar.methods = sidecar.methods.filter((m: { method: string }) => m.method !== "ping");
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `error: ${bad}/methods.json#/methods: request ping has no result of its own (no PingResultResponse or PingResult), and with a sidecar the empty result is not assumed: name its result there, e.g. { "method": "ping", "result": "EmptyResult" } if it answers with the empty result\n`,
    );
  });

  it("fails with exit 2 when an entry names a type that does not exist", () => {
    const bad = join(work, "notype");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    const i = sidecar.methods.push({ method: "tools/list", result: "ListToolzResult" }) - 1;
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`methods.json#/methods/${i}/result`);
    expect(r.stderr).toContain("ListToolzResult");
  });

  it("reports every bad sidecar entry in one run, each with the file and its JSON pointer", () => {
    const bad = join(work, "many-bad");
    cpSync(join(work, "schema"), bad, { recursive: true });
    const sidecar = JSON.parse(readFileSync(join(bad, "methods.json"), "utf8"));
    const first = sidecar.methods.length;
    sidecar.methods.push(
      { method: "tools/list", result: "ListToolzResult" },
      { method: "no/such", result: "EmptyResult" },
      { method: "tools/call", kind: "notification" },
      { method: "prompts/get", colour: "red" },
      { method: "ping", result: "Result" },
      { method: "notifications/progress", result: "EmptyResult" },
      { method: "prompts/list", result: [] },
    );
    writeFileSync(join(bad, "methods.json"), JSON.stringify(sidecar));
    const r = runCli(["generate", "--schema", join(bad, "schema.json"), "--out", join(work, "x")]);
    expect(r.status).toBe(2);
    const lines = r.stderr.trimEnd().split("\n");
    expect(
      lines.every((l) => l.startsWith(`error: ${bad}/methods.json#/methods/`)),
      r.stderr,
    ).toBe(true);
    const at = (n: number, rest: string) => `methods.json#/methods/${first + n}${rest}: `;
    const expected = [
      at(0, "/result") + "result type ListToolzResult does not exist",
      at(1, "/method") + "method no/such is not in the schema's message unions",
      at(2, "/kind") + "CallToolRequest has an id, so it is a request, but is listed as a notification",
      at(3, "/colour") + 'methods sidecar: unknown field "colour"',
      at(4, "/method") + "method ping is listed twice",
      at(5, "/result") + "notifications/progress is a notification, and notifications have no result",
      at(6, "/result") + "methods sidecar: must",
    ];
    for (const e of expected)
      expect(
        lines.filter((l) => l.includes(e)),
        e,
      ).toHaveLength(1);
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
    writeFileSync(
      types,
      readFileSync(types, "utf8").replace("export interface CallToolResult {", "export interface CallToolResultX {"),
    );
    rmSync(join(out, "guards.ts"));
    writeFileSync(join(out, "leftover.ts"), "export {};\n");
    const r = runCli(["check", "--schema", schemaFile, "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /stale +\S*types\.ts\n--- \S*types\.ts \(on disk\)\n\+\+\+ \S*types\.ts \(generated now\)\n@@ -\d+,7 \+\d+,7 @@\n/,
    );
    expect(r.stdout).toContain("\n-export interface CallToolResultX {\n+export interface CallToolResult {\n");
    expect(r.stdout).toMatch(/missing +\S*guards\.ts/);
    expect(r.stdout).toMatch(/extra +\S*leftover\.ts/);
  });

  it("on a one-property change, prints each changed file's diff and the new schema hash once", () => {
    const dir = join(work, "one-property");
    cpSync(join(work, "schema"), dir, { recursive: true });
    const out = join(work, "out-one-property");
    expect(runCli(["generate", "--schema", join(dir, "schema.json"), "--out", out]).status).toBe(0);
    const overlayFile = join(dir, "overlay.json");
    const overlay = JSON.parse(readFileSync(overlayFile, "utf8"));
    overlay.definitions.CallToolAsyncResult.properties.region = { type: "string" };
    writeFileSync(overlayFile, JSON.stringify(overlay));
    expect(runCli(["schema", "build", "--dir", dir]).status).toBe(0);

    const r = runCli(["check", "--schema", join(dir, "schema.json"), "--out", out]);
    expect(r.status).toBe(1);
    // The files whose code changed, each with its diff; the new field is among the changed lines.
    const stale = [...r.stdout.matchAll(/^stale +(\S+)\n--- /gm)].map((m) => basename(m[1]!));
    expect(stale).toEqual(["guards.ts", "types.ts", "validators.ts"]);
    expect(r.stdout).toMatch(/^\+ +region\?: string$/m);
    expect(r.stdout).toMatch(/^\+ +const p\d+ = v\.region;$/m);
    // The rest differ only in the hash, listed together; the hash change is printed once, not once per file.
    expect(r.stdout).toMatch(
      /^stale +\S*client\.ts, \S*dispatch\.ts, \S*index\.ts, \S*sdk\.ts, \S*server\.ts: only the header differs$/m,
    );
    expect(r.stdout.match(/^[-+]\/\/ Generated by mcpgen/gm)).toHaveLength(2);
    expect(r.stdout).toMatch(/^header +of every stale file \(8\):$/m);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
      `8 files differ: run \`mcpgen generate --schema ${relative(repoRoot, dir)}/schema.json --out ${relative(repoRoot, out)}\``,
    );
  });

  it("bounds each diff by --diff-lines and counts what it leaves out; 0 prints all of it", () => {
    const schemaFile = join(work, "schema/schema.json");
    const out = join(work, "out-diff-lines");
    expect(runCli(["generate", "--schema", schemaFile, "--out", out]).status).toBe(0);
    const types = join(out, "types.ts");
    const original = readFileSync(types, "utf8");
    writeFileSync(types, original.replace(/^( +)\* /gm, "$1*  "));
    const changed = original.match(/^( +)\* /gm)!.length;
    expect(changed).toBeGreaterThan(100);

    const bounded = runCli(["check", "--schema", schemaFile, "--out", out, "--diff-lines", "10"]);
    expect(bounded.status).toBe(1);
    const body = bounded.stdout.split("\n").filter((l) => /^[-+ ]/.test(l) && !/^(---|\+\+\+) /.test(l));
    expect(body).toHaveLength(10);
    const shown = body.filter((l) => l.startsWith("-") || l.startsWith("+")).length;
    const rest = Number(/^\.\.\. (\d+) more changed lines \(\d+ more hunks\) not shown$/m.exec(bounded.stdout)?.[1]);
    expect(shown + rest).toBe(2 * changed);

    const all = runCli(["check", "--schema", schemaFile, "--out", out, "--diff-lines", "0"]);
    expect(all.stdout).not.toContain("not shown");
    expect(all.stdout.split("\n").filter((l) => /^[-+] /.test(l))).toHaveLength(2 * changed);

    const bad = runCli(["check", "--schema", schemaFile, "--out", out, "--diff-lines", "-1"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--diff-lines");
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
    expect(r.stdout).toMatch(/stale +\S*schema\.json: differs from base \+ patches \+ overlay\n@@ /);
    expect(r.stdout).toMatch(/^-\s+"description": "Names an async tool call/m);
    expect(r.stdout).toMatch(/^\+\s+"description": "changed",$/m);
    const rel = relative(repoRoot, dir);
    expect(r.stdout).toContain(
      `run \`mcpgen schema build --dir ${rel}\`, then \`mcpgen generate --schema ${rel}/schema.json --out ${relative(repoRoot, out)}\``,
    );
  });
});

describe("the command the headers and check name", () => {
  // Paths as the project names them (relative to where the command runs), whatever the user typed.
  const cases: { name: string; args: (w: string) => string[]; out: string; command: string }[] = [
    {
      name: "relative paths",
      args: () => ["--schema", "schema/schema.json", "--out", "src/mcp"],
      out: "src/mcp",
      command: "mcpgen generate --schema schema/schema.json --out src/mcp",
    },
    {
      name: "absolute paths and a trailing slash",
      args: (w) => ["--out", `${w}/abs/mcp/`, "--schema", `${w}/schema/schema.json`],
      out: "abs/mcp",
      command: "mcpgen generate --schema schema/schema.json --out abs/mcp",
    },
    {
      name: "./ paths",
      args: () => ["--schema", "./schema/schema.json", "--out", "./dot/mcp"],
      out: "dot/mcp",
      command: "mcpgen generate --schema schema/schema.json --out dot/mcp",
    },
    {
      name: "every option, in a fixed order",
      args: () => [
        "--runtime-import",
        "mcpgen/runtime",
        "--out",
        "gen",
        "--methods",
        "schema/methods.json",
        "--schema",
        "schema/schema.json",
      ],
      out: "gen",
      command:
        "mcpgen generate --schema schema/schema.json --methods schema/methods.json --out gen --runtime-import mcpgen/runtime",
    },
    {
      name: "a path that needs quoting",
      args: () => ["--out", "my sdk"],
      out: "my sdk",
      command: "mcpgen generate --out 'my sdk'",
    },
    {
      name: "an explicit config file",
      args: () => ["--config", "conf/mcpgen.json"],
      out: "from-config",
      command: "mcpgen generate --config conf/mcpgen.json",
    },
  ];

  let project: string;
  beforeAll(() => {
    project = tempDir("rerun");
    cpSync(join(repoRoot, "schema"), join(project, "schema"), { recursive: true });
    mkdirSync(join(project, "conf"));
    writeFileSync(
      join(project, "conf/mcpgen.json"),
      JSON.stringify({ schema: "../schema/schema.json", out: "../from-config" }),
    );
  });

  it.each(cases)("generate with $name", ({ args, out, command }) => {
    const r = runCli(["generate", ...args(project)], project);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    for (const file of ["client.ts", "index.ts", "types.ts", "validators.ts"]) {
      const text = readFileSync(join(project, out, file), "utf8");
      expect(text.split("\n")[2], file).toBe(
        `// Do not edit: change the schema, overlay, sidecar or templates and run \`${command}\`.`,
      );
      expect(text, file).not.toContain(project);
    }
    const check = runCli(["check", ...args(project)], project);
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it("leaves out settings that came from mcpgen.config.json", () => {
    const dir = tempDir("rerun-config");
    cpSync(join(repoRoot, "schema"), join(dir, "schema"), { recursive: true });
    writeFileSync(join(dir, "mcpgen.config.json"), JSON.stringify({ out: "sdk" }));
    expect(runCli(["generate"], dir).status).toBe(0);
    expect(readFileSync(join(dir, "sdk/index.ts"), "utf8")).toContain("run `mcpgen generate`.\n");
  });

  it("check run with other options than generate says the headers name another command", () => {
    expect(runCli(["generate", "--schema", "schema/schema.json", "--out", "gen-a"], project).status).toBe(0);
    const r = runCli(["check", "--out", "gen-a"], project);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      "client.ts, gen-a/dispatch.ts, gen-a/guards.ts, gen-a/index.ts, gen-a/sdk.ts, gen-a/server.ts, gen-a/types.ts, gen-a/validators.ts: only the header differs",
    );
    expect(r.stdout).toContain(
      "\n-// Do not edit: change the schema, overlay, sidecar or templates and run `mcpgen generate --schema schema/schema.json --out gen-a`.\n+// Do not edit: change the schema, overlay, sidecar or templates and run `mcpgen generate --out gen-a`.\n",
    );
    expect(r.stdout).toContain("give check the options generate was run with");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("8 files differ: run `mcpgen generate --out gen-a`");
  });
});

describe("mcpgen schema init", () => {
  it("starts a schema directory on mcpgen's schema that builds and generates what the standard SDK is made of", () => {
    const project = tempDir("init");
    const r = runCli(["schema", "init", "--dir", "mcp"], project);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const written = [
      "base/mcpgen.schema.json",
      "patches.json",
      "overlay.json",
      "methods.json",
      "methods.schema.json",
      "schema.json",
    ];
    expect(r.stdout.trim().split("\n")).toEqual(written.map((f) => `wrote mcp/${f}`));
    // An empty overlay and patch list on our combined schema: the combined schema comes out the same.
    expect(readFileSync(join(project, "mcp/schema.json"), "utf8")).toBe(
      readFileSync(join(repoRoot, "schema/schema.json"), "utf8"),
    );
    expect(readFileSync(join(project, "mcp/methods.json"), "utf8")).toBe(
      readFileSync(join(repoRoot, "schema/methods.json"), "utf8"),
    );
    expect(JSON.parse(readFileSync(join(project, "mcp/overlay.json"), "utf8"))).toMatchObject({
      base: "base/mcpgen.schema.json",
      definitions: {},
      extend: [],
    });
    expect(runCli(["schema", "build", "--dir", "mcp"], project).status).toBe(0);
    expect(runCli(["generate", "--schema", "mcp/schema.json", "--out", "sdk"], project).status).toBe(0);
    expect(readFileSync(join(project, "sdk/types.ts"), "utf8").split("\n")[0]).toBe(
      readFileSync(join(repoRoot, "generated/types.ts"), "utf8")
        .split("\n")[0]!
        .replace("schema/schema.json", "mcp/schema.json"),
    );
    expect(runCli(["check", "--schema", "mcp/schema.json", "--out", "sdk"], project).status).toBe(0);
  });

  it("refuses to overwrite, with exit 2, and writes nothing", () => {
    const project = tempDir("init-taken");
    mkdirSync(join(project, "mcp"));
    writeFileSync(join(project, "mcp/overlay.json"), "{}\n");
    const r = runCli(["schema", "init", "--dir", "mcp"], project);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("mcp/overlay.json already exists; nothing was written");
    expect(readdirSync(join(project, "mcp"))).toEqual(["overlay.json"]);
    expect(readFileSync(join(project, "mcp/overlay.json"), "utf8")).toBe("{}\n");
  });
});

describe("mcpgen schema build", () => {
  it("rebuilds schema.json byte for byte from base + patches + overlay", () => {
    const dir = join(work, "rebuild");
    cpSync(join(work, "schema"), dir, { recursive: true });
    rmSync(join(dir, "schema.json"));
    const r = runCli(["schema", "build", "--dir", dir]);
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, "schema.json"), "utf8")).toBe(
      readFileSync(join(repoRoot, "schema/schema.json"), "utf8"),
    );
  });

  it.each(["2025-11-25", "2026-07-28"])("keeps the vendored %s base byte for byte equal to the official file", (r) => {
    expect(readFileSync(join(repoRoot, `schema/base/${r}.schema.json`))).toEqual(
      readFileSync(join(referenceDir, `mcp-schema/${r}/schema.json`)),
    );
  });

  it("rebuilds the 2026-07-28 schema.json byte for byte from its base, patches and empty overlay", () => {
    const dir = join(work, "rebuild-2026");
    mkdirSync(dir);
    cpSync(join(work, "schema/2026-07-28"), join(dir, "2026-07-28"), { recursive: true });
    cpSync(join(work, "schema/base"), join(dir, "base"), { recursive: true });
    rmSync(join(dir, "2026-07-28/schema.json"));
    const r = runCli(["schema", "build", "--dir", join(dir, "2026-07-28")]);
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, "2026-07-28/schema.json"), "utf8")).toBe(
      readFileSync(join(repoRoot, "schema/2026-07-28/schema.json"), "utf8"),
    );
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

describe("mcpgen --version", () => {
  const packageVersion = (file: string): string =>
    (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  const cliPackage = join(repoRoot, "packages/mcpgen-cli/package.json");

  it.each([
    ["bin/mcpgen.js", "--version"],
    ["bin/mcpgen.js", "-V"],
    ["packages/mcpgen-cli/bin/mcpgen.js", "--version"],
    ["packages/mcpgen-cli/bin/mcpgen.js", "-V"],
  ])("%s %s prints mcpgen-cli's version on stdout, exit 0", (launcher, flag) => {
    const r = runCli([flag], repoRoot, join(repoRoot, launcher));
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${packageVersion(cliPackage)}\n`);
    expect(r.status).toBe(0);
  });

  it("is read from the installed package's own package.json when it runs", () => {
    // An install of mcpgen-cli whose version no other package.json has: only reading its own file prints it.
    const installed = join(tempDir("version-install"), "node_modules/mcpgen-cli");
    for (const part of ["bin", "dist"])
      cpSync(join(repoRoot, "packages/mcpgen-cli", part), join(installed, part), { recursive: true });
    const manifest = JSON.parse(readFileSync(cliPackage, "utf8")) as Record<string, unknown>;
    writeFileSync(join(installed, "package.json"), JSON.stringify({ ...manifest, version: "7.7.7-version-test" }));
    const r = runCli(["--version"], repoRoot, join(installed, "bin/mcpgen.js"));
    expect(r.stdout).toBe("7.7.7-version-test\n");
    expect(r.status).toBe(0);
  });

  it("in a checkout takes packages/mcpgen-cli's version, not the workspace's, and says where it looked when neither is there", () => {
    const root = tempDir("version-repo");
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "mcpgen-repo", version: "1.0.0" }));
    mkdirSync(join(root, "packages/mcpgen-cli"), { recursive: true });
    writeFileSync(
      join(root, "packages/mcpgen-cli/package.json"),
      JSON.stringify({ name: "mcpgen-cli", version: "2.0.0" }),
    );
    expect(cliVersion(root)).toBe("2.0.0");
    rmSync(join(root, "packages"), { recursive: true });
    expect(() => cliVersion(root)).toThrow(/mcpgen-cli's package\.json .*packages\/mcpgen-cli\/package\.json/);
  });
});

describe("mcpgen help <command>", () => {
  /** Every command the CLI registers, as the words a user types (the help command itself included). */
  const registered = (c: Command, path: string[] = []): string[] =>
    c.commands.flatMap((sub) => {
      const words = [...path, sub.name()];
      return [words.join(" "), ...registered(sub, words)];
    });
  const commands = [
    "generate",
    "check",
    "schema",
    "schema build",
    "schema init",
    "schema rebase",
    "diff",
    "tools",
    "tools pull",
    "tools generate",
    "tools check",
    "help",
  ];

  it("the table names every command there is", () => {
    expect([...commands].sort()).toEqual(registered(program()).sort());
  });

  it.each(commands)("help %s prints that command's help on stdout, the same as --help, exit 0", (command) => {
    const words = command.split(" ");
    const r = runCli(["help", ...words]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(new RegExp(`^Usage: mcpgen ${command} `));
    expect(r.stdout).toBe(runCli([...words, "--help"]).stdout);
  });

  it.each([
    [["nosuch"], "no command `mcpgen nosuch`"],
    [["tools", "nosuch"], "no command `mcpgen tools nosuch`"],
  ])("help %j is an error on stderr, exit 2", (words, message) => {
    const r = runCli(["help", ...words]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(2);
  });

  it("mcpgen alone, --help and help print the commands and which stream carries what", () => {
    const alone = runCli([]);
    expect(alone.status).toBe(0);
    for (const r of [runCli(["--help"]), runCli(["help"])]) {
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(alone.stderr);
      expect(r.stdout).toContain("Usage: mcpgen [options] [command]");
      expect(r.stdout).toContain("-V, --version");
      expect(r.stdout).toMatch(/^ {2}stdout {2}the report you ran the command for/m);
      expect(r.stdout).toMatch(/^ {2}stderr {2}diagnostics: errors/m);
    }
  });
});

describe("which stream each command writes to", () => {
  // Reports (what the user ran the command for) on stdout; diagnostics (errors, notes, advice) on stderr.
  let project: string;
  beforeAll(() => {
    project = tempDir("streams");
    expect(runCli(["schema", "init", "--dir", "mcp"], project).status).toBe(0);
    expect(runCli(["generate", "--schema", "mcp/schema.json", "--out", "sdk"], project).status).toBe(0);
    expect(runCli(["generate", "--schema", "mcp/schema.json", "--out", "stale"], project).status).toBe(0);
    const types = join(project, "stale/types.ts");
    writeFileSync(
      types,
      readFileSync(types, "utf8").replace("export interface CallToolResult {", "export interface X {"),
    );
    mkdirSync(join(project, "bare"));
    cpSync(join(project, "mcp/schema.json"), join(project, "bare/schema.json"));
    const edited = JSON.parse(readFileSync(join(project, "mcp/schema.json"), "utf8"));
    edited.$defs.Implementation.properties.region = { type: "string" };
    writeFileSync(join(project, "edited.json"), JSON.stringify(edited));
  });

  interface Row {
    name: string;
    args: string[];
    status: number;
    stdout: RegExp | "";
    stderr: RegExp | "";
  }
  const rows: Row[] = [
    {
      name: "generate: the files written and the total",
      args: ["generate", "--schema", "mcp/schema.json", "--out", "sdk"],
      status: 0,
      stdout: /^unchanged sdk\/types\.ts \(\d+ bytes\)$[^]*^\d+ files, 0 changed, in \d+ ms\n$/m,
      stderr: "",
    },
    {
      name: "generate without a sidecar: the note is a diagnostic",
      args: ["generate", "--schema", "bare/schema.json", "--out", "bare-sdk"],
      status: 0,
      stdout: /^wrote +bare-sdk\/types\.ts/m,
      stderr: /^note: no methods sidecar \(looked for bare\/methods\.json\)[^\n]*\n$/,
    },
    {
      name: "generate with a missing schema: the error",
      args: ["generate", "--schema", "nope.json", "--out", "x"],
      status: 2,
      stdout: "",
      stderr: /^error: nope\.json: schema: no such file\n$/,
    },
    {
      name: "check, up to date: the all-clear",
      args: ["check", "--schema", "mcp/schema.json", "--out", "sdk"],
      status: 0,
      stdout: /^\d+ files in sdk match mcp\/schema\.json\n$/,
      stderr: "",
    },
    {
      name: "check, stale: the report, its diffs and its summary line",
      args: ["check", "--schema", "mcp/schema.json", "--out", "stale"],
      status: 1,
      stdout:
        /^stale +stale\/types\.ts\n--- stale\/types\.ts \(on disk\)\n[^]*^-export interface X \{\n\+export interface CallToolResult \{\n[^]*\n1 file differs: run `mcpgen generate --schema mcp\/schema\.json --out stale`\n$/m,
      stderr: "",
    },
    {
      name: "check with a bad option value: the error",
      args: ["check", "--diff-lines", "x"],
      status: 2,
      stdout: "",
      stderr: /--diff-lines/,
    },
    {
      name: "schema build: the file written",
      args: ["schema", "build", "--dir", "mcp"],
      status: 0,
      stdout: /^wrote mcp\/schema\.json\n$/,
      stderr: "",
    },
    {
      name: "diff: the report",
      args: ["diff", "mcp/schema.json", "edited.json", "--format", "json", "--fail-on", "none"],
      status: 0,
      stdout: /^\{[^]*"Implementation[^]*\}\n$/,
      stderr: "",
    },
    {
      name: "diff of a missing file: the error",
      args: ["diff", "mcp/schema.json", "nope.json"],
      status: 2,
      stdout: "",
      stderr: /nope\.json/,
    },
    {
      name: "tools pull: the file written",
      args: ["tools", "pull", "--server", EVERYTHING, "--out", "tools/everything.json"],
      status: 0,
      stdout: /^wrote +tools\/everything\.json \(\d+ tools[^\n]*\n$/,
      stderr: "",
    },
    {
      name: "tools generate: the file written",
      args: ["tools", "generate", "--catalogue", "tools/everything.json", "--out", "bindings"],
      status: 0,
      stdout: /^wrote +bindings\/index\.ts \(\d+ bytes, \d+ tools\)\n$/,
      stderr: "",
    },
    {
      name: "tools check, unchanged: the all-clear",
      args: ["tools", "check", "--catalogue", "tools/everything.json", "--server", EVERYTHING],
      status: 0,
      stdout: /^tools\/everything\.json matches `[^\n]*\n$/,
      stderr: "",
    },
  ];

  it.each(rows)(
    "$name",
    ({ args, status, stdout, stderr }) => {
      const r = runCli(args, project);
      const where = `${args.join(" ")}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
      if (stdout === "") expect(r.stdout, where).toBe("");
      else expect(r.stdout, where).toMatch(stdout);
      if (stderr === "") expect(r.stderr, where).toBe("");
      else expect(r.stderr, where).toMatch(stderr);
      expect(r.status, where).toBe(status);
    },
    60_000,
  );
});
