// A user's project: an empty folder outside this repository where `npm install` puts the packed tarballs of both packages.
/*
 * API (kept stable: other suites build on it):
 *
 *   packTarballs(): Promise<{ mcpgen: string; cli: string }>
 *     The absolute paths of `npm pack` of packages/mcpgen and packages/mcpgen-cli. Packs once per process (the
 *     promise is shared), after checking that the assembled packages are not older than their sources.
 *
 *   userProject({ files?, dependencies?, link?, packageJson? }): Promise<string>
 *     A fresh folder under the OS temporary directory (never inside this repository, so nothing resolves from the
 *     repository's node_modules by walking up) with a package.json ({ private, "type": "module" } plus
 *     `packageJson`), `files` written (path relative to the project -> text, folders created), and both tarballs
 *     and `dependencies` (name -> version range) installed by a real `npm install --prefer-offline`: the packages
 *     come from the npm cache that `npm ci` filled. `link` names packages of this repository's install to symlink
 *     into node_modules after the install (say "@types/node"), which costs no install time. Removed after the
 *     importing test file's tests (an afterAll this module registers when the file imports it).
 *
 *   typescripts: { "5.9": string; latest: string }    tsc entry files of this repository's two TypeScript versions.
 *   runNode(script, args, cwd): Promise<{ ok: boolean; out: string }>
 *     `node script ...args` in cwd; `out` is stdout, or on failure stdout, stderr and the error together.
 *   assertBuilt(packageDir): void    throws when a source file is newer than the package's assembled dist/.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll } from "vitest";
import { PUBLISHED } from "../../packages/published.mjs";
import { repoRoot } from "./paths.js";

const run = promisify(execFile);

/** The tsc of each TypeScript this repository tests users' projects with. */
export const typescripts = {
  "5.9": join(repoRoot, "node_modules/typescript/bin/tsc"),
  latest: join(repoRoot, "node_modules/typescript-latest/bin/tsc"),
} as const;

export interface Tarballs {
  /** The runtime and standard SDK, packages/mcpgen. */
  mcpgen: string;
  /** The generator's command line, packages/mcpgen-cli. */
  cli: string;
}

export interface UserProjectOptions {
  /** Files to write into the project before the install, by path relative to it. */
  files?: Record<string, string>;
  /** Further packages to install beside the tarballs, name -> version range, from the npm cache. */
  dependencies?: Record<string, string>;
  /** Packages of this repository's node_modules to symlink into the project after the install. */
  link?: string[];
  /** Fields merged over the project's package.json ({ name, private: true, type: "module" }). */
  packageJson?: Record<string, unknown>;
}

/**
 * Fails when a source file is newer than what the package was assembled from it: the tarball would not hold the
 * code under test. Each folder of the package's dist/ was built from the top-level folder of that name.
 */
export function assertBuilt(dir: string): void {
  const dist = join(dir, "dist");
  if (!existsSync(dist)) throw new Error(`${relative(repoRoot, dist)} is missing: run \`npm run build\` first`);
  for (const source of readdirSync(dist)) {
    const builtFiles = readdirSync(join(dist, source), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".js"),
    );
    const built = Math.min(...builtFiles.map((f) => statSync(join(dist, source, f)).mtimeMs));
    for (const file of readdirSync(join(repoRoot, source), { recursive: true, encoding: "utf8" })) {
      if (file.endsWith(".ts") && statSync(join(repoRoot, source, file)).mtimeMs > built)
        throw new Error(`${source}/${file} is newer than ${relative(repoRoot, dist)}: run \`npm run build\` first`);
    }
  }
}

/**
 * Folders this file made, removed after its tests (an installed project is tens of megabytes): registered while
 * the importing test file is collected, so the hook belongs to that file.
 */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  packed = undefined;
});

function freshDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `mcpgen-${prefix}-`));
  made.push(dir);
  return dir;
}

let packed: Promise<Tarballs> | undefined;

async function pack(dir: string, destination: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", destination], {
    cwd: dir,
    encoding: "utf8",
  });
  const [result] = JSON.parse(stdout) as { filename: string }[];
  if (result === undefined) throw new Error(`npm pack in ${relative(repoRoot, dir)} printed no result`);
  return join(destination, result.filename);
}

/** Both packages packed, once per process. */
export function packTarballs(): Promise<Tarballs> {
  packed ??= (async () => {
    assertBuilt(PUBLISHED.mcpgen);
    assertBuilt(PUBLISHED["mcpgen-cli"]);
    const destination = freshDir("tarballs");
    const [mcpgen, cli] = await Promise.all([
      pack(PUBLISHED.mcpgen, destination),
      pack(PUBLISHED["mcpgen-cli"], destination),
    ]);
    return { mcpgen, cli };
  })();
  return packed;
}

/** A project with both tarballs (and `dependencies`) installed by npm; see the header for the details. */
export async function userProject(options: UserProjectOptions = {}): Promise<string> {
  const tarballs = await packTarballs();
  const dir = freshDir("user");
  const manifest = { name: "user-project", version: "0.0.0", private: true, type: "module", ...options.packageJson };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const [path, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const specs = [
    tarballs.mcpgen,
    tarballs.cli,
    ...Object.entries(options.dependencies ?? {}).map(([name, range]) => `${name}@${range}`),
  ];
  try {
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", ...specs], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install in a user project failed:\n${e.stdout ?? ""}${e.stderr ?? String(error)}`);
  }
  for (const name of options.link ?? []) {
    const from = join(repoRoot, "node_modules", name);
    if (!existsSync(from)) throw new Error(`${name} is not installed in this repository, so it cannot be linked`);
    const to = join(dir, "node_modules", name);
    rmSync(to, { recursive: true, force: true });
    mkdirSync(dirname(to), { recursive: true });
    symlinkSync(from, to, "dir");
  }
  return dir;
}

/** `node script ...args` in `cwd`: ok, and stdout (or everything it printed, when it failed). */
export async function runNode(script: string, args: string[], cwd: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await run(process.execPath, [script, ...args], {
      cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    return { ok: true, out: stdout };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? String(error)}` };
  }
}
