// The onSession one-liner `(t) => server.connect(t)` compiles under strict, and wrong callbacks stay type errors.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { repoRoot, tempDir } from "../kit/paths.js";

const run = promisify(execFile);

it("createStreamableHttpServer takes onSession: (t) => server.connect(t), and still refuses a callback of another shape", async () => {
  const dir = tempDir("types-on-session");
  const config = {
    // The repository's settings (strict, "mcpgen" mapped to the sources), over this one file.
    extends: relative(dir, join(repoRoot, "tsconfig.json")),
    compilerOptions: { noEmit: true, strict: true, skipLibCheck: false, rootDir: relative(dir, repoRoot) },
    include: [relative(dir, join(repoRoot, "test/types/on-session.ts"))],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
  const out = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8" }).then(
    (r) => r.stdout,
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  // Hang guard: tsc reaches the whole SDK's declarations from the one file.
  expect(out).toBe("");
}, 120_000);
