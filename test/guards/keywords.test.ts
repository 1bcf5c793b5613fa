// Every assertion keyword, on a schema made to use them all (test/fixtures/keywords): the generated guard and
// explainer agree with Ajv 2020 on the original schema, for generated values and for mutants that break each keyword.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { repoRoot } from "../kit/paths.js";
import { KEYWORD_MUTATION_KINDS, MUTATION_KINDS } from "./arbitrary.js";
import { Agreement, generateSubject, type Subject } from "./agreement.js";

const schemaFile = join(repoRoot, "test/fixtures/keywords/schema.json");
const DEFAULT_SEED = 20260728;
const seed = process.env["FC_SEED"] !== undefined ? Number(process.env["FC_SEED"]) : DEFAULT_SEED;
if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${process.env["FC_SEED"]}`);
const RUNS_PER_DEFINITION = 500;
const SWEEP_VALUES = 6;

let subject: Subject;
let agreement: Agreement;
beforeAll(async () => {
  subject = await generateSubject(schemaFile);
  agreement = new Agreement(subject, seed, 6, { ajvEqualityKeys: true });
});

describe(`keyword guards agree with Ajv on generated values and mutants (seed ${seed}; FC_SEED overrides)`, () => {
  test("every definition, random valid values and mutants", () => {
    subject.model.definitions.forEach((d, i) => agreement.run(d.name, RUNS_PER_DEFINITION, i));
  });

  test("every definition, every single mutation at every site of a few generated values", () => {
    subject.model.definitions.forEach((d, i) => agreement.sweep(d.name, SWEEP_VALUES, 1_000_000 + i));
  });

  afterAll(() => {
    console.log(agreement.summary());
  });

  test("enough values of both verdicts, and every keyword's mutation, were checked", () => {
    const { counts, mutationKinds } = agreement;
    expect(counts.oracleTrue).toBeGreaterThanOrEqual(2_000);
    expect(counts.oracleFalse).toBeGreaterThanOrEqual(2_000);
    for (const kind of [...KEYWORD_MUTATION_KINDS, ...MUTATION_KINDS.filter((k) => k !== "wrong-tag")]) {
      expect(mutationKinds.get(kind) ?? 0, kind).toBeGreaterThan(20);
    }
  });
});
