// The packages as a user meets them: README and LICENSE in the tarballs, a real install, strict tsc on two TypeScripts, a browser bundle, require(esm).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../kit/paths.js";
import { packTarballs, runNode, typescripts, userProject, type Tarballs } from "../kit/user-project.js";

/** `tsc -p <config>` of one TypeScript in `project` prints nothing and succeeds. */
async function expectTypechecks(version: keyof typeof typescripts, config: string, project: string): Promise<void> {
  const result = await runNode(typescripts[version], ["-p", config], project);
  expect(result.out).toBe("");
  expect(result.ok).toBe(true);
}

interface Manifest {
  name: string;
  description?: string;
  keywords?: string[];
  repository?: { url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  engines?: { node?: string };
  exports: Record<string, string | Record<string, string>>;
}

// Hang guards: an install is seconds, a strict tsc over every declaration tens of seconds on a busy machine.
const timeout = 180_000;

/** The files of a tarball, and its manifest, read with tar (no unpacking). */
function tarball(path: string): { files: string[]; read(file: string): string } {
  const files = execFileSync("tar", ["-tzf", path], { encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "")
    .map((f) => f.replace(/^package\//, ""));
  return { files, read: (file) => execFileSync("tar", ["-xzOf", path, `package/${file}`], { encoding: "utf8" }) };
}

/** Whether `version` (x.y.z) satisfies a range of the form "^A.B.C || >=D.E.F", the only form the manifests use. */
function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = version.split(".").map(Number) as [number, number, number];
  const at = (v: string) => v.split(".").map(Number) as [number, number, number];
  const atLeast = (v: [number, number, number]) =>
    major !== v[0] ? major > v[0] : minor !== v[1] ? minor > v[1] : patch >= v[2];
  return range.split("||").some((part) => {
    const p = part.trim();
    if (p.startsWith("^")) return major === at(p.slice(1))[0] && atLeast(at(p.slice(1)));
    if (p.startsWith(">=")) return atLeast(at(p.slice(2)));
    throw new Error(`unexpected range ${p}`);
  });
}

/** An import or require of a node: module (the runtime's by-name lookups, `nodeBuiltin("node:http")`, are no import). */
const NODE_IMPORT = /\bimport\s*(?:[^;]*?\bfrom\s*)?["']node:|\bimport\(\s*["']node:|\brequire\(\s*["']node:/;

let tarballs: Tarballs;
beforeAll(async () => {
  tarballs = await packTarballs();
}, timeout);

describe("the packed tarballs", () => {
  const license = readFileSync(join(repoRoot, "LICENSE"), "utf8");

  it.each(["mcpgen", "cli"] as const)(
    "%s holds README.md and the repository's LICENSE, and a manifest a registry page can show",
    (which) => {
      const packed = tarball(tarballs[which]);
      expect(packed.files).toContain("README.md");
      expect(packed.files).toContain("LICENSE");
      expect(packed.read("LICENSE")).toBe(license);
      expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 mcpgen contributors\n/);
      const manifest = JSON.parse(packed.read("package.json")) as Manifest;
      const readme = packed.read("README.md");
      // Written for the package's users: its install line and the guide.
      expect(readme).toContain(`# ${manifest.name}\n`);
      expect(readme).toMatch(/npm install( --save-dev)? mcpgen/);
      expect(readme).toContain("https://github.com/mcpgen/mcpgen/blob/main/docs/guide.md");
      expect(readme).toContain("https://modelcontextprotocol.io/specification");
      expect(manifest.description).toMatch(/\w{10}/);
      expect(manifest.keywords).toEqual(expect.arrayContaining(["mcp", "model-context-protocol"]));
      expect(manifest.repository?.url).toBe("git+https://github.com/mcpgen/mcpgen.git");
      expect(manifest.homepage).toMatch(/^https:\/\/github\.com\/mcpgen\/mcpgen/);
      expect(manifest.bugs?.url).toBe("https://github.com/mcpgen/mcpgen/issues");
      expect(manifest.engines?.node).toBe("^20.19.0 || >=22.12.0");
    },
  );

  it("mcpgen's README lists every export path of its manifest", () => {
    const packed = tarball(tarballs.mcpgen);
    const manifest = JSON.parse(packed.read("package.json")) as Manifest;
    const readme = packed.read("README.md");
    const paths = Object.keys(manifest.exports).filter((p) => p !== "./package.json");
    for (const path of paths) expect(readme, path).toContain(`| \`${manifest.name}${path.slice(1)}\` |`);
  });

  it("every exports entry names its types first, and the root's browser and worker conditions the web entry", () => {
    const manifest = JSON.parse(tarball(tarballs.mcpgen).read("package.json")) as Manifest;
    for (const [path, entry] of Object.entries(manifest.exports))
      if (typeof entry !== "string") expect(Object.keys(entry)[0], path).toBe("types");
    const root = manifest.exports["."] as Record<string, string>;
    expect(root.browser).toBe("./dist/generated/sdk-web.js");
    expect(root.worker).toBe("./dist/generated/sdk-web.js");
    expect(root.default).toBe("./dist/generated/sdk.js");
  });
});

describe("a Node project that installs both tarballs", () => {
  let project: string;
  const paths = [
    "mcpgen",
    "mcpgen/generated",
    "mcpgen/runtime",
    "mcpgen/web",
    "mcpgen/redis",
    "mcpgen/auth",
    "mcpgen/validators",
  ];
  const app = [
    ...paths.map((p, i) => `import * as entry${i} from ${JSON.stringify(p)};`),
    'import { createMcpServer, createStreamableHttpServer, listenHttp, Server } from "mcpgen";',
    'import { createServer } from "node:http";',
    `export const entries = [${paths.map((_, i) => `entry${i}`).join(", ")}];`,
    'const server = createMcpServer({ serverInfo: { name: "app", version: "1.0.0" } });',
    "// The one-liners a user writes first: McpServer.connect and Server's session, as onSession.",
    "const http = createStreamableHttpServer({ onSession: (t) => server.connect(t) });",
    'createStreamableHttpServer({ onSession: (t) => Server.create({ serverInfo: { name: "app", version: "1.0.0" } }).peer.connect(t) });',
    "export const listening = listenHttp(http.nodeListener, { port: 0 });",
    "export const plain = createServer(http.nodeListener);",
    "",
  ].join("\n");
  const tsconfig = {
    compilerOptions: {
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ["node"],
    },
    include: ["*.ts"],
  };

  beforeAll(async () => {
    project = await userProject({
      files: { "app.ts": app, "tsconfig.json": JSON.stringify(tsconfig, null, 2) },
      // Node's types, and the optional peers whose entries the app imports (their types are in the declarations).
      link: ["@types/node", "ioredis", "jose", "oauth4webapi"],
    });
    // The README's examples, as installed: the server (its HTTP lines continue it) and the client.
    const blocks = [
      ...readFileSync(join(project, "node_modules/mcpgen/README.md"), "utf8").matchAll(/```ts\n([^]*?)```/g),
    ].map((m) => m[1]!);
    expect(blocks).toHaveLength(3);
    writeFileSync(join(project, "readme-server.ts"), blocks[0]! + blocks[2]!);
    writeFileSync(join(project, "readme-client.ts"), blocks[1]!);
  }, timeout);

  it.each(Object.keys(typescripts) as (keyof typeof typescripts)[])(
    "strict tsc with skipLibCheck off passes over an app importing every export path and the README's examples (TypeScript %s)",
    (version) => expectTypechecks(version, "tsconfig.json", project),
    timeout,
  );

  it(
    "a CommonJS app on this Node requires mcpgen (require(esm)) and talks to a server through Client",
    async () => {
      const manifest = JSON.parse(readFileSync(join(project, "node_modules/mcpgen/package.json"), "utf8")) as Manifest;
      expect(satisfies(process.versions.node, manifest.engines!.node!)).toBe(true);
      const script = [
        '"use strict";',
        'const { Client, createMcpServer, createInMemoryPair } = require("mcpgen");',
        'const server = createMcpServer({ serverInfo: { name: "cjs", version: "1.0.0" } });',
        "const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };",
        'server.tool("echo", { description: "echoes", inputSchema: schema }, async ({ text }) => `echo: ${text}`);',
        "(async () => {",
        "  const [clientEnd, serverEnd] = createInMemoryPair();",
        "  await server.connect(serverEnd);",
        '  const client = await Client.connect(clientEnd, { clientInfo: { name: "cjs-app", version: "1.0.0" } });',
        '  const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });',
        "  console.log(JSON.stringify(result.content));",
        "  await client.peer.close();",
        "})().catch((error) => { console.error(error); process.exit(1); });",
        "",
      ].join("\n");
      const file = join(project, "app.cjs");
      writeFileSync(file, script);
      const result = await runNode(file, [], project);
      expect(result.out).toBe(`${JSON.stringify([{ type: "text", text: "echo: hi" }])}\n`);
      expect(result.ok).toBe(true);
    },
    timeout,
  );
});

describe("a browser project (no Node types) that installs both tarballs", () => {
  let project: string;
  const main = [
    'import { Client, StreamableHttpClientTransport } from "mcpgen";',
    "",
    'const transport = new StreamableHttpClientTransport({ url: new URL("/mcp", location.href) });',
    'const client = await Client.connect(transport, { clientInfo: { name: "page", version: "1.0.0" } });',
    "const { tools } = await client.listTools();",
    'document.body.textContent = tools.map((tool) => tool.name).join(", ");',
    "",
  ].join("\n");
  const web = 'export * from "mcpgen/web";\n';
  /** As Vite's template has it: bundler resolution, no custom conditions, DOM, no @types. */
  const options = {
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    lib: ["ES2022", "DOM", "DOM.Iterable"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  };

  beforeAll(async () => {
    project = await userProject({
      files: {
        "src/main.ts": main,
        "src/web.ts": web,
        // Everything the root exports, kept by the bundle: which entry a condition picks shows in its imports.
        "src/all.ts": 'export * from "mcpgen";\n',
        "tsconfig.json": JSON.stringify({ compilerOptions: options, files: ["src/main.ts"] }, null, 2),
        "tsconfig.web.json": JSON.stringify({ compilerOptions: options, files: ["src/web.ts"] }, null, 2),
      },
    });
  }, timeout);

  it.each(Object.keys(typescripts) as (keyof typeof typescripts)[])(
    "tsc typechecks the root import of Client and StreamableHttpClientTransport, skipLibCheck off (TypeScript %s)",
    (version) => expectTypechecks(version, "tsconfig.json", project),
    timeout,
  );

  it(
    "mcpgen/web and everything its declarations reach typecheck without Node types",
    () => expectTypechecks("5.9", "tsconfig.web.json", project),
    timeout,
  );

  it(
    "esbuild bundles the root import for the browser with no node: module left (the browser condition's web entry)",
    async () => {
      const bundle = async (entry: string, platform: "browser" | "node") => {
        const out = await build({
          absWorkingDir: project,
          entryPoints: [entry],
          bundle: true,
          format: "esm",
          platform,
          target: "es2022",
          write: false,
          logLevel: "silent",
        });
        return out.outputFiles.map((f) => f.text).join("\n");
      };
      const browser = await bundle("src/main.ts", "browser");
      expect(browser).toMatch(/\bStreamableHttpClientTransport = class\b/);
      expect(browser).not.toMatch(NODE_IMPORT);
      // All of the root: the web entry for the browser; for Node the full one, stdio and node:http included.
      expect(await bundle("src/all.ts", "browser")).not.toMatch(NODE_IMPORT);
      expect(await bundle("src/all.ts", "node")).toMatch(NODE_IMPORT);
    },
    timeout,
  );
});
