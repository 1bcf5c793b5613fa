// Runs every benchmark in bench/ (each bench/*.js except this one), one after another, each in its own process.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const self = "run.js";
const scripts = readdirSync(here)
  .filter((name) => name.endsWith(".js") && name !== self)
  .sort();

let failed = 0;
for (const name of scripts) {
  console.log(`\n=== bench/${name} ===`);
  const r = spawnSync(process.execPath, [join(here, name)], { stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    console.log(`bench/${name} exited with ${r.status ?? r.signal}`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
