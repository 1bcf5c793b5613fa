// Type-level tests: tsc over generated/ and the usage checks, and the spec's own schema.ts types against ours.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { referenceDir, repoRoot, tempDir } from "../kit/paths.js";

const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");

function typecheck(dir: string, include: string[]): string {
  const config = {
    extends: relative(dir, join(repoRoot, "tsconfig.json")),
    compilerOptions: { noEmit: true, rootDir: relative(dir, join(repoRoot, "..")) },
    include: include.map((f) => relative(dir, f)),
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  try {
    execFileSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

/** Names exported as types by a TypeScript source (interfaces and type aliases). */
function exportedTypeNames(source: string): Set<string> {
  return new Set([...source.matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!));
}

// Unions our overlay extends: ours has more members, so only the spec's direction holds.
const EXTENDED_UNIONS = new Set(["ClientRequest", "ClientNotification", "ServerNotification", "ServerResult"]);

describe("types", () => {
  it("generated/ and the usage checks compile, and every @ts-expect-error is needed", () => {
    const out = typecheck(tempDir("types-usage"), [
      join(repoRoot, "generated/*.ts"),
      join(repoRoot, "test/types/usage.ts"),
      join(repoRoot, "test/types/task-usage.ts"),
    ]);
    expect(out).toBe("");
    // A hang guard: one tsc run over the whole SDK takes tens of seconds on a loaded machine.
  }, 120_000);

  it("the spec's schema.ts types and ours are assignable both ways for every shared type", () => {
    const specFile = join(referenceDir, "mcp-schema/2025-11-25/schema.ts");
    const spec = exportedTypeNames(readFileSync(specFile, "utf8"));
    const ours = exportedTypeNames(readFileSync(join(repoRoot, "generated/types.ts"), "utf8"));
    const shared = [...spec].filter((n) => ours.has(n)).sort();
    expect(shared.length).toBeGreaterThan(120);
    const dir = tempDir("types-spec");
    // A copy inside the project, so it is compiled as an ES module like ours.
    writeFileSync(join(dir, "spec.ts"), readFileSync(specFile, "utf8"));
    const specImport = "./spec.js";
    const oursImport = relative(dir, join(repoRoot, "generated/types.js"));
    const lines = [
      `import type * as Spec from "${specImport}";`,
      `import type * as Ours from "${oursImport}";`,
      "type Extends<A, B> = [A] extends [B] ? true : false;",
    ];
    for (const name of shared) {
      lines.push(`export const ${name}_specToOurs: Extends<Spec.${name}, Ours.${name}> = true;`);
      if (!EXTENDED_UNIONS.has(name))
        lines.push(`export const ${name}_oursToSpec: Extends<Ours.${name}, Spec.${name}> = true;`);
    }
    // The extended unions must not accept what the spec lacks, or the check above would be vacuous.
    lines.push(`export const ClientRequest_isWider: Extends<Ours.ClientRequest, Spec.ClientRequest> = false;`);
    const file = join(dir, "assignability.ts");
    writeFileSync(file, lines.join("\n") + "\n");
    const out = typecheck(dir, [file]);
    expect(out).toBe("");
  });
});
