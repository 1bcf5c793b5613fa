// The guard-vs-oracle property, for any generated SDK: values built from the model (valid ones and mutants) must get
// the same verdict from the generated guard as from Ajv on the original schema, and explainX must be empty exactly
// when the guard says yes.
import fc from "fast-check";
import type { SchemaNode } from "../../generator/model.js";
import { allMutants, arbitraryFor, asJson, mutate, type Defs, type MutationKind } from "./arbitrary.js";
import { isJsonPointer, type GeneratedChecks, type Oracle } from "./oracle.js";

/** Depth budget for refs and nesting: deep enough to reach content blocks inside results inside responses. */
export const DEPTH = 8;

type Sample = { from: "valid" | "mutant"; value: unknown; kinds?: MutationKind[] };

export interface AgreementCounts {
  checked: number;
  oracleTrue: number;
  oracleFalse: number;
  generatedValid: number;
  mutants: number;
  mutantsStillValid: number;
}

/** One SDK under test: its model's definitions, its generated checks and the oracle on its schema. */
export class Agreement {
  readonly counts: AgreementCounts = { checked: 0, oracleTrue: 0, oracleFalse: 0, generatedValid: 0, mutants: 0, mutantsStillValid: 0 };
  readonly mutationKinds = new Map<MutationKind, number>();

  constructor(
    private readonly defs: Defs,
    private readonly checks: GeneratedChecks,
    private readonly oracle: Oracle,
  ) {}

  private samplesFor(node: SchemaNode): fc.Arbitrary<Sample> {
    const valid = arbitraryFor(node, this.defs, DEPTH).map((v): Sample => ({ from: "valid", value: asJson(v) }));
    const mutant = fc
      .tuple(arbitraryFor(node, this.defs, DEPTH), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }))
      .map(([v, tape]): Sample => {
        const m = mutate(this.defs, node, v, tape);
        return { from: "mutant", value: m.value, kinds: m.kinds };
      });
    return fc.oneof(valid, mutant);
  }

  /** The property: one value, four verdicts that must line up. Throws a description of any mismatch. */
  check(name: string, sample: Sample): void {
    const guard = this.checks.guardFor(name)(sample.value);
    // "<Message>$Params" names the params a message declares inline; Ajv checks them in place in the message.
    const oracle = (name.endsWith("$Params") ? this.oracle.oracleForInlineParams(name.slice(0, -"$Params".length)) : this.oracle.oracleFor(name))(sample.value);
    const issues = this.checks.explainFor(name)(sample.value);
    const counts = this.counts;
    counts.checked++;
    if (oracle) counts.oracleTrue++;
    else counts.oracleFalse++;
    if (sample.from === "valid") counts.generatedValid++;
    else {
      counts.mutants++;
      if (oracle) counts.mutantsStillValid++;
      for (const k of sample.kinds ?? []) this.mutationKinds.set(k, (this.mutationKinds.get(k) ?? 0) + 1);
    }
    const where = `${name} (${sample.from}${sample.kinds ? `: ${sample.kinds.join(", ")}` : ""}) ${JSON.stringify(sample.value)}`;
    // A value built from the model that Ajv rejects means the model (or this builder) lost a constraint.
    if (sample.from === "valid" && !oracle) throw new Error(`generated value is not valid per Ajv: ${where}`);
    if (guard !== oracle) throw new Error(`guard says ${guard}, Ajv says ${oracle}: ${where}`);
    if ((issues.length === 0) !== guard) throw new Error(`explain${name} gave ${issues.length} issues but the guard says ${guard}: ${where}`);
    if (!issues.every((i) => isJsonPointer(i.pointer))) throw new Error(`explain${name} gave a pointer that is not a JSON pointer: ${JSON.stringify(issues)}`);
  }

  /** `numRuns` random samples (valid or mutated) of a definition, or of `node` checked under that name. */
  run(name: string, numRuns: number, seed: number, node: SchemaNode = this.defs.get(name)!): void {
    fc.assert(fc.property(this.samplesFor(node), (sample) => this.check(name, sample)), { seed, numRuns });
  }

  /**
   * A few valid values of a definition, each with every single mutation at every site: random mutants land where
   * the dice say; this leaves no site of the sampled values untried, so a guard that skips one check deep inside
   * (one _meta, one map value) is found on every seed.
   */
  sweep(name: string, node: SchemaNode, seed: number, values: number): void {
    for (const v of fc.sample(arbitraryFor(node, this.defs, DEPTH), { seed, numRuns: values })) {
      this.check(name, { from: "valid", value: asJson(v) });
      for (const m of allMutants(this.defs, node, v)) this.check(name, { from: "mutant", value: m.value, kinds: [m.kind] });
    }
  }

  /** Mutation kinds by use, most used first, for the log. */
  mutationSummary(): string {
    return [...this.mutationKinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}=${n}`).join(" ");
  }
}
