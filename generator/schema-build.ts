// Builds the combined schema from the vendored official base, the defect patch list and our overlay.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { SchemaError } from "./errors.js";
import { canonicalJson, parseJsonText, readJson, isObject } from "./json.js";
import { getAt, parsePointer, toPointer } from "./pointer.js";

export interface Patch {
  op: "replace";
  path: string;
  value: unknown;
  /** The value the patch expects to replace; a mismatch means upstream changed and the patch no longer applies. */
  expect: unknown;
  why: string;
}

export interface Extension {
  path: string;
  value: unknown;
  why?: string;
}

export interface Overlay {
  base: string;
  definitions: Record<string, unknown>;
  extend: Extension[];
}

export interface Conflict {
  /** Which input holds the entry: "patches" or "overlay". */
  source: "patches" | "overlay";
  pointer: string;
  reason: string;
}

export interface BuildResult {
  schema: Record<string, unknown>;
  conflicts: Conflict[];
}

function defsKey(schema: Record<string, unknown>): "$defs" | "definitions" {
  return isObject(schema["definitions"]) && !isObject(schema["$defs"]) ? "definitions" : "$defs";
}

/** Overlay paths are written against `$defs`; a draft-07 base keeps its definitions under `definitions`. */
function retarget(pointer: string, key: "$defs" | "definitions"): string {
  return key === "$defs" ? pointer : pointer.replace(/^\/\$defs\//, "/definitions/");
}

function retargetRefs(value: unknown, key: "$defs" | "definitions"): unknown {
  if (key === "$defs") return value;
  return JSON.parse(JSON.stringify(value).replace(/"#\/\$defs\//g, '"#/definitions/'));
}

/**
 * Applies patches and overlay to a copy of the base. Entries that no longer fit (the path is gone, the
 * value changed, a definition already exists) are returned as conflicts and left out, never half-applied.
 */
export function applyOverlay(base: Record<string, unknown>, patches: Patch[], overlay: Overlay): BuildResult {
  const schema = structuredClone(base);
  const key = defsKey(schema);
  const conflicts: Conflict[] = [];
  for (const patch of patches) {
    const path = retarget(patch.path, key);
    const tokens = parsePointer(path);
    const last = tokens.pop()!;
    const parent = getAt(schema, toPointer(tokens));
    const current = getAt(schema, path);
    if (parent === undefined || current === undefined) {
      conflicts.push({
        source: "patches",
        pointer: patch.path,
        reason: "the patched location no longer exists upstream",
      });
    } else if (JSON.stringify(current) !== JSON.stringify(patch.expect)) {
      conflicts.push({
        source: "patches",
        pointer: patch.path,
        reason: `upstream now has ${JSON.stringify(current)}, the patch expects ${JSON.stringify(patch.expect)}`,
      });
    } else {
      (parent as Record<string, unknown>)[last] = structuredClone(patch.value);
    }
  }
  const defs = (schema[key] ??= {}) as Record<string, unknown>;
  for (const [name, definition] of Object.entries(overlay.definitions)) {
    if (name in defs) {
      conflicts.push({
        source: "overlay",
        pointer: `/definitions/${name}`,
        reason: `upstream now defines ${name} itself`,
      });
      continue;
    }
    defs[name] = retargetRefs(definition, key);
  }
  overlay.extend.forEach((ext, i) => {
    const path = retarget(ext.path, key);
    const tokens = parsePointer(path);
    const last = tokens.pop()!;
    const parent = getAt(schema, toPointer(tokens));
    const value = retargetRefs(ext.value, key);
    if (last === "-") {
      if (!Array.isArray(parent)) {
        conflicts.push({
          source: "overlay",
          pointer: `/extend/${i}`,
          reason: `${ext.path}: the list to append to no longer exists upstream`,
        });
      } else if (parent.some((member) => JSON.stringify(member) === JSON.stringify(value))) {
        conflicts.push({
          source: "overlay",
          pointer: `/extend/${i}`,
          reason: `${ext.path}: upstream already lists ${JSON.stringify(value)}`,
        });
      } else {
        parent.push(value);
      }
    } else if (!isObject(parent)) {
      conflicts.push({
        source: "overlay",
        pointer: `/extend/${i}`,
        reason: `${ext.path}: the object to extend no longer exists upstream (moved or changed shape)`,
      });
    } else if (last in parent) {
      conflicts.push({
        source: "overlay",
        pointer: `/extend/${i}`,
        reason: `${ext.path}: upstream already has this member`,
      });
    } else {
      parent[last] = value;
    }
  });
  return { schema, conflicts };
}

export interface SchemaSources {
  baseFile: string;
  patchesFile: string;
  overlayFile: string;
}

/** The inputs in a schema directory; the base is the file the overlay names (so a rebase is one edit there). */
export function defaultSources(schemaDir: string): SchemaSources {
  const overlayFile = resolve(schemaDir, "overlay.json");
  let base = "base/2025-11-25.schema.json";
  if (existsSync(overlayFile)) {
    const raw = readJson(overlayFile);
    if (isObject(raw) && typeof raw["base"] === "string") base = raw["base"];
  }
  return { baseFile: resolve(schemaDir, base), patchesFile: resolve(schemaDir, "patches.json"), overlayFile };
}

export function readOverlay(file: string): Overlay {
  const raw = readJson(file);
  if (
    !isObject(raw) ||
    !isObject(raw["definitions"]) ||
    !Array.isArray(raw["extend"]) ||
    typeof raw["base"] !== "string"
  ) {
    throw new SchemaError(file, "an overlay needs `base` (string), `definitions` (object) and `extend` (array)", "");
  }
  raw["extend"].forEach((e, i) => {
    if (!isObject(e) || typeof e["path"] !== "string" || !("value" in e))
      throw new SchemaError(file, "each extension needs `path` and `value`", `/extend/${i}`);
  });
  return raw as unknown as Overlay;
}

export function readPatches(file: string): Patch[] {
  const raw = readJson(file);
  if (!isObject(raw) || !Array.isArray(raw["patches"]))
    throw new SchemaError(file, "a patch list needs `patches` (array)", "");
  raw["patches"].forEach((p, i) => {
    if (
      !isObject(p) ||
      p["op"] !== "replace" ||
      typeof p["path"] !== "string" ||
      !("value" in p) ||
      !("expect" in p) ||
      typeof p["why"] !== "string"
    ) {
      throw new SchemaError(
        file,
        'each patch needs op "replace", `path`, `value`, `expect` and `why`',
        `/patches/${i}`,
      );
    }
  });
  return raw["patches"] as Patch[];
}

/** The combined schema text exactly as schema/schema.json must hold it. */
export function buildCombinedText(sources: SchemaSources): { text: string; conflicts: Conflict[] } {
  const overlay = readOverlay(sources.overlayFile);
  const baseFile = sources.baseFile;
  const base = parseJsonText(readFileSync(baseFile, "utf8"), baseFile);
  if (!isObject(base)) throw new SchemaError(baseFile, "a schema must be a JSON object", "");
  const { schema, conflicts } = applyOverlay(base, readPatches(sources.patchesFile), overlay);
  return { text: canonicalJson(schema), conflicts };
}
