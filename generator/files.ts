// Comparing generated files with what is on disk, and writing them.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GeneratedFile } from "./generate.js";
import { unifiedDiff } from "./unified-diff.js";

export interface StaleFile {
  path: string;
  /** Unified diff (hunks only) from the file on disk to what is generated now, below the header; "" if none. */
  diff: string;
  /** The header lines that changed (`-` on disk, `+` generated now); "" if none. */
  header: string;
}

export interface Drift {
  stale: StaleFile[];
  missing: string[];
  extra: string[];
}

function listFiles(dir: string, prefix = ""): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries.sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listFiles(full, `${prefix}${name}/`));
    else out.push(`${prefix}${name}`);
  }
  return out;
}

export interface CompareOptions {
  /** Most diff lines printed per stale file (the rest is counted); 0 prints all. */
  diffLines?: number;
  /** Lines at the top of every generated file that only describe it (source, hash, how to regenerate). */
  headerLines?: number;
}

/** The first `count` lines of a text (with their newlines) and the rest. */
function splitHeader(text: string, count: number): [string, string] {
  let end = 0;
  for (let i = 0; i < count && end >= 0; i++) end = text.indexOf("\n", end) + 1 || -1;
  return end < 0 ? [text, ""] : [text.slice(0, end), text.slice(end)];
}

/**
 * Compares what the schema generates with `outDir`. The header of a stale file is compared apart from the
 * rest: a new schema hash changes every header, and a report should show that once, not once per file.
 */
export function compareWithDisk(outDir: string, files: GeneratedFile[], options: CompareOptions = {}): Drift {
  const drift: Drift = { stale: [], missing: [], extra: [] };
  const expected = new Set(files.map((f) => f.path));
  const headerLines = options.headerLines ?? 0;
  for (const file of files) {
    let onDisk: string;
    try {
      onDisk = readFileSync(join(outDir, file.path), "utf8");
    } catch {
      drift.missing.push(file.path);
      continue;
    }
    if (onDisk === file.content) continue;
    const [oldHead, oldBody] = splitHeader(onDisk, headerLines);
    const [newHead, newBody] = splitHeader(file.content, headerLines);
    const header = unifiedDiff(oldHead, newHead, { context: 0, maxLines: 0 })
      .split("\n")
      .filter((line) => line.startsWith("-") || line.startsWith("+"))
      .join("\n");
    const diff = unifiedDiff(oldBody, newBody, {
      firstLine: headerLines,
      ...(options.diffLines === undefined ? {} : { maxLines: options.diffLines }),
    });
    drift.stale.push({ path: file.path, diff, header });
  }
  for (const path of listFiles(outDir)) if (!expected.has(path)) drift.extra.push(path);
  return drift;
}

/** Writes only what changed, so file times stay put for unchanged files. */
export function writeFiles(
  outDir: string,
  files: GeneratedFile[],
): { path: string; bytes: number; changed: boolean }[] {
  return files.map((file) => {
    const target = join(outDir, file.path);
    let current: string | undefined;
    try {
      current = readFileSync(target, "utf8");
    } catch {
      current = undefined;
    }
    const changed = current !== file.content;
    if (changed) {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, file.content);
    }
    return { path: file.path, bytes: Buffer.byteLength(file.content), changed };
  });
}
