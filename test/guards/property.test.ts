// Property-based agreement: values generated from the model (valid ones and mutants) get the same verdict from
// every generated guard as from Ajv on the original schema, and explainX is empty exactly when the guard says yes.
import { afterAll, describe, expect, test } from "vitest";
import { loadSchema } from "../../generator/load.js";
import { buildModel } from "../../generator/build-model.js";
import { definitionMap } from "../../generator/model.js";
import { MUTATION_KINDS } from "./arbitrary.js";
import { Agreement, MESSAGE_UNIONS } from "./agreement.js";
import { createOracle, definitionNames, explainFor, guardFor, schemaFile } from "./oracle.js";

const DEFAULT_SEED = 20251125;
const seed = process.env["FC_SEED"] !== undefined ? Number(process.env["FC_SEED"]) : DEFAULT_SEED;
if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${process.env["FC_SEED"]}`);

const model = buildModel(loadSchema(schemaFile));
const defs = definitionMap(model);
/** Depth budget for refs and nesting: deep enough to reach content blocks inside results inside responses. */
const DEPTH = 8;
const RUNS_PER_DEFINITION = 150;
const RUNS_PER_UNION = 2000;
/** Valid values per definition that get every single mutation at every site. */
const SWEEP_VALUES = 2;

const agreement = new Agreement({ model, defs, guardFor, explainFor, oracle: createOracle(schemaFile) }, seed, DEPTH);
const { counts, mutationKinds } = agreement;

/** Messages whose params are declared inline get a guard and explainer of their own, checked like definitions. */
const inlineParams = model.messages.filter(
  (m) => m.params.ref === undefined && m.paramsType !== "Record<string, unknown>",
);

describe(`guards agree with Ajv on generated values (seed ${seed}; FC_SEED overrides)`, () => {
  test("the model and the schema file name the same definitions", () => {
    expect(model.definitions.map((d) => d.name).sort()).toEqual([...definitionNames].sort());
  });

  test.each(MESSAGE_UNIONS.map((u, i) => [u, i] as const))("message union %s", (name, i) => {
    agreement.run(name, RUNS_PER_UNION, 1_000_000 + i);
  });

  test("every definition", () => {
    model.definitions.forEach((d, i) => agreement.run(d.name, RUNS_PER_DEFINITION, i));
  });

  test("inline params guards (is<Message>$Params)", () => {
    expect(inlineParams.length).toBeGreaterThan(0);
    inlineParams.forEach((m, i) => agreement.run(`${m.message}$Params`, RUNS_PER_DEFINITION, 3_000_000 + i, m.params));
  });

  test("every definition, every single mutation at every site of a few generated values", () => {
    model.definitions.forEach((d, i) => agreement.sweep(d.name, SWEEP_VALUES, 2_000_000 + i));
  });

  afterAll(() => {
    console.log(agreement.summary());
  });

  test("enough values of both verdicts were checked", () => {
    // Runs after the suites above (vitest runs a file's tests in order).
    expect(counts.checked).toBeGreaterThanOrEqual(10_000);
    expect(counts.oracleTrue).toBeGreaterThanOrEqual(2_000);
    expect(counts.oracleFalse).toBeGreaterThanOrEqual(2_000);
    // Every kind of mutation was exercised, so no branch of the mutator is dead.
    for (const kind of MUTATION_KINDS) {
      expect(mutationKinds.get(kind) ?? 0, kind).toBeGreaterThan(20);
    }
  });
});
