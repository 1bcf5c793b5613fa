// docs/guide.md, run: a project built from its files and commands with the installed CLI, typechecked, and run to print what it shows.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLISHED } from "../../packages/published.mjs";
import { follow } from "../kit/streams.js";
import { repoRoot, tempDir } from "../kit/paths.js";
import type { CliResult } from "../kit/cli.js";
import { splitCommandLine } from "../../generator/tools/command-line.js";

const guide = readFileSync(join(repoRoot, "docs/guide.md"), "utf8");
const fixtures = join(repoRoot, "test/fixtures/guide");

/** The guide's marked blocks: `<!-- kind: name -->` right before a fenced block. */
const marked = [...guide.matchAll(/<!-- (\w+): (.+?) -->\n```[^\n]*\n([\s\S]*?)```/g)].map((m) => ({
  kind: m[1]!,
  name: m[2]!,
  body: m[3]!,
}));

function block(kind: string, name: string): string {
  const found = marked.filter((b) => b.kind === kind && b.name === name);
  if (found.length !== 1) throw new Error(`docs/guide.md has ${found.length} blocks marked "${kind}: ${name}"`);
  return found[0]!.body;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split("\\").join("/"))
    .sort();
}

/** Hashes change with the standard schema; the guide writes them as `…`. Hunk positions are compared without their line numbers for the same reason. */
function normalize(text: string): string[] {
  return text
    .replace(/sha256 [0-9a-f]{64}/g, "sha256 …")
    .replace(/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@$/gm, "@@ -N$1 +N$2 @@")
    .split("\n");
}

/** The lines of an excerpt (`…` marks what it leaves out) appear in `actual` in the same order, each run of them contiguous. */
function expectExcerpt(actual: string, excerpt: string): void {
  const have = normalize(actual);
  const runs: string[][] = [[]];
  for (const line of normalize(excerpt.trimEnd())) {
    if (line === "…") runs.push([]);
    else runs.at(-1)!.push(line);
  }
  let at = 0;
  for (const run of runs.filter((r) => r.length > 0)) {
    let found = -1;
    for (let i = at; i + run.length <= have.length && found < 0; i++)
      if (run.every((line, j) => have[i + j] === line)) found = i;
    expect(found, `excerpt lines not found in order:\n${run.join("\n")}\n--- in ---\n${actual}`).toBeGreaterThanOrEqual(
      0,
    );
    at = found + run.length;
  }
}

let project: string;

/**
 * The CLI as installed in the project: node_modules/mcpgen-cli links to the assembled CLI package, which, as in a
 * real install, lies outside the project's output and so generates imports of `mcpgen/runtime` (node_modules/mcpgen
 * links to the assembled runtime package). Its own dependencies resolve from this repository's install.
 */
const CLI_BIN = "node_modules/mcpgen-cli/bin/mcpgen.js";
function installedCli(args: string[]): CliResult {
  const r = spawnSync(process.execPath, [join(project, CLI_BIN), ...args], { cwd: project, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The `npx mcpgen ...` lines of a guide block, as argument lists. */
function guideCommands(text: string): string[][] {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  for (const line of lines)
    expect(line, "a guide command block holds only `npx mcpgen` commands").toMatch(/^npx mcpgen /);
  return lines.map((l) => l.split(/\s+/).slice(2));
}

function runCommands(text: string): void {
  for (const args of guideCommands(text)) {
    const r = installedCli(args);
    expect(r.status, `mcpgen ${args.join(" ")}\n${r.stderr}`).toBe(0);
  }
}

function node(args: string[]): CliResult {
  const r = spawnSync(process.execPath, args, { cwd: project, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Misuse the typed surface must reject; an unused @ts-expect-error fails the typecheck. */
const MISUSE = `import { Client, Server } from "./mcp/sdk.js";

declare const client: Client;
declare const server: Server;

// @ts-expect-error query is a string
void client.acmeSearch({ query: 42 });
// @ts-expect-error query is required
void client.acmeSearch({ limit: 3 });
// @ts-expect-error a hit has no colour
void client.acmeSearch({ query: "x" }).then(({ hits }) => hits[0]?.colour);
// @ts-expect-error the handler answers with hits
server.onAcmeSearch(() => ({ results: [] }));
`;

let tsc: CliResult;
beforeAll(() => {
  project = tempDir("guide");
  mkdirSync(join(project, "node_modules"));
  for (const [name, dir] of Object.entries(PUBLISHED)) symlinkSync(dir, join(project, "node_modules", name), "dir");
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "acme-app", private: true, type: "module" }, null, 2),
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          skipLibCheck: true,
          outDir: "dist",
          rootDir: "src",
          types: ["node"],
        },
        include: ["src"],
      },
      null,
      2,
    ),
  );

  // Section 3, step by step: init, the overlay, the methods entry, build and generate.
  runCommands(block("run", "init"));
  cpSync(join(fixtures, "mcp/overlay.json"), join(project, "mcp/overlay.json"));
  const methodsFile = join(project, "mcp/methods.json");
  const sidecar = JSON.parse(readFileSync(methodsFile, "utf8")) as { methods: unknown[] };
  sidecar.methods.push(JSON.parse(readFileSync(join(fixtures, "mcp/methods-entry.json"), "utf8")));
  writeFileSync(methodsFile, JSON.stringify(sidecar, null, 2) + "\n");
  runCommands(block("run", "generate"));

  cpSync(join(fixtures, "src"), join(project, "src"), { recursive: true });
  writeFileSync(join(project, "src/acme-misuse.ts"), MISUSE);
  tsc = node([join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"]);
}, 180_000);

describe("docs/guide.md", () => {
  it("shows each fixture file byte for byte, and every fixture", () => {
    const shown = marked.filter((b) => b.kind === "file");
    expect(shown.map((b) => b.name).sort()).toEqual(filesUnder(fixtures));
    for (const b of shown) expect(b.body, b.name).toBe(readFileSync(join(fixtures, b.name), "utf8"));
  });

  it("is linked from the top of the README, right after the two commands", () => {
    const top = readFileSync(join(repoRoot, "README.md"), "utf8").split("\n## ")[0]!;
    expect(top).toContain("1. `npm install && npm run generate`\n2. `npm test`");
    expect(top).toContain("(docs/guide.md)");
  });
});

describe("a project built from the guide", () => {
  it("generates its SDK with the guide's commands, importing the runtime package, with headers naming the command", () => {
    const generated = readdirSync(join(project, "src/mcp")).sort();
    expect(generated).toEqual([
      "client.ts",
      "dispatch.ts",
      "guards.ts",
      "index.ts",
      "sdk.ts",
      "server.ts",
      "types.ts",
      "validators.ts",
    ]);
    for (const file of generated) {
      const text = readFileSync(join(project, "src/mcp", file), "utf8");
      expect(text, file).toContain("run `mcpgen generate --schema mcp/schema.json --out src/mcp`.\n");
      expect(text, file).not.toContain(project);
    }
    expectExcerpt(readFileSync(join(project, "src/mcp/types.ts"), "utf8"), block("excerpt", "src/mcp/types.ts"));
    expect(readFileSync(join(project, "src/mcp/sdk.ts"), "utf8")).toContain('export * from "mcpgen/runtime";');
  });

  it("typechecks the typed call and the typed handler strictly, and rejects misuse of either", () => {
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  });

  it("answers acme/search from the typed handler, in memory, printing what the guide shows", () => {
    const r = node(["dist/acme-demo.js"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(block("output", "acme-demo"));
  });

  it("runs the standard SDK over stdio, printing what the guide shows", () => {
    const r = node(["dist/stdio-client.js"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(block("output", "stdio-client"));
  });

  describe("over HTTP", () => {
    let server: ChildProcess | undefined;
    afterAll(async () => {
      if (server?.exitCode === null) {
        const exited = new Promise((resolve) => server!.once("exit", resolve));
        server.kill("SIGKILL");
        await exited;
      }
    });

    it("runs the standard SDK over Streamable HTTP, printing what the guide shows", async () => {
      server = spawn(process.execPath, ["dist/http-server.js"], { cwd: project, env: { ...process.env, PORT: "0" } });
      const line = await follow(server.stdout!)(/listening on \S+/);
      const url = line.slice("listening on ".length);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = spawn(process.execPath, ["dist/http-client.js", url], { cwd: project });
      let stdout = "";
      client.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => client.once("exit", resolve));
      expect(code).toBe(0);
      expect(stdout).toBe(block("output", "http-client"));
    });
  });

  it("passes the CI workflow's check, then reports a one-property change as the guide shows", () => {
    const workflow = readFileSync(join(fixtures, ".github/workflows/mcp.yml"), "utf8");
    const checks = [...workflow.matchAll(/run: (npx mcpgen .*)/g)].map((m) => m[1]!).join("\n");
    expect(checks).not.toBe("");
    runCommands(checks);

    const overlayFile = join(project, "mcp/overlay.json");
    const original = readFileSync(overlayFile, "utf8");
    try {
      const edited = original.replace(
        '"sku": { "type": "string" },',
        '"sku": { "type": "string" },\n        "stock": { "type": "integer" },',
      );
      expect(edited).not.toBe(original);
      writeFileSync(overlayFile, edited);
      expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
      const [checkArgs] = guideCommands(checks);
      const r = installedCli(checkArgs!);
      expect(r.status).toBe(1);
      expectExcerpt(r.stderr, block("excerpt", "check"));
    } finally {
      writeFileSync(overlayFile, original);
      expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
    }
  });

  describe("generate --watch", () => {
    let watcher: ChildProcess | undefined;
    afterAll(() => {
      watcher?.kill("SIGKILL");
    });

    it("regenerates on a save of the overlay, and writes headers that the CI check accepts", async () => {
      const [args] = guideCommands(block("run", "watch"));
      watcher = spawn(process.execPath, [CLI_BIN, ...args!], { cwd: project });
      const stdout = follow(watcher.stdout!);
      await stdout(/regenerated 8 files, 0 changed/);
      await stdout(/watching /);

      const overlayFile = join(project, "mcp/overlay.json");
      const original = readFileSync(overlayFile, "utf8");
      writeFileSync(overlayFile, original.replace('"description": "In US dollars."', '"description": "In euros."'));
      await stdout(/rebuilt {2}mcp\/schema\.json/);
      expect(await stdout(/regenerated 8 files, 8 changed[^\n]*/)).toContain("types.ts");
      const types = readFileSync(join(project, "src/mcp/types.ts"), "utf8");
      expect(types).toContain("In euros.");
      expect(types).toContain("run `mcpgen generate --schema mcp/schema.json --out src/mcp`.\n");

      const check = installedCli(
        guideCommands(block("file", ".github/workflows/mcp.yml").match(/npx mcpgen .*/)![0])[0]!,
      );
      expect(check.stderr).toBe("");
      expect(check.status).toBe(0);

      const exited = new Promise<number | null>((resolve) => watcher!.once("exit", resolve));
      watcher.kill("SIGTERM");
      expect(await exited).toBe(0);
    });
  });
});

describe("section 6: typed tools from a server's catalogue", () => {
  /** The `npx mcpgen` lines of a block, split as a shell would quote them (the --server value is one word). */
  const toolCommands = (text: string): string[][] =>
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.startsWith("npx mcpgen "))
      .map((l) => splitCommandLine(l).slice(2));
  const catalogue = () => readFileSync(join(project, "tools/everything.json"), "utf8");

  beforeAll(() => {
    // What `npm install -D @modelcontextprotocol/server-everything` gives the project: the package, found by npx.
    mkdirSync(join(project, "node_modules/@modelcontextprotocol"), { recursive: true });
    symlinkSync(
      join(repoRoot, "node_modules/@modelcontextprotocol/server-everything"),
      join(project, "node_modules/@modelcontextprotocol/server-everything"),
      "dir",
    );
  });

  it("pulls the catalogue with the guide's command, the same bytes twice, and generates the bindings", () => {
    for (const args of toolCommands(block("run", "tools-pull"))) {
      const r = installedCli(args);
      expect(r.status, `mcpgen ${args.join(" ")}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^wrote {5}tools\/everything\.json \(\d+ tools/);
    }
    const first = catalogue();
    for (const args of toolCommands(block("run", "tools-pull"))) expect(installedCli(args).status).toBe(0);
    expect(catalogue()).toBe(first);
    for (const args of toolCommands(block("run", "tools-generate"))) {
      const r = installedCli(args);
      expect(r.status, `mcpgen ${args.join(" ")}\n${r.stderr}`).toBe(0);
    }
    const bindings = readFileSync(join(project, "src/tools/index.ts"), "utf8");
    expect(bindings).toContain("Do not edit");
    expect(bindings).toContain("export function bindTools(");
  }, 120_000);

  it("passes the CI job's check against the live server, and reports a narrowed input as the guide shows", () => {
    const workflow = block("file", ".github/workflows/mcp-tools.yml");
    const [check] = toolCommands(workflow.match(/npx mcpgen tools check .*/)![0]);
    const passed = installedCli(check!);
    expect(passed.stderr).toBe("");
    expect(passed.status).toBe(0);
    // The snapshot from before the server made echo's message required.
    const snapshot = JSON.parse(catalogue()) as { tools: { name: string; inputSchema: { required?: string[] } }[] };
    const echo = snapshot.tools.find((t) => t.name === "echo")!;
    echo.inputSchema.required = (echo.inputSchema.required ?? []).filter((p) => p !== "message");
    writeFileSync(join(project, "tools/everything.json"), JSON.stringify(snapshot, null, 2) + "\n");
    const drifted = installedCli(check!);
    expect(drifted.status).toBe(1);
    expectExcerpt(drifted.stdout, block("excerpt", "tools-check"));
  }, 120_000);
});
