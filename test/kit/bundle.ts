// A test fixture bundled from its TypeScript sources into one file plain node runs (for tests that start it as a child process).
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll } from "vitest";
import { repoRoot, tempDir } from "./paths.js";

/**
 * Bundles `entry` (a path from the repository root) before the tests of the calling file or describe block, and
 * removes it after them. Returns a function giving the bundle's path, valid once they run.
 */
export function bundledForNode(entry: string, name: string): () => string {
  let bundle = "";
  beforeAll(async () => {
    bundle = join(tempDir(name), `${name}.mjs`);
    await build({
      entryPoints: [join(repoRoot, entry)],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      external: ["ioredis"],
      outfile: bundle,
      logLevel: "silent",
    });
  }, 60_000);
  afterAll(() => {
    if (bundle !== "") rmSync(dirname(bundle), { recursive: true, force: true });
  });
  return () => bundle;
}
