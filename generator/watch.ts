// `mcpgen generate --watch`: regenerates when the schema, overlay, patches, sidecar or templates change, and keeps going on errors.
import { existsSync, readFileSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { configFor, revisionsFor, type RevisionConfig } from "./config.js";
import type { PendingValidators } from "./emit/validators-parallel.js";
import { SchemaError } from "./errors.js";
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
  /** Quiet period before a burst of saves is acted on. */
  debounceMs?: number;
  /** A validators worker started already, for the first generation (see generate's option of that name). */
  validators?: PendingValidators;
  /** The config's revisions, generated together in place of `schema` and `methods`. */
  revisions?: RevisionConfig[];
}

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
  let firstValidators = options.validators;
  const run = async (changed: string[]): Promise<void> => {
    if (changed.length) io.out(`changed  ${changed.join(", ")}`);
    const start = performance.now();
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
          io.out(`rebuilt  ${s.shown}`);
        }
      }
      const { generate, generateRevisions } = await import("./generate.js");
      const validators = firstValidators;
      firstValidators = undefined;
      const shared = {
        outDir: options.out,
        ...(options.templates ? { templatesDir } : {}),
        ...(options.runtimeImport ? { runtimeImport: options.runtimeImport } : {}),
        ...(options.command ? { command: options.command } : {}),
        ...(validators ? { validators } : {}),
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
  };

  await run([]);
  const { stop, watching } = watchTargets(byDir.values(), run, options.debounceMs);
  io.out(`watching ${watching}`);
  return stop;
}

/**
 * Watches each target directory (for the names listed, or every file) and calls `run` with the files changed, sorted,
 * once a burst of saves has been quiet for `debounceMs`; runs never overlap. Returns how to stop, and what is
 * watched as one line.
 */
export function watchTargets(
  targets: Iterable<Target>,
  run: (changed: string[]) => Promise<void>,
  debounceMs = 100,
): { stop: () => void; watching: string } {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (file: string): void => {
    pending.add(file);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      const batch = [...pending].sort();
      pending = new Set();
      running = running.then(() => run(batch));
    }, debounceMs);
  };
  const all = [...targets];
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
    watching: all.map((t) => (t.names ? [...t.names].map((n) => join(t.dir, n)) : [t.dir + "/"]).join(", ")).join(", "),
  };
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

/**
 * Adds --watch to generate: the command then keeps running until interrupted. Register after the config hook.
 * `takeValidators` hands over a validators worker the CLI started already, for the first generation.
 */
export function registerWatch(
  program: Command,
  io: WatchIo,
  takeValidators: () => PendingValidators | undefined = () => undefined,
): void {
  const generateCommand = program.commands.find((c) => c.name() === "generate");
  if (!generateCommand) return;
  generateCommand.option("--watch", "regenerate whenever the schema, overlay, patches, sidecar or templates change");
  generateCommand.hook("preAction", async (self) => {
    const opts = self.opts() as WatchOptions & { watch?: boolean };
    if (!opts.watch) return;
    const config = configFor(self);
    const revisions = revisionsFor(self, config);
    const validators = takeValidators();
    const stop = await startWatch(
      {
        ...opts,
        ...(revisions ? { revisions } : {}),
        command: rerunCommand(self),
        ...(config?.overlay ? { overlay: config.overlay } : {}),
        ...(config?.patches ? { patches: config.patches } : {}),
        ...(validators ? { validators } : {}),
      },
      io,
    );
    await untilInterrupted(stop);
  });
}
