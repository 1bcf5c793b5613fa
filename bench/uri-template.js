// Benchmark: resource-template matching time per URI character, 1 KB to 4 MiB, mcpgen's matcher beside the official SDK's.
//
//   npm run build && node bench/uri-template.js
//   ROUNDS=5 SDK_BUDGET_MS=4000   knobs (defaults shown)
//
// Each template gets the URIs that are worst for it: one that fails only at its last character (a backtracking
// RegExp tries every split first: quadratic or worse) and one that matches (every pass of mcpgen's matcher runs over
// the whole URI). mcpgen's matcher has no length cap of its own (McpServer's maxUriLength is 8 KiB by default), so
// it is timed up to 4 MiB; the time per character should stay flat, and the ratio largest/smallest is printed
// (target: at most 2). The SDK's UriTemplate.match runs in a worker thread on growing sizes until one takes longer
// than SDK_BUDGET_MS (the worker is then stopped), to show its growth; it refuses URIs over 1,000,000 characters.
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KB = 1024;

/** The templates and, per size, their worst URIs; shared by the main thread and the SDK's worker. */
const CASES = [
  {
    template: "file:///{name}.{ext}",
    fails: (n) => "file:///" + ".".repeat(n - 9) + "/",
    matches: (n) => "file:///" + ".".repeat(n - 8),
  },
  {
    template: "git://{+repo}/blob/{+path}",
    fails: (n) => "git://" + "/blob/".repeat(Math.floor((n - 7) / 6)) + "\n",
    matches: (n) => "git://" + "/blob/".repeat(Math.floor((n - 7) / 6)) + "x",
  },
  {
    template: "x://{a}.{b}.{c}.{d}/{+e}/{+f}/{g}.{h}",
    fails: (n) => "x://" + ".".repeat((n - 8) >> 1) + "/".repeat((n - 8) >> 1) + "a.b/",
    matches: (n) => "x://" + ".".repeat((n - 8) >> 1) + "/".repeat((n - 8) >> 1) + "/a.b",
  },
];

if (!isMainThread) {
  // The SDK's side: time one match per size, smallest first, posting each result as it comes.
  const { UriTemplate } = await import("@modelcontextprotocol/sdk/shared/uriTemplate.js");
  const { index, sizes } = workerData;
  const c = CASES[index];
  const matcher = new UriTemplate(c.template);
  for (const size of sizes) {
    const uri = c.fails(size);
    const start = process.hrtime.bigint();
    let refused = false;
    try {
      matcher.match(uri);
    } catch {
      refused = true; // over its own length cap
    }
    parentPort.postMessage({ size, ns: Number(process.hrtime.bigint() - start), refused, length: uri.length });
    if (refused) break;
  }
} else {
  const { compileUriTemplate } = await import(path.join(root, "dist/runtime/server/uri-template.js"));
  const rounds = Number(process.env.ROUNDS ?? 5);
  const sdkBudgetMs = Number(process.env.SDK_BUDGET_MS ?? 4000);
  const SIZES = [KB, 16 * KB, 256 * KB, 1024 * KB, 4096 * KB];
  const SDK_SIZES = [256, 512, KB, 2 * KB, 4 * KB, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 128 * KB, 256 * KB, 1024 * KB];
  const label = (n) => (n >= 1024 * KB ? `${n / (1024 * KB)} MiB` : n >= KB ? `${n / KB} KB` : `${n} B`);

  /** Best-of-rounds time of one match, in ns per URI character; each round repeats to fill about 20 ms. */
  function nsPerChar(matcher, uri, expectMatch) {
    const got = matcher.match(uri);
    if ((got !== undefined) !== expectMatch) throw new Error(`${matcher.template} answered unexpectedly`);
    const repeat = Math.max(1, Math.round((2 * 1024 * KB) / uri.length));
    let best = Infinity;
    for (let r = 0; r < rounds; r++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < repeat; i++) matcher.match(uri);
      best = Math.min(best, Number(process.hrtime.bigint() - start) / repeat);
    }
    return best / uri.length;
  }

  /** The SDK's times per size for one template, stopped at the budget. */
  function sdkRow(index) {
    return new Promise((resolve) => {
      const rows = [];
      const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { index, sizes: SDK_SIZES } });
      let timer;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          const next = SDK_SIZES[rows.length];
          if (next !== undefined) rows.push({ size: next, overBudget: true });
          void worker.terminate();
        }, sdkBudgetMs);
      };
      worker.on("message", (row) => {
        rows.push(row);
        arm();
      });
      worker.on("exit", () => {
        clearTimeout(timer);
        resolve(rows);
      });
      worker.on("error", () => {});
      arm();
    });
  }

  console.log(`URI template matching on node ${process.version}: ns per URI character, best of ${rounds} rounds`);
  let worst = 0;
  for (const [index, c] of CASES.entries()) {
    const matcher = compileUriTemplate(c.template);
    console.log(`\n  ${c.template}`);
    console.log(`    ${"mcpgen".padEnd(18)}${SIZES.map((n) => label(n).padStart(10)).join("")}   largest/smallest`);
    for (const shape of ["fails", "matches"]) {
      const perChar = SIZES.map((n) => nsPerChar(matcher, c[shape](n), shape === "matches"));
      const ratio = perChar[perChar.length - 1] / perChar[0];
      worst = Math.max(worst, ratio);
      console.log(
        `    ${`URI that ${shape}`.padEnd(18)}${perChar.map((v) => v.toFixed(2).padStart(10)).join("")}   ${ratio.toFixed(2)}x`,
      );
    }
    const sdk = await sdkRow(index);
    const cells = sdk.map((row) =>
      row.overBudget
        ? `${label(row.size)}: over ${sdkBudgetMs / 1000} s (stopped)`
        : row.refused
          ? `${label(row.size)}: refused (over its 1,000,000-character cap)`
          : `${label(row.size)}: ${(row.ns / row.length).toFixed(1)} ns/char (${(row.ns / 1e6).toFixed(1)} ms)`,
    );
    console.log(`    SDK UriTemplate, URI that fails:`);
    for (const cell of cells) console.log(`      ${cell}`);
  }
  console.log(
    `\nmcpgen: worst ratio of ns/char at 4 MiB to ns/char at 1 KB over all rows: ${worst.toFixed(2)}x (target <= 2x)`,
  );
}
