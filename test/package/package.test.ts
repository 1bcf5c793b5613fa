// The published package as a consumer gets it: a strict typecheck of every export path, attw and publint, on the packed tarball.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot, tempDir } from "../helpers.js";

const run = promisify(execFile);
const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
const attw = join(repoRoot, "node_modules/@arethetypeswrong/cli/dist/index.js");

/** One row per published package; everything else is read from its package.json. */
const PACKAGES = [{ dir: repoRoot }];

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string; default?: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** How a consumer's tsconfig resolves modules: Node's own rules, and a bundler's. */
const RESOLUTIONS = {
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
};

/** Fails when a source file is newer than what was built from it: the tarball would not hold the code under test. */
function assertBuilt(dir: string, manifest: Manifest): void {
  const targets = Object.values(manifest.exports).flatMap((e) => (typeof e === "string" ? [e] : [e.types, e.default])).filter((t) => t?.startsWith("./dist/"));
  const built = Math.min(...targets.map((t) => statSync(join(dir, t!)).mtimeMs));
  const sourceDirs = new Set(targets.map((t) => t!.split("/")[2]!));
  for (const source of sourceDirs) {
    for (const file of readdirSync(join(dir, source), { recursive: true, encoding: "utf8" })) {
      if (file.endsWith(".ts") && statSync(join(dir, source, file)).mtimeMs > built) throw new Error(`${source}/${file} is newer than dist/: run \`npm run build\` first`);
    }
  }
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
  const paths = Object.keys(manifest.exports).filter((p) => p !== "./package.json").map((p) => manifest.name + p.slice(1));
  const program = [
    ...paths.map((p, i) => `import * as entry${i} from ${JSON.stringify(p)};`),
    `export const entries = [${paths.map((_, i) => `entry${i}`).join(", ")}];`,
    "",
  ];
  writeFileSync(join(dir, "main.ts"), program.join("\n"));
  for (const [name, options] of Object.entries(RESOLUTIONS)) {
    const config = { compilerOptions: { ...options, strict: true, skipLibCheck: false, noEmit: true, target: "es2022", types: ["node"] }, files: ["main.ts"] };
    writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
  }
  return dir;
}

/** stdout of a command that may fail; a failure's output is what the assertion shows. */
async function output(file: string, args: string[], cwd: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(process.execPath, [file, ...args], { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, out: stdout };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? String(error)}` };
  }
}

for (const { dir } of PACKAGES) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

  describe(`published package ${manifest.name}`, () => {
    let tarball: string;
    let consumer: string;
    /** The typechecks, started together: each is a few seconds of CPU, and they are independent. */
    const typechecks = new Map<string, Promise<{ ok: boolean; out: string }>>();
    // Hang guards: a strict typecheck of the whole declaration tree takes seconds, more on a busy machine.
    const timeout = 120_000;

    beforeAll(async () => {
      assertBuilt(dir, manifest);
      const packed = tempDir("pack");
      const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packed], { cwd: dir, encoding: "utf8" });
      tarball = join(packed, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
      await run("tar", ["-xzf", tarball, "-C", packed]);
      consumer = consumerProject(manifest, join(packed, "package"));
      for (const resolution of Object.keys(RESOLUTIONS)) typechecks.set(resolution, output(tsc, ["-p", `tsconfig.${resolution}.json`], consumer));
    }, timeout);

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

    it("attw finds no problem with the tarball (under the package's .attw.json)", async () => {
      const result = await output(attw, [tarball, "--no-color", "--no-emoji"], dir);
      expect(result.ok, result.out).toBe(true);
    }, timeout);

    it("publint reports nothing, suggestions included", async () => {
      const data = readFileSync(tarball);
      const { messages, pkg } = await publint({ pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) }, level: "suggestion", strict: true });
      expect(messages.map((m) => formatMessage(m, pkg, { color: false }))).toEqual([]);
    }, timeout);
  });
}
