// docs/guide.md, run: a user's project built from its files and commands with both packages installed from their tarballs.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { follow } from "../kit/streams.js";
import { repoRoot } from "../kit/paths.js";
import type { CliResult } from "../kit/cli.js";
import { typescripts, userProject } from "../kit/user-project.js";
import { expressionOf, workflowSteps, type WorkflowStep } from "../kit/workflow.js";
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

/** The CLI as installed in the project from its tarball, with its dependencies from npm. */
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

/** What the user sees of a CLI run in a terminal: the report, on stdout, and any diagnostics after it. */
const shown = (r: CliResult): string => r.stdout + r.stderr;

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

/** The web frameworks of section 2's recipes, installed in the project from the npm cache as a user would. */
const FRAMEWORKS = {
  express: "^5.3.0",
  fastify: "^5.12.8",
  hono: "^4.13.19",
  "@hono/node-server": "^2.1.9",
  koa: "^3.3.0",
};

const fixture = (name: string): string => readFileSync(join(fixtures, name), "utf8");
const workflow = (): WorkflowStep[] => workflowSteps(block("file", ".github/workflows/mcp.yml"));
/** The arguments of the workflow's `npx mcpgen check` step. */
const checkStep = (): string[] => {
  const steps = workflow().filter((s) => s.run?.startsWith("npx mcpgen check"));
  expect(steps).toHaveLength(1);
  return guideCommands(steps[0]!.run!)[0]!;
};

function git(args: string[]): void {
  const identity = ["-c", "user.name=guide", "-c", "user.email=guide@example.com", "-c", "commit.gpgsign=false"];
  const r = spawnSync("git", [...identity, ...args], {
    cwd: project,
    encoding: "utf8",
  });
  expect(r.status, `git ${args.join(" ")}\n${r.stderr}`).toBe(0);
}

const tsc = new Map<string, CliResult>();
beforeAll(async () => {
  project = await userProject({
    packageJson: { name: "acme-app" },
    files: { "tsconfig.json": fixture("tsconfig.json"), ".gitignore": "node_modules/\ndist/\n" },
    dependencies: FRAMEWORKS,
    // `npm install -D @types/node` (section 1) and section 6's reference server: linked from this repository's
    // install rather than installed again, as neither is what the test is about and the server brings many packages.
    link: ["@types/node", "@modelcontextprotocol/server-everything"],
  });

  // Section 3, step by step: init, the overlay, the methods entry, build and generate.
  runCommands(block("run", "init"));
  cpSync(join(fixtures, "mcp"), join(project, "mcp"), { recursive: true });
  const methodsFile = join(project, "mcp/methods.json");
  const sidecar = JSON.parse(readFileSync(methodsFile, "utf8")) as { methods: unknown[] };
  sidecar.methods.push(JSON.parse(block("entry", "mcp/methods.json")));
  writeFileSync(methodsFile, JSON.stringify(sidecar, null, 2) + "\n");
  runCommands(block("run", "generate"));

  cpSync(join(fixtures, "src"), join(project, "src"), { recursive: true });
  cpSync(join(fixtures, ".github"), join(project, ".github"), { recursive: true });
  writeFileSync(join(project, "src/acme-misuse.ts"), MISUSE);
  for (const [version, bin] of Object.entries(typescripts)) tsc.set(version, node([bin, "-p", "tsconfig.json"]));

  // The repository the CI workflow runs in: everything committed, and the target branch of a pull request.
  git(["init", "-q", "-b", "main"]);
  git(["add", "-A"]);
  git(["commit", "-q", "-m", "Acme's SDK"]);
  git(["update-ref", "refs/remotes/origin/main", "HEAD"]);
}, 300_000);

describe("docs/guide.md", () => {
  it("shows each fixture file byte for byte, and every fixture", () => {
    const shownFiles = marked.filter((b) => b.kind === "file");
    expect(shownFiles.map((b) => b.name).sort()).toEqual(filesUnder(fixtures));
    for (const b of shownFiles) expect(b.body, b.name).toBe(fixture(b.name));
  });

  it("docs/ci.md shows the user's workflow of section 4, byte for byte, and no other", () => {
    const ci = readFileSync(join(repoRoot, "docs/ci.md"), "utf8");
    const workflows = [...ci.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(workflows).toEqual([fixture(".github/workflows/mcp.yml")]);
  });

  it("is linked from the opening of the README, which says what mcpgen is before the two commands", () => {
    const top = readFileSync(join(repoRoot, "README.md"), "utf8").split("\n## ")[0]!;
    const commands = top.indexOf("`npm install && npm run generate`");
    expect(commands).toBeGreaterThan(0);
    expect(top.indexOf("`npm test`")).toBeGreaterThan(commands);
    expect(top.slice(0, commands)).toMatch(/Model Context Protocol/);
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

  it.each(Object.keys(typescripts))(
    "typechecks every file of the guide strictly with TypeScript %s, and rejects misuse of the typed SDK",
    (version) => {
      const r = tsc.get(version)!;
      expect(r.stdout + r.stderr).toBe("");
      expect(r.status).toBe(0);
    },
  );

  it("reads every file the guide writes: each is compiled, generated from, or run", () => {
    // What reads each kind of file the guide shows, and the proof that it did.
    const readers: { pattern: RegExp; read: (file: string) => void }[] = [
      {
        // tsc compiled it: its output is there.
        pattern: /^src\/.+\.(ts|js)$/,
        read: (file) =>
          expect(existsSync(join(project, file.replace(/^src\//, "dist/").replace(/\.ts$/, ".js"))), file).toBe(true),
      },
      {
        // The typecheck above ran with it; the line the guide explains is what TypeScript 7 needs.
        pattern: /^tsconfig\.json$/,
        read: () => {
          const config = JSON.parse(fixture("tsconfig.json")) as { compilerOptions: Record<string, unknown> };
          expect(config.compilerOptions.types).toEqual(["node"]);
          expect(tsc.get("latest")?.status).toBe(0);
        },
      },
      {
        // The schema build reads it: without it, the build fails or the SDK on disk no longer matches.
        pattern: /^mcp\/.+\.json$/,
        read: (file) => {
          expect(installedCli(checkStep()).status).toBe(0);
          renameSync(join(project, file), join(project, `${file}.away`));
          try {
            const built = installedCli(["schema", "build", "--dir", "mcp"]);
            const checked = installedCli(checkStep());
            expect(
              [built.status, checked.status],
              `nothing reads ${file}: build and check pass without it`,
            ).not.toEqual([0, 0]);
          } finally {
            renameSync(join(project, `${file}.away`), join(project, file));
            expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
          }
          expect(installedCli(checkStep()).status).toBe(0);
        },
      },
      {
        // A workflow: the CI tests below run its steps.
        pattern: /^\.github\/workflows\/.+\.yml$/,
        read: (file) =>
          expect(
            workflowSteps(fixture(file)).some((s) => s.run !== undefined),
            file,
          ).toBe(true),
      },
    ];
    for (const { name } of marked.filter((b) => b.kind === "file")) {
      const reader = readers.find((r) => r.pattern.test(name));
      expect(reader, `nothing reads ${name}, which the guide writes`).toBeDefined();
      reader!.read(name);
    }
  });

  it("reads the methods entry from mcp/methods.json: a wrong one stops the generator, naming the file", () => {
    const methodsFile = join(project, "mcp/methods.json");
    const original = readFileSync(methodsFile, "utf8");
    const entry = JSON.parse(block("entry", "mcp/methods.json")) as { method: string };
    expect(original).toContain(`"method": "${entry.method}"`);
    try {
      writeFileSync(methodsFile, original.replace('"result": "AcmeSearchResult"', '"result": "AcmeNoSuchResult"'));
      const r = installedCli(checkStep());
      expect(r.status).toBe(2);
      expect(shown(r)).toContain("AcmeNoSuchResult");
      expect(shown(r)).toContain("methods.json");
    } finally {
      writeFileSync(methodsFile, original);
    }
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

  describe("in each web framework of section 2", () => {
    /**
     * How the test starts each recipe. The fetch form is served on Node by @hono/node-server's `serve`, as the guide
     * says; the others start themselves.
     */
    const START: Record<string, string[]> = {
      "src/frameworks/express.js": ["dist/frameworks/express.js"],
      "src/frameworks/fastify.ts": ["dist/frameworks/fastify.js"],
      "src/frameworks/hono-node.ts": ["dist/frameworks/hono-node.js"],
      "src/frameworks/hono-fetch.ts": ["serve-fetch.mjs", "./dist/frameworks/hono-fetch.js"],
      "src/frameworks/koa.js": ["dist/frameworks/koa.js"],
      "src/frameworks/node-http.ts": ["dist/frameworks/node-http.js"],
    };
    const SERVE_FETCH = `import { serve } from "@hono/node-server";
const { default: app } = await import(process.argv[2]);
serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => console.log(\`listening on http://127.0.0.1:\${info.port}/mcp\`));
`;
    /**
     * The client side: the tool called over a 2025-11-25 session and as a stateless 2026-07-28 request, progress
     * included (an SSE stream on the first), a body that is not JSON, and the app's own route beside MCP.
     */
    const PROBE = `import { Client, StreamableHttpClientTransport } from "mcpgen";
const url = process.argv[2];
const report = {};
for (const [name, era] of [["legacy", "legacy"], ["modern", { pin: "2026-07-28" }]]) {
  const client = await Client.connect(new StreamableHttpClientTransport({ url }), { clientInfo: { name: "probe", version: "1.0.0" }, era });
  try {
    let progress = 0;
    const result = await client.callTool({ name: "forecast", arguments: { city: "Oslo", days: 2 } }, { onProgress: () => progress++ });
    report[name] = { era: client.peer.era, protocolVersion: client.peer.protocolVersion, progress, text: result.content.map((b) => b.text).join("") };
  } finally {
    await client.peer.close();
  }
}
const bad = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{not json" });
report.invalidJson = { status: bad.status, type: bad.headers.get("content-type"), body: await bad.json().catch(() => "not JSON") };
const health = await fetch(new URL("/health", url));
report.health = health.status;
console.log(JSON.stringify(report));
`;
    let server: ChildProcess | undefined;
    beforeAll(() => {
      writeFileSync(join(project, "serve-fetch.mjs"), SERVE_FETCH);
      writeFileSync(join(project, "probe.mjs"), PROBE);
    });
    afterEach(async () => {
      if (server?.exitCode === null) {
        const exited = new Promise((resolve) => server!.once("exit", resolve));
        server.kill("SIGKILL");
        await exited;
      }
    });

    it("has a start command for every recipe the guide shows", () => {
      const recipes = marked.filter((b) => b.kind === "file" && b.name.startsWith("src/frameworks/"));
      expect(recipes.map((b) => b.name).sort()).toEqual(Object.keys(START).sort());
    });

    it.each(Object.keys(START))(
      "%s: serves the tool on both eras through the framework, and a bad body gets its JSON-RPC error",
      async (recipe) => {
        server = spawn(process.execPath, START[recipe]!, { cwd: project, env: { ...process.env, PORT: "0" } });
        let stderr = "";
        server.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        const line = await follow(server.stdout!)(/listening on \S+/).catch((error: unknown) => {
          throw new Error(`${recipe} did not start: ${String(error)}\n${stderr}`);
        });
        const url = line.slice("listening on ".length);
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
        const probe = spawn(process.execPath, ["probe.mjs", url], { cwd: project });
        let out = "";
        probe.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        probe.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => probe.once("exit", resolve));
        expect(code, out).toBe(0);
        const report = JSON.parse(out) as Record<string, unknown>;
        const text = "Oslo: sunny for 2 days";
        expect(report.legacy).toEqual({ era: "legacy", protocolVersion: "2025-11-25", progress: 2, text });
        expect(report.modern).toEqual({ era: "modern", protocolVersion: "2026-07-28", progress: 2, text });
        expect(report.invalidJson).toEqual({
          status: 400,
          type: expect.stringMatching(/^application\/json/),
          body: { jsonrpc: "2.0", error: { code: -32700, message: expect.any(String) } },
        });
        expect(report.health).toBe(200);
        expect(stderr).toBe("");
      },
    );
  });

  it("reports a one-property change with `mcpgen check` as the guide shows", () => {
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
      const r = installedCli(checkStep());
      expect(r.status).toBe(1);
      expectExcerpt(shown(r), block("excerpt", "check"));
    } finally {
      writeFileSync(overlayFile, original);
      expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
    }
  });

  describe("the CI workflow of section 4, run step by step", () => {
    /** What the workflow's `${{ }}` expressions are on a pull request to main, where a local run can know them. */
    const LOCAL_CONTEXT: Record<string, string> = { "github.base_ref": "main" };

    /**
     * Runs each `run:` step as GitHub's runner does (`bash -e`) in the project, with the step's env; `npm ci` is
     * skipped (the project is installed), and a step that needs GitHub (the `gh` CLI, or an expression only GitHub
     * knows) has its local part checked instead: the files it posts are there. Returns each step's exit code.
     */
    function runWorkflow(): { step: string; status: number | null }[] {
      const results: { step: string; status: number | null }[] = [];
      for (const step of workflow()) {
        if (step.run === undefined || step.run.trim() === "npm ci") continue;
        const env: Record<string, string> = {};
        let needsGitHub = step.run.trimStart().startsWith("gh ");
        for (const [key, value] of Object.entries(step.env)) {
          const expression = expressionOf(value);
          if (expression === undefined) env[key] = value;
          else if (expression in LOCAL_CONTEXT) env[key] = LOCAL_CONTEXT[expression]!;
          else needsGitHub = true;
        }
        if (needsGitHub) {
          const posted = [...step.run.matchAll(/--body-file (\S+)/g)].map((m) => m[1]!);
          expect(posted, `${step.name}: the local part of a GitHub-only step`).not.toEqual([]);
          for (const file of posted) expect(readFileSync(join(project, file), "utf8"), file).not.toBe("");
          continue;
        }
        const r = spawnSync("bash", ["-e", "-c", step.run], {
          cwd: project,
          encoding: "utf8",
          env: { ...process.env, ...env },
          timeout: 60_000,
        });
        results.push({ step: step.name ?? step.run, status: r.status });
      }
      return results;
    }

    it("passes every step on the project as generated, and fails check and diff after a breaking schema edit", () => {
      const passed = runWorkflow();
      expect(passed.map((r) => r.status)).toEqual([0, 0]);
      expect(readFileSync(join(project, "mcp-diff.md"), "utf8")).not.toBe("");

      // A pull request that lowers the most hits a search may ask for: clients built on the old schema may send more.
      const overlayFile = join(project, "mcp/overlay.json");
      const original = readFileSync(overlayFile, "utf8");
      try {
        const edited = original.replace('"maximum": 50', '"maximum": 20');
        expect(edited).not.toBe(original);
        writeFileSync(overlayFile, edited);
        expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
        const failed = runWorkflow();
        expect(failed.map((r) => r.status)).toEqual([1, 1]);
        expect(readFileSync(join(project, "mcp-diff.md"), "utf8")).toContain("acme/search");
      } finally {
        writeFileSync(overlayFile, original);
        expect(installedCli(["schema", "build", "--dir", "mcp"]).status).toBe(0);
      }
    }, 120_000);
  });

  describe("generate --watch", () => {
    let watcher: ChildProcess | undefined;
    afterAll(() => {
      watcher?.kill("SIGKILL");
    });

    it("regenerates on a save of the overlay, and writes headers that the CI check accepts", async () => {
      const [args] = guideCommands(block("run", "watch"));
      watcher = spawn(process.execPath, [CLI_BIN, ...args!], { cwd: project });
      // Reports go to stdout and the watch's status lines to stderr: read them as the terminal shows them.
      const terminal = new PassThrough();
      watcher.stdout!.pipe(terminal, { end: false });
      watcher.stderr!.pipe(terminal, { end: false });
      const stdout = follow(terminal);
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

      const check = installedCli(checkStep());
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
    const steps = workflowSteps(block("file", ".github/workflows/mcp-tools.yml"));
    const [check] = toolCommands(steps.find((s) => s.run?.startsWith("npx mcpgen tools check"))!.run!);
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
