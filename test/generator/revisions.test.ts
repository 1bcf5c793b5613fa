// Robustness: the generator also runs on older official schemas (draft-07 `definitions`, inline params) and the output compiles.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generate } from "../../generator/generate.js";
import { writeFiles } from "../../generator/files.js";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";

describe.each(["2025-06-18", "2025-03-26"])("official %s schema", (revision) => {
  it("generates an SDK that compiles", async () => {
    const dir = tempDir(`rev-${revision}`);
    const { files, model } = await generate({
      schemaFile: join(referenceDir, "mcp-schema", revision, "schema.json"),
      methodsFile: join(repoRoot, "test/fixtures/revisions", revision, "methods.json"),
      outDir: dir,
    });
    expect(model.messages.some((m) => m.method === "tools/call" && m.result === "CallToolResult")).toBe(true);
    // Older revisions declare params inline; their guards are named after the message.
    expect(model.messages.find((m) => m.method === "tools/call")!.paramsType).toBe('NonNullable<CallToolRequest["params"]>');
    writeFiles(dir, files);
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true, rootDir: "../.." }, include: ["*.ts"] }));
    let output = "";
    try {
      execFileSync(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout);
    }
    expect(output).toBe("");
    const guards = await import(join(dir, "guards.ts"));
    expect(guards.isCallToolRequest({ method: "tools/call", params: { name: "x" } })).toBe(true);
    expect(guards.isCallToolRequest({ method: "tools/call", params: {} })).toBe(false);
  });
});
