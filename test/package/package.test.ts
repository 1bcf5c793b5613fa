// The published packages as a consumer gets them: what each tarball holds, a strict typecheck of every export path, attw and publint.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { beforeAll, describe, expect, it } from "vitest";
import { isRepoOnlyFile, PUBLISHED } from "../../packages/published.mjs";
import { repoRoot, tempDir } from "../kit/paths.js";
import { packTarballs, runNode } from "../kit/user-project.js";

const run = promisify(execFile);
const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
const attw = join(repoRoot, "node_modules/@arethetypeswrong/cli/dist/index.js");

/**
 * One row per published package; everything else is read from its package.json. `consumer`: whether an app
 * imports it (the typecheck of every export path); `dependencies`: whether it may have any (the runtime has none).
 */
const PACKAGES = [
  { dir: PUBLISHED.mcpgen, tarball: "mcpgen", consumer: true, dependencies: false },
  { dir: PUBLISHED["mcpgen-cli"], tarball: "cli", consumer: false, dependencies: true },
] as const;

/**
 * Optional peers the package declares without importing them, each with why: a peer the code needs it imports,
 * so any other declared peer is a mistake unless listed here.
 */
const PEERS_NOT_IMPORTED: Record<string, string> = {
  "@opentelemetry/api":
    "the tracer an app passes in is called, never imported: the peer pins the API version it implements",
};

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string; default?: string }>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  bundleDependencies?: unknown;
  scripts?: Record<string, string>;
}

/** How a consumer's tsconfig resolves modules: Node's own rules, and a bundler's. */
const RESOLUTIONS = {
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
};

/**
 * The bare module names a built file imports: statements at the start of a line (tsc writes them so; code the
 * generator emits as text is indented or quoted) and dynamic imports of a string literal. Relative imports are left out.
 */
function bareImports(code: string): string[] {
  const statements = [
    ...code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm),
  ];
  const dynamic = [...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)];
  const specifiers = [...statements, ...dynamic].map((m) => (m[1] ?? m[2])!).filter((s) => !s.startsWith("."));
  return specifiers.map((s) =>
    s.startsWith("node:")
      ? s
      : s
          .split("/")
          .slice(0, s.startsWith("@") ? 2 : 1)
          .join("/"),
  );
}

/** A consumer project with the tarball installed, its dependencies and peers linked from this repo's install. */
function consumerProject(manifest: Manifest, unpacked: string): string {
  const dir = tempDir("consumer");
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, dirname(manifest.name)), { recursive: true });
  symlinkSync(unpacked, join(modules, manifest.name), "dir");
  const linked = ["@types/node", ...Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })];
  for (const name of linked) {
    mkdirSync(join(modules, dirname(name)), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", name), join(modules, name), "dir");
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const paths = Object.keys(manifest.exports)
    .filter((p) => p !== "./package.json")
    .map((p) => manifest.name + p.slice(1));
  const program = [
    ...paths.map((p, i) => `import * as entry${i} from ${JSON.stringify(p)};`),
    `export const entries = [${paths.map((_, i) => `entry${i}`).join(", ")}];`,
    "",
  ];
  writeFileSync(join(dir, "main.ts"), program.join("\n"));
  for (const [name, options] of Object.entries(RESOLUTIONS)) {
    const config = {
      compilerOptions: {
        ...options,
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        target: "es2022",
        types: ["node"],
      },
      files: ["main.ts"],
    };
    writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
  }
  return dir;
}

for (const { dir, tarball: which, consumer: typechecked, dependencies: mayDepend } of PACKAGES) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

  describe(`published package ${manifest.name}`, () => {
    let tarball: string;
    let unpacked: string;
    let files: string[];
    let consumer: string;
    /** The typechecks, started together: each is a few seconds of CPU, and they are independent. */
    const typechecks = new Map<string, Promise<{ ok: boolean; out: string }>>();
    // Hang guards: a strict typecheck of the whole declaration tree takes seconds, more on a busy machine.
    const timeout = 120_000;

    beforeAll(async () => {
      tarball = (await packTarballs())[which];
      const packed = tempDir("pack");
      await run("tar", ["-xzf", tarball, "-C", packed]);
      const { stdout } = await run("tar", ["-tzf", tarball], { encoding: "utf8" });
      files = stdout
        .split("\n")
        .filter((f) => f !== "")
        .map((f) => f.replace(/^package\//, ""));
      unpacked = join(packed, "package");
      if (!typechecked) return;
      consumer = consumerProject(manifest, unpacked);
      for (const resolution of Object.keys(RESOLUTIONS))
        typechecks.set(resolution, runNode(tsc, ["-p", `tsconfig.${resolution}.json`], consumer));
    }, timeout);

    it("the tarball holds no tests, examples, fixtures or scripts that only this repository needs", () => {
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter(isRepoOnlyFile)).toEqual([]);
    });

    it("the packed manifest has no scripts: nothing runs on a user's install", () => {
      const packedManifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as Manifest;
      expect(packedManifest.scripts ?? {}).toEqual({});
    });

    it("its built code imports only node: builtins, its own files and what its manifest declares, which it all imports", () => {
      const packedManifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as Manifest;
      const imported = new Set(
        files.filter((f) => f.endsWith(".js")).flatMap((f) => bareImports(readFileSync(join(unpacked, f), "utf8"))),
      );
      const declared = Object.keys({ ...packedManifest.dependencies, ...packedManifest.peerDependencies });
      expect([...imported].filter((name) => !name.startsWith("node:") && !declared.includes(name)).sort()).toEqual([]);
      expect(declared.filter((name) => !imported.has(name) && !(name in PEERS_NOT_IMPORTED))).toEqual([]);
    });

    if (!mayDepend) {
      it("has no dependencies: an app that installs it installs this one package (peers only optional)", () => {
        const packedManifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as Manifest & {
          peerDependenciesMeta?: Record<string, { optional?: boolean }>;
        };
        expect({ ...packedManifest.dependencies, ...packedManifest.optionalDependencies }).toEqual({});
        expect(packedManifest.bundleDependencies).toBeUndefined();
        for (const peer of Object.keys(packedManifest.peerDependencies ?? {}))
          expect(packedManifest.peerDependenciesMeta?.[peer]?.optional, peer).toBe(true);
      });
    }

    if (typechecked)
      it.each(Object.keys(RESOLUTIONS))(
        "a consumer importing every export path passes tsc --strict with skipLibCheck off (moduleResolution %s)",
        async (resolution) => {
          expect(existsSync(join(consumer, "node_modules", manifest.name, "package.json"))).toBe(true);
          const result = await typechecks.get(resolution)!;
          expect(result.out).toBe("");
          expect(result.ok).toBe(true);
        },
        timeout,
      );

    it(
      "attw finds no problem with the tarball (under the package's .attw.json)",
      async () => {
        const result = await runNode(attw, [tarball, "--no-color", "--no-emoji"], dir);
        expect(result.ok, result.out).toBe(true);
      },
      timeout,
    );

    it(
      "publint reports nothing, suggestions included",
      async () => {
        const data = readFileSync(tarball);
        const { messages, pkg } = await publint({
          pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) },
          level: "suggestion",
          strict: true,
        });
        expect(messages.map((m) => formatMessage(m, pkg, { color: false }))).toEqual([]);
      },
      timeout,
    );
  });
}

describe("the packaged validators", () => {
  const packaged = join(PUBLISHED.mcpgen, "dist/generated");
  it.each(["validators.js", "2026-07-28/validators.js"])(
    "%s is minified under the generated header, and explains a bad message as the readable build does",
    async (file) => {
      const built = readFileSync(join(repoRoot, "dist/generated", file), "utf8");
      const shipped = readFileSync(join(packaged, file), "utf8");
      // The definitions table minifies to about two thirds: unquoted keys, no doc comments.
      expect(shipped.length).toBeLessThan(built.length * 0.75);
      expect(shipped.split("\n").slice(0, 3)).toEqual(built.split("\n").slice(0, 3));
      expect(shipped).toContain("Do not edit");
      type Explainers = Record<string, (value: unknown) => unknown>;
      const readable = (await import(join(repoRoot, "dist/generated", file))) as Explainers;
      const minified = (await import(join(packaged, file))) as Explainers;
      expect(Object.keys(minified).sort()).toEqual(Object.keys(readable).sort());
      const bad = { name: 42, arguments: [], _meta: { progressToken: {} } };
      const issues = minified.explainCallToolRequestParams!(bad);
      expect(issues).toEqual(readable.explainCallToolRequestParams!(bad));
      expect(issues).not.toEqual([]);
    },
  );
});
