// The guard-vs-oracle property for any schema: values generated from the model (valid ones and mutants) get the
// same verdict from the generated guard as from Ajv on the original schema, and explainX is empty exactly when the
// guard says yes. Also builds the guards and validators of a schema file into a temporary directory to test them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { buildModel } from "../../generator/build-model.js";
import { emitGuards } from "../../generator/emit/guards.js";
import { emitValidators } from "../../generator/emit/validators.js";
import { loadDefinitions } from "../../generator/load.js";
import { definitionMap, type Model, type SchemaNode } from "../../generator/model.js";
import { tempDir } from "../kit/paths.js";
import { allMutants, arbitraryFor, asJson, mutate, type Defs, type MutationKind } from "./arbitrary.js";
import { createOracle, exported, isJsonPointer, type Explain, type Guard, type Oracle } from "./oracle.js";

/** The schema's message unions, each checked on values drawn from it. */
export const MESSAGE_UNIONS = [
  "JSONRPCMessage",
  "ClientRequest",
  "ServerRequest",
  "ClientNotification",
  "ServerNotification",
  "ClientResult",
  "ServerResult",
];
/** What the property needs of a schema: its model, its generated guards and explainers, and its oracle. */
export interface Subject {
  model: Model;
  defs: Defs;
  guardFor(name: string): Guard;
  explainFor(name: string): Explain;
  oracle: Oracle;
}

export type Sample = { from: "valid" | "mutant"; value: unknown; kinds?: MutationKind[] };

/**
 * Generates a schema's guards and validators (the methods, if any, derived from the schema: a definitions-only
 * schema gets guards for every definition), writes them to a fresh directory and imports them.
 */
export async function generateSubject(schemaFile: string): Promise<Subject & { dir: string }> {
  const model = buildModel(loadDefinitions(schemaFile));
  const dir = tempDir("guards");
  writeFileSync(join(dir, "guards.ts"), emitGuards(model));
  writeFileSync(join(dir, "validators.ts"), emitValidators(model, "../../runtime/index.js"));
  const guards = (await import(join(dir, "guards.ts"))) as Record<string, unknown>;
  const validators = (await import(join(dir, "validators.ts"))) as Record<string, unknown>;
  return {
    dir,
    model,
    defs: definitionMap(model),
    guardFor: (name) => exported<Guard>(guards, "is", name, "guards.ts"),
    explainFor: (name) => exported<Explain>(validators, "explain", name, "validators.ts"),
    oracle: createOracle(schemaFile),
  };
}

/**
 * Ajv's equality (fast-deep-equal, for const, enum and uniqueItems) trusts `constructor`, `valueOf` and `toString`
 * to be the prototype's: an own key of that name makes it throw ({"valueOf": 1}) or call equal objects unequal
 * ({"constructor": {}} twice). JSON equality knows no such names, and the guards and validators follow it; so Ajv
 * judges a value with those keys renamed (same length, same character class), which is equal exactly where the
 * original is, as long as the schema gives the names no meaning of their own (the schemas tested here do not).
 */
const AJV_EQUALITY_KEYS: Record<string, string> = {
  constructor: "constructos",
  valueOf: "valueOg",
  toString: "toStrinh",
};

function forAjvEquality(value: unknown): { value: unknown; renamed: boolean } {
  let renamed = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const out: Record<string, unknown> = {};
    for (const [k, inner] of Object.entries(v)) {
      const to = Object.prototype.hasOwnProperty.call(AJV_EQUALITY_KEYS, k) ? AJV_EQUALITY_KEYS[k]! : k;
      renamed ||= to !== k;
      out[to] = walk(inner);
    }
    return out;
  };
  const out = walk(value);
  return renamed ? { value: out, renamed } : { value, renamed };
}

/** Runs the property over a subject's definitions and keeps the tallies a suite asserts on at the end. */
export class Agreement {
  readonly counts = {
    checked: 0,
    oracleTrue: 0,
    oracleFalse: 0,
    generatedValid: 0,
    mutants: 0,
    mutantsStillValid: 0,
    renamedForAjv: 0,
  };
  readonly mutationKinds = new Map<MutationKind, number>();

  /** `depth` is the budget for refs and nesting (see arbitraryFor). */
  /**
   * `depth` is the budget for refs and nesting (see arbitraryFor). `ajvEqualityKeys` renames the keys Ajv's
   * equality mishandles before Ajv judges (see AJV_EQUALITY_KEYS): for schemas that compare objects by equality.
   */
  constructor(
    readonly subject: Subject,
    readonly seed: number,
    readonly depth = 8,
    readonly options: { ajvEqualityKeys?: boolean } = {},
  ) {}

  samplesFor(node: SchemaNode): fc.Arbitrary<Sample> {
    const { defs } = this.subject;
    const valid = arbitraryFor(node, defs, this.depth).map((v): Sample => ({ from: "valid", value: asJson(v) }));
    const mutant = fc
      .tuple(arbitraryFor(node, defs, this.depth), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }))
      .map(([v, tape]): Sample => {
        const m = mutate(defs, node, v, tape);
        return { from: "mutant", value: m.value, kinds: m.kinds };
      });
    return fc.oneof(valid, mutant);
  }

  /** The property: one value, four verdicts that must line up; throws with all of them on a mismatch. */
  check(name: string, sample: Sample): void {
    const { subject, counts } = this;
    const guard = subject.guardFor(name)(sample.value);
    // "<Message>$Params" names the params a message declares inline; Ajv checks them in place in the message.
    const judged = this.options.ajvEqualityKeys
      ? forAjvEquality(sample.value)
      : { value: sample.value, renamed: false };
    if (judged.renamed) counts.renamedForAjv++;
    const oracle = (
      name.endsWith("$Params")
        ? subject.oracle.oracleForInlineParams(name.slice(0, -"$Params".length))
        : subject.oracle.oracleFor(name)
    )(judged.value);
    const issues = subject.explainFor(name)(sample.value);
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
    // A value built from the model that Ajv rejects means the model (or the builder) lost a constraint.
    if (sample.from === "valid" && !oracle) throw new Error(`generated value is not valid per Ajv: ${where}`);
    if (guard !== oracle) throw new Error(`guard says ${guard}, Ajv says ${oracle}: ${where}`);
    if ((issues.length === 0) !== guard)
      throw new Error(`explain${name} gave ${issues.length} issues but the guard says ${guard}: ${where}`);
    if (!issues.every((i) => isJsonPointer(i.pointer)))
      throw new Error(`explain${name} gave a pointer that is not a JSON pointer: ${JSON.stringify(issues)}`);
  }

  /** Random valid values and mutants of one definition (or of `node`, for inline params). */
  run(name: string, numRuns: number, offset: number, node: SchemaNode = this.subject.defs.get(name)!): void {
    fc.assert(
      fc.property(this.samplesFor(node), (sample) => this.check(name, sample)),
      { seed: this.seed + offset, numRuns },
    );
  }

  /**
   * A few generated values, each with every single mutation at every site: random mutants land where the dice say,
   * this leaves no site of the sampled values untried, so a guard that skips one check deep inside is found on every seed.
   */
  sweep(name: string, values: number, offset: number, node: SchemaNode = this.subject.defs.get(name)!): void {
    const { defs } = this.subject;
    for (const v of fc.sample(arbitraryFor(node, defs, this.depth), { seed: this.seed + offset, numRuns: values })) {
      this.check(name, { from: "valid", value: asJson(v) });
      for (const m of allMutants(defs, node, v)) this.check(name, { from: "mutant", value: m.value, kinds: [m.kind] });
    }
  }

  summary(): string {
    const kinds = [...this.mutationKinds]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k}=${n}`)
      .join(" ");
    return `fast-check seed ${this.seed}: ${JSON.stringify(this.counts)}\nmutations: ${kinds}`;
  }
}
