// The official conformance suite's client scenarios, each against its own test server, driving examples/conformance/client.ts.
import { beforeAll, describe, expect, it } from "vitest";
import { builtExample, problems, runConformance, succeeded, type CliRun } from "./helpers.js";

/** The client scenarios this SDK passes, with the checks that must have succeeded. */
const EXPECTED: Record<string, string[]> = {
  initialize: ["mcp-client-initialization"],
  tools_call: ["tool-add-numbers"],
  "elicitation-sep1034-client-defaults": [
    "client-elicitation-sep1034-string-default",
    "client-elicitation-sep1034-integer-default",
    "client-elicitation-sep1034-number-default",
    "client-elicitation-sep1034-enum-default",
    "client-elicitation-sep1034-boolean-default",
  ],
  // SEP-1699: reconnect by GET after a graceful close, not before `retry` ms, with Last-Event-ID.
  "sse-retry": ["client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"],
};

const runs = new Map<string, CliRun>();

beforeAll(async () => {
  const command = `${process.execPath} ${builtExample("conformance/client")}`;
  // One scenario at a time: run side by side on a loaded 2-core machine, a scenario's own timing checks flaked.
  for (const scenario of Object.keys(EXPECTED)) {
    runs.set(scenario, await runConformance("client", ["--command", command, "--scenario", scenario, "--timeout", "30000"], 60_000));
  }
}, 180_000);

describe("conformance: client scenarios against examples/conformance/client.ts", () => {
  for (const [scenario, ids] of Object.entries(EXPECTED)) {
    it(`${scenario}: ${ids.join(", ")} succeed, nothing fails or warns`, () => {
      const run = runs.get(scenario)!;
      const checks = run.checks.get(scenario);
      expect(checks, `no checks.json for ${scenario}: ${run.stdout.slice(-2000)}`).toBeDefined();
      expect(problems(checks!)).toEqual([]);
      expect(succeeded(checks!)).toEqual(expect.arrayContaining(ids));
      expect(run.code, run.stdout.slice(-2000)).toBe(0);
    });
  }
});
