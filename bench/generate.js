// Benchmark: `mcpgen generate` and `mcpgen check` as whole processes on the bundled schema (target: each under 1 s).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const runs = Number(process.env.RUNS ?? 7);
const out = mkdtempSync(join(tmpdir(), "mcpgen-bench-"));

function time(args) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [join(root, "bin/mcpgen.js"), ...args], { cwd: root, encoding: "utf8" });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`mcpgen ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
    samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { min: samples[0], median: samples[Math.floor(samples.length / 2)], max: samples.at(-1) };
}

const rows = [
  ["mcpgen generate (fresh output dir)", time(["generate", "--out", out, "--runtime-import", "mcpgen/runtime"])],
  ["mcpgen check (bundled schema)", time(["check"])],
];
rmSync(out, { recursive: true, force: true });
console.log(`whole-process timings over ${runs} runs on ${process.version}, target < 1000 ms each`);
for (const [name, t] of rows) {
  console.log(`${name.padEnd(40)} median ${t.median.toFixed(0).padStart(5)} ms  min ${t.min.toFixed(0).padStart(5)} ms  max ${t.max.toFixed(0).padStart(5)} ms  ${t.median < 1000 ? "ok" : "OVER TARGET"}`);
}
