import { describe, expect, it } from "vitest";
import { ExperimentConfig, dpoRecipeOf, pairSourcesOf, type ExperimentConfigInput } from "../experiments/config";
import { stagePlan } from "../experiments/stages";
import { recipeHash } from "../experiments/test-reads";
import { dpoJobPayload } from "../jobs/recipe";

// The recipe side of the pair sources and of the RFT control: a stored recipe keeps its meaning
// and its hash, and sft+rft runs the sft+dpo stages with only its training objective changed.

const input = (over: Partial<ExperimentConfigInput> = {}): ExperimentConfigInput => ({
  name: "e",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/m" },
  evaluation: { graderVersion: "g/1" },
  seeds: [1, 2],
  ...over,
});

describe("pair sources in the recipe", () => {
  it("absent means cross-state, and a stored recipe re-parses to the same hash (nothing is filled in)", () => {
    const stored = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { beta: 0.2 } }));
    expect(stored.dpo && "pairSources" in stored.dpo).toBe(false);
    const again = ExperimentConfig.parse(JSON.parse(JSON.stringify(stored)));
    expect(recipeHash(again)).toBe(recipeHash(stored));
    expect(pairSourcesOf(dpoRecipeOf(again) ?? { pairSources: undefined })).toEqual(["cross_state"]);
    // positive control: naming a source is a different recipe, so the hash sees the field
    const named = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { beta: 0.2, pairSources: ["near_miss"] } }));
    expect(recipeHash(named)).not.toBe(recipeHash(stored));
    expect(pairSourcesOf(dpoRecipeOf(named) ?? {})).toEqual(["near_miss"]);
  });

  it("refuses an unknown, an empty or a repeated source, naming the field", () => {
    for (const pairSources of [["mutants"], [], ["on_policy", "on_policy"]]) {
      const r = ExperimentConfig.safeParse(input({ method: "sft+dpo", dpo: { pairSources } as never }));
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.path.slice(0, 2)).toEqual(["dpo", "pairSources"]);
    }
  });
});

describe("the sft+rft control arm", () => {
  it("has the sft+dpo stages and the same job, the objective aside (never on the score job)", () => {
    const dpo = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { epochs: 3, batchSize: 2 } }));
    const rft = ExperimentConfig.parse(input({ method: "sft+rft", dpo: { epochs: 3, batchSize: 2 } }));
    expect(stagePlan(rft).map((s) => s.key)).toEqual(stagePlan(dpo).map((s) => s.key));
    const block = dpoRecipeOf(rft);
    if (!block) throw new Error("sft+rft has no dpo block");
    const opts = { seed: 1, pairsHash: "a".repeat(64), start: null, scoreOnly: false };
    const train = dpoJobPayload(rft, block, opts);
    const { objective, ...rest } = train.spec;
    expect(objective).toBe("rft");
    expect(rest).toEqual(dpoJobPayload(dpo, block, opts).spec);
    expect(dpoJobPayload(rft, block, { ...opts, scoreOnly: true }).spec.objective).toBeUndefined();
    // positive control: the plain SFT recipe has no preference half at all
    expect(dpoRecipeOf(ExperimentConfig.parse(input()))).toBeNull();
  });
});

describe("the swapped-labels control arm", () => {
  it("sends swap_labels on the training job only, and absent labels hash as before", () => {
    const plain = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { epochs: 3 } }));
    const swapped = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { epochs: 3, labels: "swapped" } }));
    const opts = { seed: 1, pairsHash: "a".repeat(64), start: null, scoreOnly: false };
    const block = dpoRecipeOf(swapped);
    const plainBlock = dpoRecipeOf(plain);
    if (!block || !plainBlock) throw new Error("no dpo block");
    const { swap_labels, ...rest } = dpoJobPayload(swapped, block, opts).spec;
    expect(swap_labels).toBe(true);
    expect(rest).toEqual(dpoJobPayload(plain, plainBlock, opts).spec);
    // the held-out score keeps the pairs as graded
    expect(dpoJobPayload(swapped, block, { ...opts, scoreOnly: true }).spec.swap_labels).toBeUndefined();
    // a recipe without the field is what it was; naming it changes the recipe (positive control)
    expect(plain.dpo && "labels" in plain.dpo).toBe(false);
    expect(recipeHash(swapped)).not.toBe(recipeHash(plain));
    expect(dpoJobPayload(plain, plainBlock, opts).spec.swap_labels).toBeUndefined();
  });
});
