// Which runtime modules know protocol revisions: only the era modules, the negotiation (lifecycle, the revision list)
// and the HTTP entries (the server's endpoint and wire, the client transport), plus the authorization modules, whose
// spec chapters name their revisions. Everything else reads the peer from the request and never names a revision or
// the handshake.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./kit/paths.js";

const ALLOWED = [
  /^runtime\/eras\//,
  /^runtime\/mcp\/(lifecycle|client-session|negotiation|protocol-versions)\.ts$/,
  /^runtime\/transports\/http\/(server\/endpoint|wire|client\/transport)\.ts$/,
  /^runtime\/auth\//,
];

/** A revision (2025-11-25) or the handshake's method names, as code writes them (comments and import paths aside). */
const ERA_WORDS = /\b\d{4}-\d{2}-\d{2}\b|["'`](initialize|notifications\/initialized)["'`]/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The code of a module without its comments and import/export-from lines. */
function code(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "")
    .replace(/\s\/\/.*$/gm, "")
    .replace(/^(import|export)\b[^;]*?\bfrom\s+["'][^"']+["'];?$/gms, "");
}

describe("the era boundary", () => {
  it("no runtime module outside the era modules, the negotiation and the HTTP entries names a revision or initialize", () => {
    const offenders: string[] = [];
    for (const path of files(join(repoRoot, "runtime"))) {
      const rel = relative(repoRoot, path).split("\\").join("/");
      if (ALLOWED.some((rule) => rule.test(rel))) continue;
      const found = code(readFileSync(path, "utf8")).match(ERA_WORDS);
      if (found !== null) offenders.push(`${rel}: ${[...new Set(found)].join(", ")}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the scan sees what it looks for (a module naming initialize is caught; comments are not)", () => {
    expect(code('const m = "initialize";').match(ERA_WORDS)).toEqual(['"initialize"']);
    expect(code("// speaks 2025-11-25\nconst x = 1;").match(ERA_WORDS)).toBeNull();
    expect(code('import { a } from "./eras/2026-07-28/wire.js";').match(ERA_WORDS)).toBeNull();
    expect(code('const v = "2026-07-28";').match(ERA_WORDS)).toEqual(["2026-07-28"]);
  });
});
