// Property-based agreement: values generated from the model (valid ones and mutants) get the same verdict from
// every generated guard as from Ajv on the original schema, and explainX is empty exactly when the guard says yes.
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { loadSchema } from "../../generator/load.js";
import { buildModel } from "../../generator/build-model.js";
import { definitionMap, type SchemaNode } from "../../generator/model.js";
import { allMutants, arbitraryFor, asJson, mutate, MUTATION_KINDS, type MutationKind } from "./arbitrary.js";
import { definitionNames, explainFor, guardFor, isJsonPointer, oracleFor, oracleForInlineParams, schemaFile } from "./oracle.js";

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
const UNIONS = ["JSONRPCMessage", "ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification", "ClientResult", "ServerResult"];

const counts = { checked: 0, oracleTrue: 0, oracleFalse: 0, generatedValid: 0, mutants: 0, mutantsStillValid: 0 };
const mutationKinds = new Map<MutationKind, number>();

type Sample = { from: "valid" | "mutant"; value: unknown; kinds?: MutationKind[] };

function samplesFor(node: SchemaNode): fc.Arbitrary<Sample> {
  const valid = arbitraryFor(node, defs, DEPTH).map((v): Sample => ({ from: "valid", value: asJson(v) }));
  const mutant = fc
    .tuple(arbitraryFor(node, defs, DEPTH), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }))
    .map(([v, tape]): Sample => {
      const m = mutate(defs, node, v, tape);
      return { from: "mutant", value: m.value, kinds: m.kinds };
    });
  return fc.oneof(valid, mutant);
}

/** The property: one value, four verdicts that must line up. Returns a description of any mismatch. */
function check(name: string, sample: Sample): void {
  const guard = guardFor(name)(sample.value);
  // "<Message>$Params" names the params a message declares inline; Ajv checks them in place in the message.
  const oracle = (name.endsWith("$Params") ? oracleForInlineParams(name.slice(0, -"$Params".length)) : oracleFor(name))(sample.value);
  const issues = explainFor(name)(sample.value);
  counts.checked++;
  if (oracle) counts.oracleTrue++;
  else counts.oracleFalse++;
  if (sample.from === "valid") counts.generatedValid++;
  else {
    counts.mutants++;
    if (oracle) counts.mutantsStillValid++;
    for (const k of sample.kinds ?? []) mutationKinds.set(k, (mutationKinds.get(k) ?? 0) + 1);
  }
  const where = `${name} (${sample.from}${sample.kinds ? `: ${sample.kinds.join(", ")}` : ""}) ${JSON.stringify(sample.value)}`;
  // A value built from the model that Ajv rejects means the model (or this builder) lost a constraint.
  if (sample.from === "valid" && !oracle) throw new Error(`generated value is not valid per Ajv: ${where}`);
  if (guard !== oracle) throw new Error(`guard says ${guard}, Ajv says ${oracle}: ${where}`);
  if ((issues.length === 0) !== guard) throw new Error(`explain${name} gave ${issues.length} issues but the guard says ${guard}: ${where}`);
  if (!issues.every((i) => isJsonPointer(i.pointer))) throw new Error(`explain${name} gave a pointer that is not a JSON pointer: ${JSON.stringify(issues)}`);
}

/** Messages whose params are declared inline get a guard and explainer of their own, checked like definitions. */
const inlineParams = model.messages.filter((m) => m.params.ref === undefined && m.paramsType !== "Record<string, unknown>");

function run(name: string, numRuns: number, offset: number, node: SchemaNode = defs.get(name)!): void {
  fc.assert(fc.property(samplesFor(node), (sample) => check(name, sample)), { seed: seed + offset, numRuns });
}

describe(`guards agree with Ajv on generated values (seed ${seed}; FC_SEED overrides)`, () => {
  test("the model and the schema file name the same definitions", () => {
    expect(model.definitions.map((d) => d.name).sort()).toEqual([...definitionNames].sort());
  });

  test.each(UNIONS.map((u, i) => [u, i] as const))("message union %s", (name, i) => {
    run(name, RUNS_PER_UNION, 1_000_000 + i);
  });

  test("every definition", () => {
    model.definitions.forEach((d, i) => run(d.name, RUNS_PER_DEFINITION, i));
  });

  test("inline params guards (is<Message>$Params)", () => {
    expect(inlineParams.length).toBeGreaterThan(0);
    inlineParams.forEach((m, i) => run(`${m.message}$Params`, RUNS_PER_DEFINITION, 3_000_000 + i, m.params));
  });

  test("every definition, every single mutation at every site of a few generated values", () => {
    // Random mutants land where the dice say; this sweep leaves no site of the sampled values untried, so a guard
    // that skips one check deep inside (one _meta, one map value) is found on every seed.
    model.definitions.forEach((d, i) => {
      const valid = fc.sample(arbitraryFor(d.node, defs, DEPTH), { seed: seed + 2_000_000 + i, numRuns: SWEEP_VALUES });
      for (const v of valid) {
        check(d.name, { from: "valid", value: asJson(v) });
        for (const m of allMutants(defs, d.node, v)) check(d.name, { from: "mutant", value: m.value, kinds: [m.kind] });
      }
    });
  });

  afterAll(() => {
    const kinds = [...mutationKinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}=${n}`).join(" ");
    console.log(`fast-check seed ${seed}: ${JSON.stringify(counts)}\nmutations: ${kinds}`);
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
