// Reading one side of a diff: a file or `git:REV:path`, its methods (sidecar or convention), and its model.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { buildModel } from "../build-model.js";
import { SchemaError } from "../errors.js";
import { loadDefinitions, parseMethodsSidecar, type LoadedSchema } from "../load.js";
import { derivationNote, deriveMethods, type Sidecar } from "../methods.js";
import type { Model } from "../model.js";
import { getAt, parsePointer, toPointer } from "../pointer.js";
import type { Env } from "./compare.js";
import { definitionMap } from "../model.js";
import type { SideInfo } from "./types.js";

export interface SourceText {
  /** As the user named it. */
  label: string;
  text: string;
  /** The text of a file beside this one (e.g. methods.json), if it exists. */
  sibling(name: string): SourceText | undefined;
}

function gitShow(rev: string, path: string, cwd: string): string | undefined {
  try {
    return execFileSync("git", ["show", `${rev}:${path}`], {
      cwd,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch {
    return undefined;
  }
}

/** `git:REV:path` reads path at REV (path relative to the working directory); anything else is a file. */
export function readSource(spec: string, cwd = process.cwd()): SourceText {
  if (spec.startsWith("git:")) {
    const rest = spec.slice(4);
    const colon = rest.indexOf(":");
    if (colon <= 0 || colon === rest.length - 1) throw new SchemaError(spec, "expected git:REV:path");
    const rev = rest.slice(0, colon);
    const path = rest.slice(colon + 1);
    const gitPath = path.startsWith("./") || path.startsWith("../") ? path : `./${path}`;
    const text = gitShow(rev, gitPath, cwd);
    if (text === undefined) throw new SchemaError(spec, `git cannot show ${path} at ${rev}`);
    return {
      label: spec,
      text,
      sibling(name) {
        const siblingPath = posix.join(posix.dirname(path), name);
        const t = gitShow(rev, siblingPath.startsWith("../") ? siblingPath : `./${siblingPath}`, cwd);
        return t === undefined ? undefined : { label: `git:${rev}:${siblingPath}`, text: t, sibling: () => undefined };
      },
    };
  }
  let text: string;
  try {
    text = readFileSync(resolve(cwd, spec), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SchemaError(
      spec,
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : `cannot read: ${(error as Error).message}`,
    );
  }
  return {
    label: spec,
    text,
    sibling(name) {
      const file = resolve(cwd, dirname(spec), name);
      return existsSync(file)
        ? { label: join(dirname(spec), name), text: readFileSync(file, "utf8"), sibling: () => undefined }
        : undefined;
    },
  };
}

export interface SideOptions {
  /** A methods sidecar (file or git:REV:path) of overrides; default: methods.json beside the schema, if any. */
  methods?: string;
  /** Derive methods from the schema alone even when a sidecar lies beside it. */
  convention?: boolean;
}

export interface LoadedSide {
  info: SideInfo;
  model: Model;
  env: Env;
  /** The definitions as read (minus keywords not compared), under their key, for checking pointers. */
  root: Record<string, unknown>;
  notes: string[];
}

const UNSUPPORTED = /^keyword "(.+)" is not supported/;

/**
 * Builds the model. The generator refuses keywords its guards cannot enforce; a diff can still compare the rest,
 * so each refused keyword is taken out and named in the notes rather than ignored silently. A request whose result
 * cannot be found is noted too, and its result is not compared.
 */
export function buildModelNoting(
  loaded: LoadedSchema,
  notes: string[],
  who: string,
): { model: Model; definitions: Record<string, unknown> } {
  let definitions = loaded.definitions;
  const dropped = new Map<string, string[]>();
  for (let attempt = 0; ; attempt++) {
    try {
      const derivation: string[] = [];
      const model = buildModel({ ...loaded, definitions }, { requireResults: false, notes: derivation });
      for (const n of derivation) notes.push(`${who}: ${n}`);
      for (const [keyword, where] of dropped) {
        notes.push(
          `${who}: keyword ${keyword} is not represented in mcpgen's model and was not compared (${where.length} place${where.length === 1 ? "" : "s"}: ${where.slice(0, 5).join(", ")}${where.length > 5 ? ", ..." : ""})`,
        );
      }
      return { model, definitions };
    } catch (error) {
      if (!(error instanceof SchemaError)) throw error;
      const match = UNSUPPORTED.exec(error.message);
      if (!match || attempt > 10_000 || error.where === undefined || !error.where.startsWith(loaded.defsPointer + "/"))
        throw error;
      if (attempt === 0) definitions = structuredClone(definitions);
      const tokens = parsePointer(error.where).slice(1);
      const key = tokens.pop()!;
      const parent = getAt(definitions, toPointer(tokens)) as Record<string, unknown>;
      delete parent[key];
      dropped.set(match[1]!, [...(dropped.get(match[1]!) ?? []), error.where]);
    }
  }
}

export function loadSide(spec: string, who: "OLD" | "NEW", options: SideOptions = {}, cwd = process.cwd()): LoadedSide {
  const source = readSource(spec, cwd);
  const defs = loadDefinitions(spec, spec, source.text);
  const defsKey = defs.defsPointer === "/$defs" ? "$defs" : "definitions";
  const notes: string[] = [];
  let sidecar: Sidecar | undefined;
  let info: SideInfo;
  const sidecarText = options.convention
    ? undefined
    : options.methods !== undefined
      ? readSource(options.methods, cwd)
      : source.sibling("methods.json");
  if (sidecarText) {
    sidecar = parseMethodsSidecar(sidecarText.label, sidecarText.text);
    info = { file: spec, methods: "sidecar", methodsFile: sidecarText.label };
  } else {
    info = { file: spec, methods: "convention" };
    notes.push(`${who}: ${derivationNote(deriveMethods(defs.definitions, defsKey), undefined)}`);
  }
  const { model, definitions } = buildModelNoting({ ...defs, ...(sidecar ? { sidecar } : {}) }, notes, who);
  return {
    info,
    model,
    env: { defs: definitionMap(model), defsPointer: defs.defsPointer },
    root: { [defsKey]: definitions },
    notes,
  };
}
