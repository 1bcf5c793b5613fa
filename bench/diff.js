// Benchmark: `mcpgen diff` on two full schemas and `mcpgen diff --api` on two generated SDKs, as whole processes
// (targets: under 1 s and under 3 s). Prints figures; asserts nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const ref = join(root, "test/fixtures/reference/mcp-schema");
const runs = Number(process.env.RUNS ?? 7);
const work = mkdtempSync(join(tmpdir(), "mcpgen-bench-diff-"));

function time(args, okCodes = [0, 1]) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (!okCodes.includes(r.status)) throw new Error(`${args.join(" ")} failed (${r.status}): ${r.stderr}`);
    samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { min: samples[0], median: samples[Math.floor(samples.length / 2)], max: samples.at(-1) };
}

const cli = join(root, "bin/mcpgen.js");
function generate(schema, out) {
  const args = [cli, "generate", "--schema", schema, "--out", out, "--runtime-import", "mcpgen/runtime"];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`generate ${schema} failed: ${r.stderr}`);
}

// The OLD SDK: the 2025-06-18 revision (methods derived from it, no sidecar); the NEW SDK: our combined schema.
generate(join(ref, "2025-06-18/schema.json"), join(work, "old"));
generate(join(root, "schema/schema.json"), join(work, "new"));

const rows = [
  ["node startup (baseline)", time(["-e", ""], [0])],
  [
    "mcpgen diff 2025-11-25 -> 2026-07-28 (text)",
    time([cli, "diff", join(ref, "2025-11-25/schema.json"), join(ref, "2026-07-28/schema.json")]),
  ],
  [
    "mcpgen diff 2025-06-18 -> 2025-11-25 (json)",
    time([cli, "diff", join(ref, "2025-06-18/schema.json"), join(ref, "2025-11-25/schema.json"), "--format", "json"]),
  ],
  [
    "mcpgen diff 2025-03-26 -> 2025-06-18 (text)",
    time([cli, "diff", join(ref, "2025-03-26/schema.json"), join(ref, "2025-06-18/schema.json")]),
  ],
  [
    "mcpgen diff base -> combined (markdown)",
    time([cli, "diff", "schema/base/2025-11-25.schema.json", "schema/schema.json", "--format", "markdown"]),
  ],
  [
    "mcpgen diff --api 2025-06-18 SDK -> combined SDK",
    time([cli, "diff", "--api", join(work, "old"), join(work, "new")]),
  ],
];
rmSync(work, { recursive: true, force: true });
console.log(`whole-process timings over ${runs} runs on ${process.version}; targets: diff < 1000 ms, --api < 3000 ms`);
for (const [name, t] of rows) {
  console.log(
    `${name.padEnd(50)} median ${t.median.toFixed(0).padStart(5)} ms  (min ${t.min.toFixed(0)}, max ${t.max.toFixed(0)})`,
  );
}
