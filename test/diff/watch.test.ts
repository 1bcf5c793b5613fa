// generate --watch as a real process: regenerates on save, reports a half-written schema and keeps watching.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { follow } from "../kit/streams.js";
import { repoRoot, tempDir } from "../kit/paths.js";

let child: ChildProcessWithoutNullStreams | undefined;
afterAll(() => {
  child?.kill("SIGKILL");
});

describe("mcpgen generate --watch", () => {
  it("regenerates on change, survives a half-written schema, and keeps running", async () => {
    const work = tempDir("watch");
    cpSync(join(repoRoot, "schema"), join(work, "schema"), { recursive: true });
    const schemaFile = join(work, "schema/schema.json");
    const out = join(work, "out");
    child = spawn(
      process.execPath,
      [join(repoRoot, "bin/mcpgen.js"), "generate", "--watch", "--schema", schemaFile, "--out", out],
      { cwd: work },
    );
    const stdout = follow(child.stdout);
    const stderr = follow(child.stderr);
    await stdout(/regenerated 8 files, 8 changed/);
    await stderr(/watching .*schema\.json/);

    const good = readFileSync(schemaFile, "utf8");
    const edited = good.replace(
      '"description": "The sender or recipient of messages and data in a conversation."',
      '"description": "Who speaks."',
    );
    expect(edited).not.toBe(good);
    writeFileSync(schemaFile, edited);
    await stderr(/changed {2}\S*schema\.json/);
    expect(await stdout(/regenerated 8 files, \d+ changed[^\n]*/)).toContain("types.ts");
    expect(readFileSync(join(out, "types.ts"), "utf8")).toContain("Who speaks.");

    writeFileSync(schemaFile, good.slice(0, Math.floor(good.length / 2)));
    expect(await stderr(/error {4}\S*schema\.json:\d+:\d+: invalid JSON[^\n]*/)).toBeTruthy();
    await stderr(/still watching/);
    expect(child.exitCode).toBeNull();

    writeFileSync(schemaFile, good);
    await stdout(/regenerated 8 files, \d+ changed/);
    expect(readFileSync(join(out, "types.ts"), "utf8")).not.toContain("Who speaks.");

    // The overlay is an input too: the combined schema is rebuilt from it, then the SDK.
    const overlayFile = join(work, "schema/overlay.json");
    writeFileSync(
      overlayFile,
      readFileSync(overlayFile, "utf8").replace(
        "The id of the request that is resumable.",
        "Which request may resume.",
      ),
    );
    await stdout(/rebuilt {2}\S*schema\.json/);
    await stdout(/regenerated 8 files/);
    expect(readFileSync(schemaFile, "utf8")).toContain("Which request may resume.");

    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
    expect(code).toBe(0);
  }, 60_000);
});
