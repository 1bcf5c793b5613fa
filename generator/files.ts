// Comparing generated files with what is on disk, and writing them.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GeneratedFile } from "./generate.js";

export interface Drift {
  stale: { path: string; diff: string }[];
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

/** A short line diff: the first differing lines with a little context, enough to see what moved. */
export function shortDiff(expected: string, actual: string, maxLines = 12): string {
  const a = actual.split("\n");
  const e = expected.split("\n");
  let start = 0;
  while (start < a.length && start < e.length && a[start] === e[start]) start++;
  let endA = a.length - 1;
  let endE = e.length - 1;
  while (endA >= start && endE >= start && a[endA] === e[endE]) {
    endA--;
    endE--;
  }
  const clip = (line: string) => (line.length > 160 ? `${line.slice(0, 160)}… (${line.length} chars)` : line);
  const out = [`@@ line ${start + 1} @@`];
  for (const line of a.slice(start, Math.min(endA + 1, start + maxLines))) out.push(`- ${clip(line)}`);
  if (endA + 1 - start > maxLines) out.push(`- ... (${endA + 1 - start - maxLines} more)`);
  for (const line of e.slice(start, Math.min(endE + 1, start + maxLines))) out.push(`+ ${clip(line)}`);
  if (endE + 1 - start > maxLines) out.push(`+ ... (${endE + 1 - start - maxLines} more)`);
  return out.join("\n");
}

export function compareWithDisk(outDir: string, files: GeneratedFile[]): Drift {
  const drift: Drift = { stale: [], missing: [], extra: [] };
  const expected = new Set(files.map((f) => f.path));
  for (const file of files) {
    let onDisk: string;
    try {
      onDisk = readFileSync(join(outDir, file.path), "utf8");
    } catch {
      drift.missing.push(file.path);
      continue;
    }
    if (onDisk !== file.content) drift.stale.push({ path: file.path, diff: shortDiff(file.content, onDisk) });
  }
  for (const path of listFiles(outDir)) if (!expected.has(path)) drift.extra.push(path);
  return drift;
}

/** Writes only what changed, so file times stay put for unchanged files. */
export function writeFiles(outDir: string, files: GeneratedFile[]): { path: string; bytes: number; changed: boolean }[] {
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
