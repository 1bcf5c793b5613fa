// The pipeline in one place: load, build the model, run every emitter, and return the files to write.
import { join, relative, resolve, sep } from "node:path";
import { buildModel } from "./build-model.js";
import { emitDispatch } from "./emit/dispatch.js";
import { emitEras, emitRevisionTables } from "./emit/eras.js";
import { deriveEras, type RevisionModel } from "./eras.js";
import { emitGuards } from "./emit/guards.js";
import { header } from "./emit/header.js";
import { compareCodeUnits } from "./json.js";
import { emitValidators } from "./emit/validators.js";
import { loadSchema, projectRoot } from "./load.js";
import { derivationNote, deriveMethods } from "./methods.js";
import type { Model } from "./model.js";

export interface GenerateOptions {
  schemaFile: string;
  outDir: string;
  /** The methods sidecar (overrides of the table derived from the schema); defaults to methods.json beside the schema, if any. */
  methodsFile?: string;
  templatesDir?: string;
  /** What the header calls the source (defaults to the schema path relative to the working directory). */
  sourceName?: string;
  /** Module specifier generated code uses for the runtime; defaults to a relative path inside this project. */
  runtimeImport?: string;
  /** The command that regenerates these files, named in every header (default `mcpgen generate`). */
  command?: string;
  /** Other revisions are generated beside the SDK's: its stubs and index take their tables from revisions.ts. */
  revisionTables?: boolean;
}

export interface GeneratedFile {
  /** Path relative to the output directory, with forward slashes. */
  path: string;
  content: string;
}

/**
 * A relative import of this project's runtime when the output lies inside the project, else the package's.
 * `entry` "web" names the runtime's Node-free part, which the typed stubs need alone, so that the generated SDK
 * bundles for browsers and workers; the package's `mcpgen/runtime` picks that part by its "browser" condition.
 */
export function defaultRuntimeImport(outDir: string, entry: "index" | "web" = "index"): string {
  const rel = relative(resolve(outDir), resolve(projectRoot, "runtime"));
  if (rel.startsWith("..") && !resolve(outDir).startsWith(projectRoot + sep)) return "mcpgen/runtime";
  return `${rel.split(sep).join("/")}/${entry}.js`;
}

/**
 * The detailed validators (validators.ts) are left out: a static export would put them in every bundle, and the
 * dispatch tables load them on demand. Code that wants them synchronously imports that module itself.
 */
/** What every revision's index exports: its types, guards and dispatch tables. */
const WIRE_EXPORTS = [
  `export type * from "./types.js";`,
  `export * from "./guards.js";`,
  `export * from "./dispatch.js";`,
];

function emitIndex(model: Model, revisionTables: boolean): string {
  return [
    header(model, "Entry point of the generated SDK."),
    ...WIRE_EXPORTS,
    `export { Client, type ClientOptions } from "./client.js";`,
    `export { Server, createMcpServer, type ServerOptions } from "./server.js";`,
    ...(revisionTables ? [`export { revisionTables } from "./revisions.js";`] : []),
    "",
  ].join("\n");
}

/**
 * The package's main entry: the runtime and the generated SDK together. The runtime names a few JSON-RPC
 * shapes the schema also defines; for those the schema's (same shape, richer docs) are the ones exported.
 */
const SHARED_WITH_RUNTIME = ["ProgressToken", "RequestId"];
function emitSdk(
  model: Model,
  runtimeImport: string,
  what = "The runtime and the generated SDK in one module.",
): string {
  const defined = new Set(model.definitions.map((d) => d.name));
  const shared = SHARED_WITH_RUNTIME.filter((n) => defined.has(n));
  return [
    header(model, what),
    `export * from "${runtimeImport}";`,
    `export * from "./index.js";`,
    ...(shared.length ? [`export { ${shared.map((n) => `is${n}, type ${n}`).join(", ")} } from "./index.js";`] : []),
    "",
  ].join("\n");
}

export interface Generated {
  model: Model;
  files: GeneratedFile[];
  /** What the user should know about how the files were made, one line each (e.g. that there was no sidecar). */
  notes: string[];
}

/** Loads the schema and builds its model; the notes say what the user should know about how. */
function loadModel(options: GenerateOptions): { model: Model; notes: string[] } {
  const notes: string[] = [];
  const loaded = loadSchema(options.schemaFile, options.methodsFile, options.sourceName);
  const model = buildModel(loaded);
  if (options.command !== undefined) model.source.command = options.command;
  if (loaded.sidecar === undefined) {
    const lookedFor =
      loaded.sidecarLookedFor && `looked for ${relative(process.cwd(), loaded.sidecarLookedFor).split(sep).join("/")}`;
    notes.push(
      derivationNote(
        deriveMethods(loaded.definitions, loaded.defsPointer === "/$defs" ? "$defs" : "definitions"),
        lookedFor,
      ),
    );
  }
  return { model, notes };
}

/**
 * One module of a revision: what the runtime needs to speak it (dispatch tables, guards, types, validators), plus the
 * files `more` adds (for the SDK revision its stubs and entries), sorted by path.
 */
async function generateModule(
  options: GenerateOptions,
  more: (model: Model, runtimeImport: string) => Promise<GeneratedFile[]>,
): Promise<Generated> {
  const { model, notes } = loadModel(options);
  const runtimeImport = options.runtimeImport ?? defaultRuntimeImport(options.outDir);
  // Loaded only when generating: json-schema-to-typescript (and Handlebars, for the stubs) take longer to load than
  // the model takes to build, and commands that never generate should not pay for them.
  const [{ emitTypes }, extra] = await Promise.all([import("./emit/types.js"), more(model, runtimeImport)]);
  const files: GeneratedFile[] = [
    { path: "dispatch.ts", content: emitDispatch(model, runtimeImport) },
    { path: "guards.ts", content: emitGuards(model) },
    { path: "types.ts", content: await emitTypes(model) },
    { path: "validators.ts", content: emitValidators(model, runtimeImport) },
    ...extra,
  ];
  files.sort((a, b) => compareCodeUnits(a.path, b.path));
  return { model, files, notes };
}

/** The SDK: the revision's module, its typed client and server stubs, its index and the package's main entry. */
export async function generate(options: GenerateOptions): Promise<Generated> {
  const tables = options.revisionTables === true;
  return generateModule(options, async (model, runtimeImport) => {
    const stubRuntimeImport = options.runtimeImport ?? defaultRuntimeImport(options.outDir, "web");
    const { emitStub, loadStubTemplate } = await import("./emit/stubs.js");
    const template = loadStubTemplate(options.templatesDir ?? resolve(projectRoot, "templates"));
    return [
      { path: "client.ts", content: emitStub(model, "client", template, stubRuntimeImport, tables) },
      { path: "index.ts", content: emitIndex(model, tables) },
      { path: "sdk.ts", content: emitSdk(model, runtimeImport) },
      { path: "server.ts", content: emitStub(model, "server", template, stubRuntimeImport, tables) },
      // The package's own SDK (generated/ beside runtime/, in the repository and in the package's dist/) is the
      // package's root entry. It imports the runtime by path, which export conditions cannot redirect, so the
      // package's browser and worker conditions point at a second entry on the web runtime. An SDK elsewhere imports
      // the runtime as a package ("mcpgen/runtime"), where the conditions choose the web runtime: it needs none.
      ...(options.runtimeImport === undefined && runtimeImport === PACKAGE_RUNTIME
        ? [{ path: "sdk-web.ts", content: emitSdk(model, stubRuntimeImport, WEB_SDK) }]
        : []),
    ];
  });
}

/** How the package's own SDK imports the runtime: its sibling folder. */
const PACKAGE_RUNTIME = "../runtime/index.js";
const WEB_SDK = "The runtime's web part (no Node built-ins) and the generated SDK in one module: the browser entry.";

/** The entry point of a revision's wire module: no stubs (the SDK's are one set, made from the SDK revision). */
function emitWireIndex(model: Model, revision: string): string {
  return [
    header(
      model,
      `Entry point of the ${revision} wire module: types, guards and dispatch tables (the stubs are the SDK's).`,
    ),
    ...WIRE_EXPORTS,
    "",
  ].join("\n");
}

/**
 * A revision's wire module: what the runtime needs to speak it (types, guards, validators, dispatch tables), and
 * no stubs, so no type of this revision reaches the handlers apps write. Paths are relative to its own folder.
 */
export async function generateWire(options: GenerateOptions & { revision: string }): Promise<Generated> {
  return generateModule(options, async (model) => [
    { path: "index.ts", content: emitWireIndex(model, options.revision) },
  ]);
}

/** One revision of a multi-revision run. */
export interface RevisionSource {
  /** Its name as the protocol version says it (2026-07-28); also the folder of its wire module. */
  revision: string;
  schemaFile: string;
  methodsFile?: string;
  sourceName?: string;
  /** The revision the SDK (stubs, index, sdk entry) is made from; exactly one has it. */
  sdk?: boolean;
}

export interface GenerateRevisionsOptions extends Omit<GenerateOptions, "schemaFile" | "methodsFile" | "sourceName"> {
  revisions: RevisionSource[];
}

export interface GeneratedRevisions {
  models: RevisionModel[];
  files: GeneratedFile[];
  notes: string[];
}

/** Revision names become folder names: nothing that could leave the output directory or hide in it. */
const REVISION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Several revisions into one output directory: the SDK revision as `generate` writes it, each other revision's wire
 * module in `<revision>/`, and eras.ts, the era map derived from all their models.
 */
export async function generateRevisions(options: GenerateRevisionsOptions): Promise<GeneratedRevisions> {
  const { revisions, ...shared } = options;
  const sdkCount = revisions.filter((r) => r.sdk).length;
  const problem =
    revisions.length === 0
      ? "no revisions to generate"
      : sdkCount !== 1
        ? `exactly one revision makes the SDK, ${sdkCount} do`
        : revisions.find((r) => !REVISION_NAME.test(r.revision))?.revision;
  const names = new Set(revisions.map((r) => r.revision));
  if (problem !== undefined || names.size !== revisions.length) {
    throw new Error(
      problem === undefined
        ? "a revision is listed twice"
        : revisions.some((r) => r.revision === problem)
          ? `revision name ${JSON.stringify(problem)} cannot be a folder name`
          : problem,
    );
  }
  // Every revision at once: their emitters await module loads, which overlap.
  const settled = await Promise.allSettled(
    revisions.map((r) => {
      const own = { ...shared, schemaFile: r.schemaFile, methodsFile: r.methodsFile, sourceName: r.sourceName };
      return r.sdk
        ? generate({ ...own, revisionTables: revisions.length > 1 })
        : generateWire({ ...own, outDir: join(shared.outDir, r.revision), revision: r.revision });
    }),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  const results = settled.map((s) => (s as PromiseFulfilledResult<Generated>).value);
  const models = revisions.map((r, i) => ({ revision: r.revision, model: results[i]!.model, sdk: r.sdk === true }));
  const files = results.flatMap((g, i) =>
    revisions[i]!.sdk ? g.files : g.files.map((f) => ({ ...f, path: `${revisions[i]!.revision}/${f.path}` })),
  );
  const eras = deriveEras(models);
  files.push({ path: "eras.ts", content: emitEras(eras) });
  if (revisions.length > 1) {
    const runtimeImport = options.runtimeImport ?? defaultRuntimeImport(options.outDir, "web");
    files.push({ path: "revisions.ts", content: emitRevisionTables(eras, runtimeImport) });
  }
  files.sort((a, b) => compareCodeUnits(a.path, b.path));
  const notes = results.flatMap((g, i) => g.notes.map((n) => `${revisions[i]!.revision}: ${n}`));
  return { models, files, notes };
}
