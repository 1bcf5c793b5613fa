// Reading JSON files with errors that say where: line and column for syntax, the file for I/O.
import { readFileSync } from "node:fs";
import { SchemaError } from "./errors.js";

/** A JSON object: not null, not an array (the one check every step of the generator uses). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, offset: number): string {
  let line = 1;
  let lastNewline = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastNewline = i;
    }
  }
  return `${line}:${offset - lastNewline}`;
}

export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // V8 says "... in JSON at position N" (sometimes with "(line L column C)").
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /position (\d+)/.exec(message);
    const where = lc
      ? `${lc[1]}:${lc[2]}`
      : pos
        ? lineColumn(text, Number(pos[1]))
        : text.trim() === ""
          ? "1:1"
          : undefined;
    const reason =
      text.trim() === ""
        ? "the file is empty, not JSON"
        : `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, "")}`;
    throw new SchemaError(file, reason, where);
  }
}

export function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : `cannot read: ${(error as Error).message}`;
    throw new SchemaError(file, reason);
  }
}

export function readJson(file: string): unknown {
  return parseJsonText(readText(file), file);
}

/** Stable JSON text: keys sorted by code unit, two-space indent, LF, trailing newline. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) + "\n";
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort(compareCodeUnits))
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** Plain code-unit order, the same on every machine and locale. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
