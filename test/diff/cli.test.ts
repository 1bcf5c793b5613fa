// The diff, rebase and config surfaces of the CLI: exit codes, formats, and what each prints.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { main } from "../../generator/cli.js";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["node", "mcpgen", ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  process.exitCode = 0;
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const rev = (name: string): string => relative(process.cwd(), join(referenceDir, "mcp-schema", name, "schema.json"));

let work: string;
beforeAll(() => {
  work = tempDir("diff-cli");
});

describe("mcpgen diff exit codes", () => {
  it("exits 1 by default when a change breaks either side, 0 with --fail-on none", async () => {
    expect((await run(["diff", rev("2025-03-26"), rev("2025-06-18")])).code).toBe(1);
    expect((await run(["diff", rev("2025-03-26"), rev("2025-06-18"), "--fail-on", "none"])).code).toBe(0);
  });

  it("reads git:REV:path, and two equal schemas give no changes and exit 0 even with --fail-on any", async () => {
    const copy = join(work, "schema.json");
    writeFileSync(copy, execFileSync("git", ["show", "HEAD:schema/schema.json"], { cwd: repoRoot, encoding: "utf8" }));
    writeFileSync(
      join(work, "methods.json"),
      execFileSync("git", ["show", "HEAD:schema/methods.json"], { cwd: repoRoot, encoding: "utf8" }),
    );
    const r = await run(["diff", "git:HEAD:schema/schema.json", copy, "--fail-on", "any"]);
    expect(r.err).toBe("");
    expect(r.out).toContain("OLD git:HEAD:schema/schema.json (methods: sidecar git:HEAD:schema/methods.json)");
    expect(r.out).toContain("no changes");
    expect(r.code).toBe(0);
  });

  it("exits 1 with --fail-on any when only compatible changes exist, 0 with the default", async () => {
    const r = await run(["diff", rev("2024-11-05"), rev("2025-03-26"), "--fail-on", "any", "--format", "json"]);
    const report = JSON.parse(r.out) as { changes: { clients: string; servers: string }[] };
    expect(report.changes.length).toBeGreaterThan(0);
    expect(r.code).toBe(1);
    const breaking = report.changes.some((c) => c.clients === "breaking" || c.servers === "breaking");
    expect((await run(["diff", rev("2024-11-05"), rev("2025-03-26")])).code).toBe(breaking ? 1 : 0);
  });

  it("exits 2 naming a missing file, a bad git revision and an unknown format", async () => {
    const missing = await run(["diff", join(work, "nope.json"), rev("2025-06-18")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope\.json: no such file/);
    const git = await run(["diff", "git:no-such-rev:schema/schema.json", rev("2025-06-18")]);
    expect(git.code).toBe(2);
    expect(git.err).toContain("git cannot show schema/schema.json at no-such-rev");
    expect((await run(["diff", rev("2025-03-26"), rev("2025-06-18"), "--format", "yaml"])).code).toBe(2);
  });
});

describe("mcpgen diff formats", () => {
  it("text starts with the summary, then groups changes under each method or shared definition, verdict first, pointers below", async () => {
    const r = await run(["diff", rev("2025-03-26"), rev("2025-06-18")]);
    const lines = r.out.split("\n");
    expect(lines[3]).toMatch(
      /^summary: \d+ changes: \d+ break clients and servers, \d+ clients only, \d+ servers only; \d+ compatible$/,
    );
    expect(lines[4]).toBe("most important (sides broken times methods reached):");
    expect(lines[5]).toMatch(/^ {2}1\. BREAKS clients\+servers envelope JSONRPCMessage: .* \[\d+ methods\]$/);
    const at = lines.indexOf("ContentBlock (shared definition)");
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(
      /^ {2}BREAKS clients +definition ResourceLink added to the union at the top of ContentBlock: breaks clients in all of the 2 places that reach it$/,
    );
    expect(lines[at + 2]).toMatch(/^ +reached by prompts\/get result, tools\/call result$/);
    expect(lines.at(-1)).toMatch(/^\d+ changes: \d+ break clients, \d+ break servers, \d+ compatible$/);
  });

  it("markdown has one table per method for a pull request comment", async () => {
    const r = await run(["diff", rev("2025-06-18"), rev("2025-11-25"), "--format", "markdown"]);
    expect(r.out.startsWith("### mcpgen diff")).toBe(true);
    expect(r.out).toContain("#### `notifications/cancelled`\n\n| Clients | Servers | Change | OLD | NEW |");
    expect(r.out).toMatch(
      /\| \*\*breaking\*\* \| \*\*breaking\*\* \| param requestId of notifications\/cancelled params made optional/,
    );
    expect(r.out).toContain(
      "\n\n| Breaks clients and servers | Clients only | Servers only | Compatible |\n|---|---|---|---|\n| ",
    );
    expect(r.out).toMatch(/\n1\. \*\*BREAKS clients\+servers\*\* `envelope JSONRPCMessage`: /);
  });
});

describe("mcpgen diff --api", () => {
  it("classifies what an app importing the generated package feels", async () => {
    const r = await run([
      "diff",
      "--api",
      "test/fixtures/diff/api-old",
      "test/fixtures/diff/api-new",
      "--format",
      "json",
    ]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as {
      changes: { subject: string; path: string; kind: string; clients: string; servers: string }[];
    };
    const get = (subject: string, kind: string) => report.changes.find((c) => c.subject === subject && c.kind === kind);
    expect(get("Removed", "export-removed")).toMatchObject({ clients: "breaking", servers: "breaking" });
    expect(get("Task", "export-added")).toMatchObject({ clients: "compatible", servers: "compatible" });
    expect(get("CallToolResult", "member-made-optional")).toMatchObject({
      path: "structuredContent",
      clients: "breaking",
    });
    expect(get("CallToolRequestParams", "member-added")).toMatchObject({ path: "task", clients: "compatible" });
    expect(get("Client", "param-added-optional")).toMatchObject({
      path: "callTool()",
      clients: "compatible",
      servers: "compatible",
    });
    expect(get("Server", "param-added-required")).toMatchObject({
      path: "listRoots()",
      clients: "compatible",
      servers: "breaking",
    });
    expect(get("explainThing", "param-added-required")).toMatchObject({ clients: "breaking", servers: "breaking" });
    expect(get("Role", "union-member-added")).toMatchObject({ path: '"system"', clients: "compatible" });
    expect(get("clientToServer", "member-added")).toMatchObject({ path: '"tasks/get"' });
    expect(report.changes.some((c) => c.subject === "RequestId" || c.subject === "isThing")).toBe(false);
  });
});

describe("mcpgen schema rebase", () => {
  const schemaDir = join(repoRoot, "schema");
  const overlay = JSON.parse(readFileSync(join(schemaDir, "overlay.json"), "utf8")) as {
    definitions: Record<string, unknown>;
    extend: { path: string }[];
  };

  async function rebaseOnto(name: string): Promise<{ r: Run; out: string; text: string }> {
    const before = readFileSync(join(schemaDir, "schema.json"), "utf8");
    const out = join(work, `rebase-${name}`);
    const r = await run([
      "schema",
      "rebase",
      join(referenceDir, "mcp-schema", name, "schema.json"),
      "--dir",
      schemaDir,
      "--out",
      out,
    ]);
    expect(readFileSync(join(schemaDir, "schema.json"), "utf8")).toBe(before);
    return { r, out, text: readFileSync(join(out, "schema.json"), "utf8") };
  }

  /** The sidecar entries the rebase reports: exactly one line for each of `methods`, which the new base lacks. */
  function sidecarReports(r: Run, methods: string[]): void {
    const sidecar = JSON.parse(readFileSync(join(schemaDir, "methods.json"), "utf8")) as {
      methods: { method: string }[];
    };
    for (const method of methods) {
      const i = sidecar.methods.findIndex((m) => m.method === method);
      expect(r.err).toContain(
        `sidecar  schema/methods.json#/methods/${i}/method: method ${method} is not in the schema's message unions`,
      );
    }
    expect(r.err.split("\n").filter((l) => l.startsWith("sidecar "))).toHaveLength(methods.length);
  }

  /** Every overlay entry is either in the rebased schema or named as a conflict: nothing disappears unreported. */
  function nothingSilentlyDropped(r: Run, text: string): void {
    const schema = JSON.parse(text) as Record<string, Record<string, unknown>>;
    const defs = schema["$defs"] ?? schema["definitions"]!;
    for (const name of Object.keys(overlay.definitions))
      expect(name in defs || r.err.includes(`/definitions/${name}`), name).toBe(true);
    overlay.extend.forEach((ext, i) => {
      const conflicted = r.err.includes(`overlay.json#/extend/${i}:`);
      if (ext.path.endsWith("/-")) {
        expect(conflicted || text.includes(JSON.stringify(ext.path.split("/")[2])), ext.path).toBe(true);
      } else {
        const name = ext.path.split("/").pop()!;
        const parent = ext.path.split("/")[2]!;
        const applied =
          JSON.stringify(
            (defs[parent] as { properties?: Record<string, unknown> } | undefined)?.properties?.[name] ?? null,
          ) !== "null";
        expect(conflicted !== applied, ext.path).toBe(true);
      }
    });
  }

  it("onto 2025-06-18: reports the overlay entry and the patch that no longer apply, and the sidecar entries of the Tasks methods", async () => {
    const { r, text } = await rebaseOnto("2025-06-18");
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "conflict schema/overlay.json#/extend/4: /$defs/ProgressNotificationParams/properties/resourceUri: the object to extend no longer exists upstream (moved or changed shape); left out",
    );
    expect(r.err).toContain(
      "conflict schema/patches.json#/$defs/ElicitResult/properties/content/additionalProperties/anyOf/1/type: the patched location no longer exists upstream; left out",
    );
    // The sidecar's other overrides still apply; only its entry for a Tasks method (new in 2025-11-25) does not.
    sidecarReports(r, ["tasks/result"]);
    expect(r.out).toContain("OLD " + join(schemaDir, "schema.json"));
    expect(r.out).toMatch(/tasks\/get\n {2}BREAKS clients\+servers +method +request tasks\/get removed/);
    expect(r.out).toContain("conflict(s)");
    nothingSilentlyDropped(r, text);
  });

  it("onto draft: reports the union that moved and every sidecar entry for a method draft no longer has", async () => {
    const { r, text } = await rebaseOnto("draft");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /conflict schema\/overlay\.json#\/extend\/\d+: \/\$defs\/ClientNotification\/anyOf\/-: the list to append to no longer exists upstream; left out/,
    );
    const gone = ["logging/setLevel", "ping", "resources/subscribe", "resources/unsubscribe"];
    sidecarReports(r, [...gone, "tasks/result"]);
    expect(r.out).toContain("completion.values of completion/complete result: maxItems none -> 100");
    nothingSilentlyDropped(r, text);
  });

  it("onto the current base: nothing to report, exit 0, and the same schema.json", async () => {
    const { r, text } = await rebaseOnto("2025-11-25");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(text).toBe(readFileSync(join(schemaDir, "schema.json"), "utf8"));
    expect(r.out).toContain("the overlay, patches and sidecar all apply");
  });
});

describe("mcpgen.config.json", () => {
  it("rejects a bad setting with exit 2 and its JSON pointer", async () => {
    const file = join(work, "bad.config.json");
    writeFileSync(file, JSON.stringify({ out: "generated", emit: { runtimeImport: 3 } }));
    const r = await run(["check", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}#/emit/runtimeImport: must be string`);
    writeFileSync(file, JSON.stringify({ ouput: "x" }));
    expect((await run(["check", "--config", file])).err).toContain(`${file}#/ouput: unknown setting "ouput"`);
  });

  it("supplies generate's options, relative to the config file, and a flag overrides them", async () => {
    const dir = join(work, "config");
    const file = join(work, "mcpgen.config.json");
    writeFileSync(
      file,
      JSON.stringify({
        schema: relative(work, join(repoRoot, "schema/schema.json")),
        out: "config",
        emit: { runtimeImport: "mcpgen/runtime" },
      }),
    );
    const r = await run(["generate", "--config", file]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "client.ts"), "utf8")).toContain('from "mcpgen/runtime"');
    const other = join(work, "flag-out");
    expect((await run(["generate", "--config", file, "--out", other])).code).toBe(0);
    expect(existsSync(join(other, "client.ts"))).toBe(true);
  });
});
