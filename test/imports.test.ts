// The import rules of .dependency-cruiser.cjs, checked by dependency-cruiser: no import cycles (type-only imports
// are erased and do not count), the runtime never imports the generator, generated code imports only the runtime.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./kit/paths.js";

function cruise(...paths: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        join(repoRoot, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs"),
        ...paths,
        "--config",
        ".dependency-cruiser.cjs",
        "--output-type",
        "err",
      ],
      { cwd: repoRoot, encoding: "utf8" },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr }),
    );
  });
}

describe("imports", () => {
  it("runtime, generated and generator keep the rules", async () => {
    const { code, output } = await cruise("runtime", "generated", "generator");
    expect(output).toContain("no dependency violations found");
    expect(code).toBe(0);
  }, 60_000);

  it("the checker reports a planted cycle (test/fixtures/import-cycle)", async () => {
    const { code, output } = await cruise("test/fixtures/import-cycle");
    expect(code).not.toBe(0);
    expect(output).toContain("no-cycles");
  }, 60_000);
});
