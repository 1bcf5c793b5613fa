// generate --watch as a real process: one save of the overlay, the schema or a template makes exactly one regeneration.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { repoRoot, tempDir } from "../kit/paths.js";

/** Long enough after a run for a second, spurious one (debounce plus a generation) to have shown itself. */
const SETTLE_MS = 1500;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A watcher on a project of its own: `schema init`'s files in mcp/, a copy of the templates in tpl/. */
interface Watcher {
  dir: string;
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** How many runs have finished: one `regenerated` line (stdout) or one `error` line (stderr) each. */
  runs: () => { ok: number; failed: number };
  /** Waits until `count()` reaches `n` (20 s hang guard), then SETTLE_MS more. */
  settle: (count: () => number, n: number) => Promise<void>;
}

let watchers: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of watchers) child.kill("SIGKILL");
  watchers = [];
});

async function startWatcher(extra: string[] = []): Promise<Watcher> {
  const dir = tempDir("watch-once");
  expect(runCli(["schema", "init", "--dir", "mcp"], dir).status).toBe(0);
  cpSync(join(repoRoot, "templates"), join(dir, "tpl"), { recursive: true });
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "bin/mcpgen.js"),
      "generate",
      "--watch",
      "--schema",
      "mcp/schema.json",
      "--out",
      "sdk",
      "--templates",
      "tpl",
      ...extra,
    ],
    { cwd: dir },
  );
  watchers.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const runs = () => ({
    ok: out.match(/^regenerated \d+ files/gm)?.length ?? 0,
    failed: err.match(/^error {4}/gm)?.length ?? 0,
  });
  const settle = async (count: () => number, n: number): Promise<void> => {
    const until = Date.now() + 20_000;
    while (count() < n) {
      if (Date.now() > until) throw new Error(`waited for run ${n}:\n--- stdout\n${out}\n--- stderr\n${err}`);
      await sleep(25);
    }
    await sleep(SETTLE_MS);
  };
  const watcher = { dir, child, stdout: () => out, stderr: () => err, runs, settle };
  // The first generation, then the status line saying what is watched (a diagnostic: stderr).
  await settle(() => (/^watching /m.test(err) ? runs().ok : 0), 1);
  return watcher;
}

/** Replaces `from` by `to` in a file of the project, as one save. */
function save(w: Watcher, file: string, from: string, to: string): void {
  const path = join(w.dir, file);
  const text = readFileSync(path, "utf8");
  expect(text, file).toContain(from);
  writeFileSync(path, text.replace(from, to));
}

describe("mcpgen generate --watch: one save, one regeneration", () => {
  it("regenerates once per save of the overlay, the schema and a template, and reports each on stdout", async () => {
    const w = await startWatcher();
    expect(w.runs()).toEqual({ ok: 1, failed: 0 });
    expect(w.stderr()).toMatch(/^watching mcp\/schema\.json, .*mcp\/overlay\.json, .*tpl\/\n/m);

    // The overlay: the combined schema is rebuilt (a watched file itself) and the SDK generated, once.
    save(w, "mcp/overlay.json", '"definitions": {}', '"definitions": { "Region": { "type": "string" } }');
    await w.settle(() => w.runs().ok, 2);
    expect(w.runs()).toEqual({ ok: 2, failed: 0 });
    expect(w.stdout().match(/^rebuilt {2}mcp\/schema\.json$/gm)).toHaveLength(1);
    expect(readFileSync(join(w.dir, "sdk/types.ts"), "utf8")).toContain("export type Region = string");
    expect(w.stderr()).toMatch(/^changed {2}mcp\/overlay\.json\n/m);

    // The combined schema itself.
    save(w, "mcp/schema.json", '"Region": {', '"Region": {\n      "description": "Where it runs.",');
    await w.settle(() => w.runs().ok, 3);
    expect(w.runs()).toEqual({ ok: 3, failed: 0 });
    expect(readFileSync(join(w.dir, "sdk/types.ts"), "utf8")).toContain("Where it runs.");

    // A template.
    appendFileSync(join(w.dir, "tpl/stub.hbs"), "\n");
    await w.settle(() => w.runs().ok, 4);
    expect(w.runs()).toEqual({ ok: 4, failed: 0 });

    // An editor's save in two writes (truncate, then the new text) is still one save.
    const overlay = join(w.dir, "mcp/overlay.json");
    const text = readFileSync(overlay, "utf8");
    writeFileSync(overlay, "");
    writeFileSync(overlay, text.replace('"type": "string"', '"type": "integer"'));
    await w.settle(() => w.runs().ok, 5);
    expect(w.runs()).toEqual({ ok: 5, failed: 0 });
    expect(readFileSync(join(w.dir, "sdk/types.ts"), "utf8")).toContain("export type Region = number");

    // A save that changes nothing makes no run.
    writeFileSync(overlay, readFileSync(overlay, "utf8"));
    await sleep(SETTLE_MS);
    expect(w.runs()).toEqual({ ok: 5, failed: 0 });
  }, 90_000);

  it("on a save of invalid JSON prints the error once and waits; the fixed save regenerates once", async () => {
    const w = await startWatcher();
    const overlay = join(w.dir, "mcp/overlay.json");
    const good = readFileSync(overlay, "utf8");
    writeFileSync(overlay, good.slice(0, Math.floor(good.length / 2)));
    await w.settle(() => w.runs().failed, 1);
    expect(w.runs()).toEqual({ ok: 1, failed: 1 });
    expect(w.stderr()).toMatch(/^error {4}\S*overlay\.json:\d+:\d+: invalid JSON/m);
    expect(w.stderr()).toMatch(/^still watching; fix the file and save again$/m);
    expect(w.child.exitCode).toBeNull();

    writeFileSync(overlay, good.replace('"definitions": {}', '"definitions": { "Fixed": { "type": "string" } }'));
    await w.settle(() => w.runs().ok, 2);
    expect(w.runs()).toEqual({ ok: 2, failed: 1 });
    expect(readFileSync(join(w.dir, "sdk/types.ts"), "utf8")).toContain("export type Fixed = string");
  }, 60_000);

  it("--debounce-ms sets the quiet period: two saves inside it are one regeneration", async () => {
    const w = await startWatcher(["--debounce-ms", "600"]);
    save(w, "mcp/overlay.json", '"definitions": {}', '"definitions": { "A": { "type": "string" } }');
    await sleep(150);
    save(w, "mcp/overlay.json", '"A": { "type": "string" }', '"A": { "type": "string" }, "B": { "type": "string" }');
    await w.settle(() => w.runs().ok, 2);
    expect(w.runs()).toEqual({ ok: 2, failed: 0 });
    const types = readFileSync(join(w.dir, "sdk/types.ts"), "utf8");
    expect(types).toContain("export type A = string");
    expect(types).toContain("export type B = string");
  }, 60_000);

  it.each([
    [["generate", "--watch", "--debounce-ms", "-1"], "--debounce-ms"],
    [["generate", "--watch", "--debounce-ms", "soon"], "--debounce-ms"],
    [["generate", "--debounce-ms", "100"], "--debounce-ms needs --watch"],
    [
      ["tools", "generate", "--catalogue", "c.json", "--out", "x", "--debounce-ms", "100"],
      "--debounce-ms needs --watch",
    ],
  ])("%j is bad input: exit 2 naming the option", (args, message) => {
    const r = runCli(args, tempDir("watch-options"));
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(2);
  });
});
