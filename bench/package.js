// Benchmark: what installing each published package brings into an app, beside the official SDK (needs `npm run build` first).
//
//   node bench/package.js
//
// Packs packages/mcpgen and packages/mcpgen-cli (npm pack), installs each tarball into an empty project of its
// own (the runtime as a dependency, the CLI as a devDependency, as the guide says), and the official SDK
// (@modelcontextprotocol/sdk from the registry, at the version in this repo's lockfile) likewise; then counts the
// packages under node_modules (nested ones included) and their bytes: the files' sizes, and the space they take
// on disk (allocated blocks). Targets: the runtime installs 1 package and at most 4 MB on disk. It also lists
// each tarball's files that look like tests, examples, fixtures or repo scripts; there must be none.
// Exits 1 when a target is missed or such a file ships. Needs the registry for the SDK and the CLI's dependencies.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isRepoOnlyFile, PUBLISHED } from "../packages/published.mjs";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const MB = 1_000_000;
const TARGET = { packages: 1, diskBytes: 4 * MB };

function npm(args, cwd) {
  return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Every package folder under a node_modules tree, nested node_modules included. */
function packagesUnder(modules) {
  if (!existsSync(modules)) return [];
  const found = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith(".")) continue; // .bin, .package-lock.json
    const names = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`) : [entry];
    for (const name of names) {
      const dir = join(modules, name);
      if (!existsSync(join(dir, "package.json"))) continue;
      found.push(dir, ...packagesUnder(join(dir, "node_modules")));
    }
  }
  return found;
}

/** Bytes of every file under a folder (symlinks not followed): their sizes, and the blocks they hold on disk. */
function bytesUnder(dir) {
  let size = 0;
  let disk = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = bytesUnder(path);
      size += inner.size;
      disk += inner.disk;
    } else {
      const stat = lstatSync(path);
      size += stat.size;
      disk += stat.blocks * 512;
    }
  }
  return { size, disk };
}

/** Installs `spec` into a new empty project and measures its node_modules. */
function measureInstall(work, label, spec, dev) {
  const project = mkdtempSync(join(work, "app-"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
  );
  npm(["install", "--no-audit", "--no-fund", "--prefer-offline", ...(dev ? ["--save-dev"] : []), spec], project);
  const modules = join(project, "node_modules");
  return { label, packages: packagesUnder(modules).length, ...bytesUnder(modules) };
}

for (const dir of Object.values(PUBLISHED)) {
  if (!existsSync(join(dir, "dist"))) {
    console.error(`${relative(root, dir)}/dist is missing: run \`npm run build\` first`);
    process.exit(2);
  }
}

mkdirSync(join(root, ".tmp"), { recursive: true });
const work = mkdtempSync(join(root, ".tmp", "bench-package-"));
try {
  const tarballs = {};
  for (const [name, dir] of Object.entries(PUBLISHED)) {
    const [pack] = JSON.parse(npm(["pack", "--json", "--pack-destination", work], dir));
    tarballs[name] = {
      path: join(work, pack.filename),
      size: pack.size,
      unpackedSize: pack.unpackedSize,
      files: pack.files.map((f) => f.path),
    };
  }
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
  const sdkVersion = lock.packages["node_modules/@modelcontextprotocol/sdk"].version;

  const rows = [
    measureInstall(work, "mcpgen (dependency)", tarballs.mcpgen.path, false),
    measureInstall(work, "mcpgen-cli (devDependency)", tarballs["mcpgen-cli"].path, true),
    measureInstall(work, `@modelcontextprotocol/sdk@${sdkVersion}`, `@modelcontextprotocol/sdk@${sdkVersion}`, false),
  ];

  const mb = (n) => `${(n / MB).toFixed(2)} MB`;
  const table = [
    ["installed into an empty app", "packages", "file bytes", "on disk"],
    ...rows.map((r) => [r.label, String(r.packages), mb(r.size), mb(r.disk)]),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table)
    console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "));
  console.log("");
  for (const [name, t] of Object.entries(tarballs))
    console.log(`tarball ${name}: ${t.files.length} files, ${mb(t.size)} packed, ${mb(t.unpackedSize)} unpacked`);

  const runtime = rows[0];
  const meets = runtime.packages <= TARGET.packages && runtime.disk <= TARGET.diskBytes;
  console.log(
    `\nruntime target (${TARGET.packages} package, <= ${mb(TARGET.diskBytes)} on disk): ${meets ? "met" : "MISSED"} (${runtime.packages} package${runtime.packages === 1 ? "" : "s"}, ${mb(runtime.disk)})`,
  );

  let repoOnly = 0;
  for (const [name, t] of Object.entries(tarballs)) {
    const found = t.files.filter(isRepoOnlyFile);
    repoOnly += found.length;
    console.log(
      `tests/examples/fixtures/scripts in ${name}: ${found.length === 0 ? "none" : `\n  ${found.join("\n  ")}`}`,
    );
  }
  if (!meets || repoOnly > 0) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
