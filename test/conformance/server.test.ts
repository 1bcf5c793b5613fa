// The official conformance suite (all 32 server scenarios, pending ones included) against the fixture server built on the generated SDK.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  builtExample,
  problems,
  runConformance,
  spawnServer,
  succeeded,
  type CliRun,
  type SpawnedServer,
} from "./helpers.js";

/** Every server scenario of @modelcontextprotocol/conformance 0.1.16, with the checks that must have succeeded. */
const EXPECTED: Record<string, string[]> = {
  "server-initialize": ["server-initialize"],
  "logging-set-level": ["logging-set-level"],
  ping: ["ping"],
  "completion-complete": ["completion-complete"],
  "tools-list": ["tools-list"],
  "tools-call-simple-text": ["tools-call-simple-text"],
  "tools-call-image": ["tools-call-image"],
  "tools-call-audio": ["tools-call-audio"],
  "tools-call-embedded-resource": ["tools-call-embedded-resource"],
  "tools-call-mixed-content": ["tools-call-mixed-content"],
  "tools-call-with-logging": ["tools-call-with-logging"],
  "tools-call-error": ["tools-call-error"],
  "tools-call-with-progress": ["tools-call-with-progress"],
  "tools-call-sampling": ["tools-call-sampling"],
  "tools-call-elicitation": ["tools-call-elicitation"],
  "json-schema-2020-12": [
    "json-schema-2020-12-tool-found",
    "json-schema-2020-12-$schema",
    "json-schema-2020-12-$defs",
    "json-schema-2020-12-additionalProperties",
  ],
  "elicitation-sep1034-defaults": [
    "elicitation-sep1034-string-default",
    "elicitation-sep1034-integer-default",
    "elicitation-sep1034-number-default",
    "elicitation-sep1034-enum-default",
    "elicitation-sep1034-boolean-default",
  ],
  // SEP-1699: priming event first, a retry field, and the result after a GET with Last-Event-ID.
  "server-sse-polling": ["server-sse-priming-event", "server-sse-retry-field", "server-sse-disconnect-resume"],
  "server-sse-multiple-streams": ["server-accepts-multiple-post-streams", "server-sse-streams-functional"],
  "elicitation-sep1330-enums": [
    "elicitation-sep1330-untitled-single",
    "elicitation-sep1330-titled-single",
    "elicitation-sep1330-legacy-enumnames",
    "elicitation-sep1330-untitled-multi",
    "elicitation-sep1330-titled-multi",
  ],
  "resources-list": ["resources-list"],
  "resources-read-text": ["resources-read-text"],
  "resources-read-binary": ["resources-read-binary"],
  "resources-templates-read": ["resources-templates-read"],
  "resources-subscribe": ["resources-subscribe"],
  "resources-unsubscribe": ["resources-unsubscribe"],
  "prompts-list": ["prompts-list"],
  "prompts-get-simple": ["prompts-get-simple"],
  "prompts-get-with-args": ["prompts-get-with-args"],
  "prompts-get-embedded-resource": ["prompts-get-embedded-resource"],
  "prompts-get-with-image": ["prompts-get-with-image"],
  "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
};

let server: SpawnedServer;
let run: CliRun;

beforeAll(async () => {
  server = await spawnServer(builtExample("conformance/server"), /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  run = await runConformance("server", ["--url", server.url, "--suite", "all"], 120_000);
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

describe("conformance: server scenarios against examples/conformance/server.ts", () => {
  it("the fixture serves on 127.0.0.1 at /mcp", () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
  });

  it("runs exactly the 32 known scenarios and the CLI reports success", () => {
    expect([...run.checks.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(run.code, run.stdout.slice(-4000)).toBe(0);
  });

  for (const [scenario, ids] of Object.entries(EXPECTED)) {
    it(`${scenario}: ${ids.join(", ")} succeed, nothing fails or warns`, () => {
      const checks = run.checks.get(scenario);
      expect(checks, `no checks.json for ${scenario}`).toBeDefined();
      expect(problems(checks!)).toEqual([]);
      expect(succeeded(checks!)).toEqual(expect.arrayContaining(ids));
    });
  }
});
