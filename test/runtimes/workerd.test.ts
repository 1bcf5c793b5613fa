// The built package in workerd (through miniflare): a worker bundled from `mcpgen/web` serving the fetch handler in stateless mode, called by our Node client on both eras.
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../kit/paths.js";
import {
  cancelOutcome,
  expectMalformedBodyRefused,
  expectOversizedBodyRefused,
  httpOutcome,
  node22Binary,
  runtimeProject,
  SERVED,
  startServer,
  workerdBinary,
  type RunningServer,
  type RuntimeProject,
} from "../kit/runtimes.js";

const timeout = 120_000;
let project: RuntimeProject;
let inputs: string[];
let worker: RunningServer;

beforeAll(async () => {
  project = await runtimeProject();
  // As wrangler bundles a worker: the web entries win (conditions), and nothing may stay external.
  const bundle = join(project.dir, "worker.bundle.js");
  const result = await build({
    absWorkingDir: project.dir,
    entryPoints: ["worker.mjs"],
    bundle: true,
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    format: "esm",
    target: "es2022",
    outfile: bundle,
    metafile: true,
    logLevel: "silent",
  });
  inputs = Object.keys(result.metafile.inputs);
  // No compatibility flag: the worker gets no Node APIs (nodejs_compat), so a node:* import would fail to load.
  worker = await startServer(node22Binary(), [join(repoRoot, "test/fixtures/runtimes/miniflare.mjs"), bundle], {
    cwd: project.dir,
    env: { ...project.env, MINIFLARE_WORKERD_PATH: workerdBinary() },
  });
}, timeout);

afterAll(async () => {
  await worker?.stop();
  project?.remove();
});

describe("the fetch handler in workerd, stateless", () => {
  it("the worker's bundle holds no node: module, only the project's files and the installed package's web entries", () => {
    expect(inputs.filter((input) => input.startsWith("node:"))).toEqual([]);
    expect(inputs).toContain("node_modules/mcpgen/dist/runtime/web.js");
    // Everything from the project and its installed package: nothing of this repository's sources.
    expect(
      inputs.filter(
        (input) => !input.startsWith("node_modules/mcpgen/dist/") && input !== "worker.mjs" && input !== "server.mjs",
      ),
    ).toEqual([]);
  });

  it(
    "answers our Node client speaking 2026-07-28: tools listed and called, a 400 KB body, progress, an unknown tool's -32602",
    async () => {
      const outcome = await httpOutcome(worker.url, "auto");
      expect(outcome.server).toBe("workerd");
      expect(outcome.sessionId).toBeUndefined();
      expect(outcome).toMatchObject({ ...SERVED, protocolVersion: "2026-07-28" });
    },
    timeout,
  );

  it(
    "a 2026-07-28 call our client cancels ends for the client and the worker serves on, but workerd drops the handler without firing its signal",
    async () => {
      // workerd cancels the request's pending work when the client goes away ("code had hung" in its log), and no
      // abort event reaches the handler. The guard is short: waiting longer for what does not come proves nothing more.
      expect(await cancelOutcome(worker.url, "auto", 2_000)).toEqual({
        rejection: "RequestCancelledError",
        aborted: 0,
      });
    },
    timeout,
  );

  it(
    "a 2025-11-25 client is served request by request: initialize, then each call on its own, with no session id",
    async () => {
      const outcome = await httpOutcome(worker.url, "legacy");
      expect(outcome.server).toBe("workerd");
      expect(outcome.sessionId).toBeUndefined();
      expect(outcome).toMatchObject({ ...SERVED, protocolVersion: "2025-11-25" });
    },
    timeout,
  );

  it("has no stream to GET and no session to DELETE: both 405", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(worker.url, { method, headers: { accept: "text/event-stream" } });
      await response.body?.cancel();
      expect(response.status, method).toBe(405);
    }
  });

  it(
    "refuses a body that is not JSON with 400 and a parse error",
    () => expectMalformedBodyRefused(worker.url),
    timeout,
  );

  it(
    "refuses a body over maxBodyBytes with 413, declared or chunked",
    () => expectOversizedBodyRefused(worker.url),
    timeout,
  );
});
