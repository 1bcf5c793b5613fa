// `mcpgen generate --watch`: regenerates when the schema, overlay, patches, sidecar or templates change, and keeps going on errors.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { configFor, revisionsFor, type RevisionConfig } from "./config.js";
import { SchemaError, UsageError } from "./errors.js";
import { writeFiles } from "./files.js";
import { defaultMethodsFile, projectRoot } from "./load.js";
import { rerunCommand, shownPath } from "./rerun.js";
import { buildCombinedText, defaultSources } from "./schema-build.js";

export interface WatchOptions {
  schema: string;
  out: string;
  methods?: string;
  templates?: string;
  runtimeImport?: string;
  overlay?: string;
  patches?: string;
  /** The command the headers name to regenerate the files (see rerun.ts). */
  command?: string;
  /** Quiet period before a burst of saves is acted on (default DEFAULT_DEBOUNCE_MS). */
  debounceMs?: number;
  /** The config's revisions, generated together in place of `schema` and `methods`. */
  revisions?: RevisionConfig[];
}

/**
 * How long the watched files must be quiet before a save is acted on: an editor's save is often several writes
 * (truncate, write; or write a copy, rename), and one save should make one run.
 */
export const DEFAULT_DEBOUNCE_MS = 100;

export interface WatchIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** One watched directory and the file names in it that matter (undefined: every file, as for templates). */
export interface Target {
  dir: string;
  names?: Set<string>;
}

function describeError(error: unknown): string {
  return error instanceof SchemaError ? error.format() : error instanceof Error ? error.message : String(error);
}

/** One schema's inputs: the combined schema, its sidecar, and the base, patches and overlay it is built from. */
interface SchemaInputs {
  schemaFile: string;
  /** As the user named it, for messages. */
  shown: string;
  methodsFile: string;
  /** Present when the schema is built from base + patches + overlay (all three exist). */
  sources?: { baseFile: string; patchesFile: string; overlayFile: string };
}

function inputsOf(schema: string, methods: string | undefined, overlay?: string, patches?: string): SchemaInputs {
  const schemaFile = resolve(schema);
  const sources = defaultSources(dirname(schemaFile));
  const overlayFile = resolve(overlay ?? sources.overlayFile);
  const patchesFile = resolve(patches ?? sources.patchesFile);
  const combined = existsSync(overlayFile) && existsSync(patchesFile) && existsSync(sources.baseFile);
  return {
    schemaFile,
    shown: schema,
    methodsFile: resolve(methods ?? defaultMethodsFile(schemaFile)),
    ...(combined ? { sources: { baseFile: sources.baseFile, patchesFile, overlayFile } } : {}),
  };
}

/** Starts watching; resolves to a stop function once the first generation has run. */
export async function startWatch(options: WatchOptions, io: WatchIo): Promise<() => void> {
  const schemas: SchemaInputs[] = options.revisions
    ? options.revisions.map((r) => ({ ...inputsOf(r.schema, r.methods), shown: shownPath(r.schema) }))
    : [inputsOf(options.schema, options.methods, options.overlay, options.patches)];
  const templatesDir = resolve(options.templates ?? join(projectRoot, "templates"));
  const inputs = schemas.flatMap((s) => [
    s.schemaFile,
    s.methodsFile,
    ...(s.sources ? [s.sources.overlayFile, s.sources.patchesFile, s.sources.baseFile] : []),
  ]);
  const byDir = new Map<string, Target>();
  for (const file of inputs) {
    const t = byDir.get(dirname(file)) ?? { dir: dirname(file), names: new Set<string>() };
    t.names?.add(basename(file));
    byDir.set(t.dir, t);
  }
  if (existsSync(templatesDir)) byDir.set(templatesDir, { dir: templatesDir });

  let lastNotes = "";
  const run = async (changed: string[]): Promise<string[]> => {
    if (changed.length) io.err(`changed  ${changed.map(shownPath).join(", ")}`);
    const start = performance.now();
    // The combined schemas this run rebuilds: watched files, whose own change events the watcher must not act on.
    const rebuilt: string[] = [];
    try {
      for (const s of schemas) {
        const sources = s.sources;
        if (!sources || !changed.some((f) => Object.values(sources).includes(f))) continue;
        const { text, conflicts } = buildCombinedText(sources);
        if (conflicts.length)
          throw new Error(
            `the overlay does not apply: ${conflicts.map((c) => `${c.source}#${c.pointer}: ${c.reason}`).join("; ")}`,
          );
        if (!existsSync(s.schemaFile) || readFileSync(s.schemaFile, "utf8") !== text) {
          writeFileSync(s.schemaFile, text);
          rebuilt.push(s.schemaFile);
          io.out(`rebuilt  ${s.shown}`);
        }
      }
      const { generate, generateRevisions } = await import("./generate.js");
      const shared = {
        outDir: options.out,
        ...(options.templates ? { templatesDir } : {}),
        ...(options.runtimeImport ? { runtimeImport: options.runtimeImport } : {}),
        ...(options.command ? { command: options.command } : {}),
      };
      const { files, notes } = options.revisions
        ? await generateRevisions({
            ...shared,
            revisions: options.revisions.map((r, i) => ({
              revision: r.revision,
              schemaFile: schemas[i]!.schemaFile,
              methodsFile: r.methods,
              sdk: r.sdk === true,
            })),
          })
        : await generate({
            ...shared,
            schemaFile: schemas[0]!.schemaFile,
            ...(options.methods ? { methodsFile: schemas[0]!.methodsFile } : {}),
          });
      // A note (no sidecar, say) is news once, not on every save.
      const noteText = notes.join("\n");
      if (noteText !== lastNotes) for (const n of notes) io.err(`note: ${n}`);
      lastNotes = noteText;
      const written = writeFiles(options.out, files);
      const changedFiles = written.filter((f) => f.changed).map((f) => f.path);
      io.out(
        `regenerated ${written.length} files, ${changedFiles.length} changed${changedFiles.length ? ` (${changedFiles.join(", ")})` : ""} in ${Math.round(performance.now() - start)} ms`,
      );
    } catch (error) {
      // A file saved half-way is the common case: say so and wait for the next save.
      io.err(`error    ${describeError(error)}`);
      io.err("still watching; fix the file and save again");
    }
    return rebuilt;
  };

  await run([]);
  const { stop, watching } = watchTargets(byDir.values(), run, options.debounceMs);
  io.err(`watching ${watching}`);
  return stop;
}

/** What a file holds, as a digest; "" for a file that is not there (or is a directory). */
function contentOf(file: string): string {
  try {
    return createHash("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    return "";
  }
}

/**
 * Watches each target directory (for the names listed, or every file) and calls `run` with the files changed, sorted,
 * once a burst of saves has been quiet for `debounceMs`; runs never overlap. A file counts as changed only when its
 * content differs from the last seen: the several events of one save, a save that writes the same bytes, and the
 * files `run` itself writes (it returns them) make no run of their own. Returns how to stop, and what is watched as
 * one line.
 */
export function watchTargets(
  targets: Iterable<Target>,
  run: (changed: string[]) => Promise<readonly string[] | void>,
  debounceMs: number = DEFAULT_DEBOUNCE_MS,
): { stop: () => void; watching: string } {
  const all = [...targets];
  const seen = new Map<string, string>();
  for (const target of all) {
    if (!existsSync(target.dir)) continue;
    const names = target.names ?? readdirSync(target.dir);
    for (const name of names) seen.set(join(target.dir, name), contentOf(join(target.dir, name)));
  }
  // Decided when the previous run has finished, so the files it wrote are already recorded as seen.
  const act = async (batch: string[]): Promise<void> => {
    const changed = batch.filter((file) => {
      const now = contentOf(file);
      if (now === (seen.get(file) ?? "")) return false;
      seen.set(file, now);
      return true;
    });
    if (changed.length === 0) return;
    const wrote = await run(changed);
    for (const file of wrote ?? []) seen.set(file, contentOf(file));
  };
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (file: string): void => {
    pending.add(file);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      const batch = [...pending].sort();
      pending = new Set();
      running = running.then(() => act(batch));
    }, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const target of all) {
    if (!existsSync(target.dir)) continue;
    watchers.push(
      watch(target.dir, (_event, name) => {
        if (name === null) return;
        const file = String(name);
        if (target.names && !target.names.has(file)) return;
        schedule(join(target.dir, file));
      }),
    );
  }
  return {
    stop: () => {
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
    watching: all
      .map((t) => (t.names ? [...t.names].map((n) => shownPath(join(t.dir, n))) : [`${shownPath(t.dir)}/`]).join(", "))
      .join(", "),
  };
}

/** A --debounce-ms value: a whole number of milliseconds, 0 or more. */
export function debounceOption(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("a whole number of milliseconds, 0 or more");
  return n;
}

/** Runs until SIGINT or SIGTERM, then stops watching and exits 0 (a watch is ended by the user, not by failing). */
export async function untilInterrupted(stop: () => void): Promise<void> {
  await new Promise<void>((done) => {
    const finish = (): void => {
      stop();
      done();
      process.exit(0);
    };
    process.once("SIGINT", finish);
    process.once("SIGTERM", finish);
  });
}

/** Adds --watch to generate: the command then keeps running until interrupted. Register after the config hook. */
export function registerWatch(program: Command, io: WatchIo): void {
  const generateCommand = program.commands.find((c) => c.name() === "generate");
  if (!generateCommand) return;
  generateCommand
    .option("--watch", "regenerate whenever the schema, overlay, patches, sidecar or templates change")
    .option(
      "--debounce-ms <ms>",
      "with --watch: how long the files must be quiet after a save before it regenerates",
      debounceOption,
      DEFAULT_DEBOUNCE_MS,
    );
  generateCommand.hook("preAction", async (self) => {
    const opts = self.opts() as WatchOptions & { watch?: boolean };
    if (!opts.watch) {
      if (self.getOptionValueSource("debounceMs") === "cli") throw new UsageError("--debounce-ms needs --watch");
      return;
    }
    const config = configFor(self);
    const revisions = revisionsFor(self, config);
    const stop = await startWatch(
      {
        ...opts,
        ...(revisions ? { revisions } : {}),
        command: rerunCommand(self),
        ...(config?.overlay ? { overlay: config.overlay } : {}),
        ...(config?.patches ? { patches: config.patches } : {}),
      },
      io,
    );
    await untilInterrupted(stop);
  });
}
