// Benchmark: the generated guards on the spec's own example messages, in ns per guard call, plus the whole
// corpus through the JSONRPCMessage guard. Run after `npm run build`: `node bench/guards.js`.
// Env: ROUNDS (default 7; the best round is reported), ITERATIONS (default 200000 calls per round and row).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const guards = await import(path.join(root, "dist/generated/guards.js"));
const examplesDir = path.join(root, "test/fixtures/reference/examples-2026-07-28");
const rounds = Number(process.env.ROUNDS ?? 7);
const iterations = Number(process.env.ITERATIONS ?? 200_000);

/** Every example whose type has a guard here, paired with that guard. */
const corpus = [];
for (const type of readdirSync(examplesDir).sort()) {
  const dir = path.join(examplesDir, type);
  const guard = guards[`is${type}`];
  if (!statSync(dir).isDirectory() || typeof guard !== "function") continue;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    corpus.push({ guard, value: JSON.parse(readFileSync(path.join(dir, file), "utf8")) });
  }
}
const messages = corpus.map((c) => c.value).filter((v) => v !== null && typeof v === "object" && v.jsonrpc === "2.0");

function best(fn) {
  let ns = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    fn();
    ns = Math.min(ns, Number(process.hrtime.bigint() - start));
  }
  return ns;
}

let sink = 0;
const perType = () => {
  for (let i = 0; i < iterations; i++) {
    const c = corpus[i % corpus.length];
    if (c.guard(c.value)) sink++;
  }
};
const envelope = () => {
  for (let i = 0; i < iterations; i++) if (guards.isJSONRPCMessage(messages[i % messages.length])) sink++;
};
perType();
envelope();
console.log(
  `guards benchmark on node ${process.version}: ${corpus.length} examples (${messages.length} whole messages), best of ${rounds} rounds of ${iterations} calls`,
);
console.log(
  `  ${"isX(example) for the example's own type".padEnd(44)} ${(best(perType) / iterations).toFixed(1).padStart(8)} ns/call`,
);
console.log(
  `  ${"isJSONRPCMessage(message)".padEnd(44)} ${(best(envelope) / iterations).toFixed(1).padStart(8)} ns/call`,
);
if (sink === 0) console.log("(no guard accepted anything)");
