// Test fixtures for browsers: bundling a program the way a web app would, and a headless Chromium from the system.
import { writeFileSync } from "node:fs";
import { delimiter, join, relative, resolve } from "node:path";
import { build } from "esbuild";
import { chromium, type BrowserContext } from "playwright-core";
import { repoRoot, tempDir } from "../kit/paths.js";
import { findOnPath } from "../provision.mjs";

/** A module specifier for a source file of this repo, for programs written into a temporary directory. */
export function source(path: string): string {
  return JSON.stringify(join(repoRoot, path));
}

export interface BrowserBundle {
  /** The bundle: one self-contained ES module a page can load. */
  code: string;
  /** Every module in the bundle's graph, as esbuild names them (repo-relative paths; `node:…` for built-ins). */
  inputs: string[];
}

/** Bundles `program` for the browser (esbuild `--platform=browser --bundle`); throws on any build error. */
export async function bundleForBrowser(program: string): Promise<BrowserBundle> {
  const dir = tempDir("browser-bundle");
  const entry = join(dir, "main.mjs");
  writeFileSync(entry, program);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    outfile: join(dir, "out.js"),
  });
  const inputs = Object.keys(result.metafile.inputs).map((p) =>
    p.includes(":") ? p : relative(repoRoot, resolve(repoRoot, p)),
  );
  return { code: result.outputFiles[0]!.text, inputs };
}

/** The system's chromium (Debian package `chromium`, which `npm test` provisions): no browser download. */
export function chromiumPath(pathValue = process.env.PATH): string {
  for (const dir of (pathValue ?? "").split(delimiter)) {
    if (dir !== "" && findOnPath("chromium", dir)) return join(dir, "chromium");
  }
  throw new Error("chromium is not on PATH: run `node test/provision.mjs` (it installs it, or names the command)");
}

/**
 * A headless Chromium with a fresh profile. Background networking stays off: this machine's network refuses
 * Chromium's own connections, and the tests need none of them.
 */
export async function launchChromium(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tempDir("chromium-profile"), {
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
