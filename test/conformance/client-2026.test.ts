// Conformance 0.2.0-alpha.12's client requirement sets for 2026-07-28 and 2025-11-25, driving examples/conformance/client.ts.
import { beforeAll, describe, expect, it } from "vitest";
import {
  builtExample,
  passedOnItsChecks,
  requirementOutcomes,
  runConformance,
  type Check,
  type CliRun,
  type RequirementOutcome,
} from "./helpers.js";

type Revision = "2026-07-28" | "2025-11-25";

/** The authorization scenarios both revisions require, in the suite's order. */
const AUTHORIZATION = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
];
/** The same in both revisions: extensions, and a scenario added after the release. */
const NOT_SCORED = [
  "auth/client-credentials-jwt",
  "auth/client-credentials-basic",
  "auth/enterprise-managed-authorization",
  "auth/dpop",
  "auth/dpop-nonce",
  "auth/wif-jwt-bearer",
  "json-schema-2020-12-preservation",
];

/** The client scenarios each frozen requirement set runs: `required` are scored, `notScored` run for visibility. */
const REQUIREMENTS: Record<Revision, { required: readonly string[]; notScored: readonly string[] }> = {
  "2026-07-28": {
    required: [
      "tools_call",
      "request-metadata",
      ...AUTHORIZATION,
      "auth/resource-mismatch",
      "auth/offline-access-scope",
      "auth/offline-access-not-supported",
      "auth/authorization-server-migration",
      "auth/iss-supported",
      "auth/iss-not-advertised",
      "auth/iss-supported-missing",
      "auth/iss-wrong-issuer",
      "auth/iss-unexpected",
      "auth/iss-normalized",
      "auth/metadata-issuer-mismatch",
      "sep-2322-client-request-state",
      "http-standard-headers",
      "http-custom-headers",
      "http-invalid-tool-headers",
      "json-schema-ref-no-deref",
    ],
    notScored: NOT_SCORED,
  },
  "2025-11-25": {
    required: ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", ...AUTHORIZATION],
    notScored: NOT_SCORED,
  },
};

/**
 * Scenarios that must pass on their own checks (none fails, one of the scenario's own succeeds). `initialize` of
 * 2025-11-25 writes no check at all in this release, so it cannot be listed; enterprise-managed-authorization and
 * wif-jwt-bearer are extensions this client does not implement.
 */
const MUST_PASS: Record<Revision, readonly string[]> = {
  "2026-07-28": [
    ...REQUIREMENTS["2026-07-28"].required,
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/dpop",
    "auth/dpop-nonce",
    "json-schema-2020-12-preservation",
  ],
  "2025-11-25": [
    ...REQUIREMENTS["2025-11-25"].required.filter((s) => s !== "initialize"),
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/dpop",
    "auth/dpop-nonce",
    "json-schema-2020-12-preservation",
  ],
};

/**
 * http-standard-headers judges each method's headers on the first request of it, and skips a method never sent: a
 * 2026-07-28 client never sends the handshake's two messages, so their entries are the only ones it may skip.
 */
const HANDSHAKE_ENTRIES = /\b(initialize|notifications\/initialized)\b/;

const REVISIONS: readonly Revision[] = ["2026-07-28", "2025-11-25"];
const runs = new Map<Revision, CliRun>();
const outcomes = new Map<Revision, Map<string, RequirementOutcome>>();

beforeAll(async () => {
  const command = `${process.execPath} ${builtExample("conformance/client")}`;
  for (const revision of REVISIONS) {
    const run = await runConformance(
      "client",
      ["--command", command, "--requirements", revision, "--timeout", "30000"],
      240_000,
      "0.2.0-alpha.12",
    );
    runs.set(revision, run);
    outcomes.set(revision, requirementOutcomes(run));
  }
}, 500_000);

function statuses(checks: readonly Check[]): string {
  if (checks.length === 0) return "no checks";
  return checks
    .filter((c) => c.status !== "INFO")
    .map((c) => `${c.id}: ${c.status}${c.errorMessage === undefined ? "" : ` (${c.errorMessage})`}`)
    .join(", ");
}

describe("conformance 0.2.0-alpha.12: client requirement sets against examples/conformance/client.ts", () => {
  for (const revision of REVISIONS) {
    it(`${revision}: runs exactly the frozen requirement set`, () => {
      const reported = outcomes.get(revision)!;
      const { required, notScored } = REQUIREMENTS[revision];
      expect([...reported.keys()].sort()).toEqual([...required, ...notScored].sort());
      expect(
        [...reported].filter(([, o]) => o.notScored !== undefined).map(([s]) => s),
        "not-scored scenarios",
      ).toEqual([...notScored]);
    });

    for (const scenario of MUST_PASS[revision]) {
      it(`${revision} ${scenario}: passes on its own checks, none failing or warning`, () => {
        const checks = runs.get(revision)!.checks.get(scenario);
        expect(checks, `no checks.json for ${scenario}`).toBeDefined();
        expect(passedOnItsChecks(checks!), statuses(checks!)).toBe(true);
        expect(checks!.filter((c) => c.status === "WARNING").map((c) => c.id)).toEqual([]);
      });
    }
  }

  it("2026-07-28 http-standard-headers: every method sent had its headers checked; only the handshake's are skipped", () => {
    const checks = runs.get("2026-07-28")!.checks.get("http-standard-headers")!;
    const judged = checks.filter((c) => c.id === "sep-2243-client-includes-standard-headers");
    const skipped = judged.filter((c) => c.status === "SKIPPED");
    expect(skipped.every((c) => HANDSHAKE_ENTRIES.test(`${c.name} ${c.description} ${c.errorMessage ?? ""}`))).toBe(
      true,
    );
    expect(skipped.length).toBeLessThanOrEqual(2);
    expect(judged.filter((c) => c.status === "SUCCESS").length).toBeGreaterThanOrEqual(9);
  });

  it("2026-07-28: the CLI scores the revision as met (exit 0)", () => {
    const run = runs.get("2026-07-28")!;
    const scored = [...outcomes.get("2026-07-28")!].filter(([, o]) => o.notScored === undefined);
    expect(scored.filter(([, o]) => o.failed > 0).map(([s]) => s)).toEqual([]);
    expect(run.code, run.stdout.split("=== SUITE SUMMARY ===")[1] ?? run.stderr).toBe(0);
  });
});
