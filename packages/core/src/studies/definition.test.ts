import { describe, expect, it } from "vitest";
import { checkStudyDefinition, type StudyDefinitionInput } from "./definition";
import { diffPaths, factorCovers, mergeRecipe } from "./factors";

const SPLIT = "00000000-0000-4000-8000-000000000001";
const DS_A = "00000000-0000-4000-8000-0000000000a1";
const DS_B = "00000000-0000-4000-8000-0000000000b1";

const def = (over: Partial<StudyDefinitionInput> = {}): StudyDefinitionInput => ({
  name: "quality at equal tokens",
  splitId: SPLIT,
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "g/1" },
  seeds: [1, 2, 3],
  reference: {
    name: "verified",
    recipe: {
      teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
      datasetId: DS_A,
      training: { epochs: 2 },
    },
  },
  arms: [{ name: "unverified", factor: "datasetId", recipe: { datasetId: DS_B } }],
  contrasts: [{ arms: ["unverified", "verified"] }],
  ...over,
});

const fields = (input: unknown) => {
  const r = checkStudyDefinition(input);
  return r.ok ? {} : r.issues.fieldErrors;
};

describe("checkStudyDefinition", () => {
  it("accepts a study whose arm differs in its declared factor only, and builds every arm's recipe", () => {
    const r = checkStudyDefinition(def({ aa: { seeds: [4, 5, 6] } }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.arms.map((a) => [a.name, a.role])).toEqual([
      ["verified", "reference"],
      ["unverified", "arm"],
      ["A/A", "aa"],
    ]);
    const [ref, arm, aa] = r.arms;
    expect(arm?.config.datasetId).toBe(DS_B);
    expect(arm?.config.training).toEqual(ref?.config.training);
    expect(arm?.config.seeds).toEqual([1, 2, 3]);
    expect(aa?.config.seeds).toEqual([4, 5, 6]);
    expect(aa?.config.datasetId).toBe(DS_A);
    expect(new Set(r.arms.map((a) => a.config.evaluation.seed)).size).toBe(1);
  });

  it("refuses an arm that differs in a second field, naming that field", () => {
    const f = fields(
      def({
        arms: [
          { name: "unverified", factor: "datasetId", recipe: { datasetId: DS_B, training: { learningRate: 1e-3 } } },
        ],
      }),
    );
    expect(Object.keys(f)).toEqual(["arms.0.recipe.training.learningRate"]);
    expect(f["arms.0.recipe.training.learningRate"]?.[0]).toMatch(
      /differs from the reference in training.learningRate.*factor is datasetId/,
    );
  });

  it("refuses an arm identical to the reference, and one setting a shared field", () => {
    expect(
      Object.keys(fields(def({ arms: [{ name: "unverified", factor: "datasetId", recipe: { datasetId: DS_A } }] }))),
    ).toEqual(["arms.0.factor"]);
    // Setting a default explicitly is no difference either.
    expect(
      Object.keys(
        fields(def({ arms: [{ name: "unverified", factor: "training.epochs", recipe: { training: { epochs: 2 } } }] })),
      ),
    ).toEqual(["arms.0.factor"]);
    const f = fields(
      def({ arms: [{ name: "unverified", factor: "evaluation.samples", recipe: { evaluation: { samples: 4 } } }] }),
    );
    expect(f["arms.0.factor"]?.[0]).toMatch(/shared by every arm/);
    expect(f["arms.0.recipe.evaluation"]?.[0]).toMatch(/study's top level/);
  });

  it("lets the method factor carry its dpo settings", () => {
    const r = checkStudyDefinition(
      def({ arms: [{ name: "unverified", factor: "method", recipe: { method: "sft+dpo", dpo: { beta: 0.2 } } }] }),
    );
    expect(r.ok).toBe(true);
  });

  it("lets the method factor carry its grpo settings (a GRPO arm), and nothing else with them", () => {
    const grpo = { method: "sft+grpo", grpo: { steps: 20, rewardControl: "shuffle_within_group" } };
    const contrasts = [{ arms: ["rl", "verified"] as [string, string] }];
    expect(checkStudyDefinition(def({ arms: [{ name: "rl", factor: "method", recipe: grpo }], contrasts })).ok).toBe(
      true,
    );
    // Positive control: the same arm changing the training length too is refused, by that field.
    const f = fields(
      def({ arms: [{ name: "rl", factor: "method", recipe: { ...grpo, training: { epochs: 5 } } }], contrasts }),
    );
    expect(JSON.stringify(f)).toContain("training.epochs");
  });

  it("lets a promptVariant arm change what training and evaluation prompts show, and nothing else of the evaluation", () => {
    const shown = { promptVariant: "no_dependencies" };
    const contrasts = [{ arms: ["no deps", "verified"] as [string, string] }];
    const arm = (factor: string, recipe: Record<string, unknown>) =>
      def({ arms: [{ name: "no deps", factor, recipe }], contrasts });
    const r = checkStudyDefinition(arm("promptVariant", { training: shown, evaluation: shown }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [ref, noDeps] = r.arms;
    expect(noDeps?.config.evaluation).toEqual({ ...ref?.config.evaluation, promptVariant: "no_dependencies" });
    expect(noDeps?.config.training.promptVariant).toBe("no_dependencies");
    // the evaluation's variant alone is a factor too; the rest of the evaluation stays shared
    expect(checkStudyDefinition(arm("evaluation.promptVariant", { evaluation: shown })).ok).toBe(true);
    const more = fields(arm("promptVariant", { evaluation: { ...shown, maxNewTokens: 64 } }));
    expect(more["arms.0.recipe.evaluation"]?.[0]).toMatch(/evaluation.promptVariant only/);
    // positive control of the span: declared as the training field alone, the evaluation's change is named
    const outside = fields(arm("training.promptVariant", { training: shown, evaluation: shown }));
    expect(Object.keys(outside)).toEqual(["arms.0.recipe.evaluation.promptVariant"]);
  });

  it("names bad contrasts, duplicate names and A/A seeds", () => {
    const f = fields(
      def({
        arms: [{ name: "verified", factor: "datasetId", recipe: { datasetId: DS_B } }],
        contrasts: [{ arms: ["nope", "verified"] }, { arms: ["verified", "verified"] }],
        aa: { seeds: [1, 9, 10] },
      }),
    );
    expect(Object.keys(f).sort()).toEqual(["aa.seeds", "arms.0.name", "contrasts.0.arms.0", "contrasts.1.arms"]);
  });

  it("passes a recipe error through with its path under the arm", () => {
    const f = fields(
      def({ arms: [{ name: "unverified", factor: "training.epochs", recipe: { training: { epochs: 500 } } }] }),
    );
    expect(Object.keys(f)).toEqual(["arms.0.recipe.training.epochs"]);
    expect(Object.keys(fields({ ...def(), seeds: [] }))).toEqual(["seeds"]);
  });
});

describe("factors", () => {
  it("merges objects deeply and diffs leaf paths", () => {
    expect(mergeRecipe({ a: { b: 1, c: 2 }, d: [1] }, { a: { c: 3 }, d: [2] })).toEqual({ a: { b: 1, c: 3 }, d: [2] });
    expect(diffPaths({ a: { b: 1, c: [1, 2] }, x: 1 }, { a: { b: 2, c: [1, 2] }, y: 1 })).toEqual(["a.b", "x", "y"]);
    expect(factorCovers("training", "training.lora.r")).toBe(true);
    expect(factorCovers("training.lora", "training.epochs")).toBe(false);
    expect(factorCovers("method", "dpo.beta")).toBe(true);
    expect(factorCovers("method", "grpo.steps")).toBe(true);
  });
});
