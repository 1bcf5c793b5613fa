// Benchmark: `mcpgen generate` and `mcpgen check` as whole processes on the bundled schema (target: each under 1 s),
// by wall clock and by CPU time (all threads), which a busy machine disturbs less. Prints figures; asserts nothing.
// ROOT=<dir> times another checkout's build (to compare before and after on the same machine at the same time).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(process.env.ROOT ?? resolve(fileURLToPath(import.meta.url), "../.."));
const runs = Number(process.env.RUNS ?? 7);
const work = mkdtempSync(join(tmpdir(), "mcpgen-bench-"));
const out = join(work, "out");
// Reports the child's CPU time (user + system, every thread) on fd 3 as it exits.
const probe = join(work, "cpu.cjs");
writeFileSync(
  probe,
  'process.on("exit", () => { const u = process.cpuUsage(); try { require("node:fs").writeSync(3, String((u.user + u.system) / 1000)); } catch {} });\n',
);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function time(args) {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ["--require", probe, join(root, "bin/mcpgen.js"), ...args], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    wall.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.status !== 0) throw new Error(`mcpgen ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
    cpu.push(Number(r.output[3]));
  }
  return { median: median(wall), min: Math.min(...wall), max: Math.max(...wall), cpu: median(cpu) };
}

const rows = [
  ["mcpgen generate (fresh output dir)", time(["generate", "--out", out, "--runtime-import", "mcpgen/runtime"])],
  ["mcpgen check (bundled schema)", time(["check"])],
];
rmSync(work, { recursive: true, force: true });
console.log(`whole-process timings of ${root} over ${runs} runs on ${process.version}, target < 1000 ms each`);
for (const [name, t] of rows) {
  const f = (ms) => ms.toFixed(0).padStart(5);
  console.log(
    `${name.padEnd(40)} median ${f(t.median)} ms  min ${f(t.min)} ms  max ${f(t.max)} ms  cpu ${f(t.cpu)} ms  ${t.median < 1000 ? "ok" : "OVER TARGET"}`,
  );
}
