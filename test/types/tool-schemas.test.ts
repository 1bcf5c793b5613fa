// Runs tsc over tool-schemas.ts: McpServer.tool's inferred argument and result types hold, and every @ts-expect-error is needed.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, tempDir } from "../kit/paths.js";

function typecheck(file: string): string {
  const dir = tempDir("types-tool-schemas");
  const config = {
    extends: relative(dir, join(repoRoot, "tsconfig.json")),
    compilerOptions: { noEmit: true, rootDir: relative(dir, join(repoRoot, "..")) },
    include: [relative(dir, file)],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

describe("McpServer.tool types", () => {
  it("infer arguments and structuredContent from JSON Schema, zod and Valibot schemas", () => {
    expect(typecheck(join(repoRoot, "test/types/tool-schemas.ts"))).toBe("");
  }, 120_000);
});
