import { describe, expect, it } from "vitest";
import { ExperimentConfig, GrpoRecipe, grpoRecipeOf, type ExperimentConfigInput } from "./config";
import { devCandidates } from "./dev-candidates";
import { GrpoJobPayload } from "../jobs/grpo";
import { grpoJobPayload } from "../jobs/recipe";
import { grpoJobRequirements } from "../jobs/requirements";
import { grpoSection } from "./report-grpo";
import { bestEpochPerSeed, modelKey, selectByDev, SELECTION_RULE_GRPO, type ModelRef } from "./selection";
import { stagePlan } from "./stages";
import type { TaskSpec } from "../tasks";
import type { TaskOutcome } from "./report-tasks";

// The sft+grpo recipe: its defaults (TRL 1.16's), its stage plan, the job payload it maps to, the
// selection order base < SFT < GRPO and the report's GRPO part.

const input = (over: Partial<ExperimentConfigInput> = {}): ExperimentConfigInput => ({
  name: "e",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/m" },
  evaluation: { graderVersion: "g/1", maxNewTokens: 300 },
  seeds: [1, 2],
  ...over,
});
const task: TaskSpec = {
  id: "t1",
  source_group: "g",
  language: "python",
  instruction: "Fix f.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x\n" }],
  public_tests: [],
  hidden_tests: [{ path: "test_h.py", content: "from solution import f\n\ndef test_f():\n    assert f(1) == 2\n" }],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x + 1\n" }],
};

describe("the sft+grpo recipe", () => {
  it("fills TRL's GRPO defaults only for sft+grpo, the completion length from the evaluation's", () => {
    expect(grpoRecipeOf(ExperimentConfig.parse(input()))).toBeNull();
    const cfg = ExperimentConfig.parse(input({ method: "sft+grpo" }));
    expect(grpoRecipeOf(cfg)).toEqual({ ...GrpoRecipe.parse({}), maxCompletionLength: 300 });
    expect(GrpoRecipe.parse({})).toMatchObject({
      numGenerations: 8,
      beta: 0,
      lossType: "dapo",
      scaleRewards: "group",
      epsilon: 0.2,
      epsilonHigh: 0.28,
      maskTruncatedCompletions: true,
      learningRate: 1e-6,
    });
    expect(ExperimentConfig.safeParse(input({ grpo: { steps: 3 } })).error?.issues[0]).toMatchObject({
      path: ["grpo"],
      message: 'grpo settings need method "sft+grpo"',
    });
  });

  it("plans one grpo run per seed after the SFT dev evaluations, each snapshot on dev before select", () => {
    const plan = stagePlan(ExperimentConfig.parse(input({ method: "sft+grpo" })));
    const byKey = new Map(plan.map((s) => [s.key, s]));
    expect(byKey.get("grpo:s1")).toMatchObject({
      kind: "grpo",
      target: { model: "grpo", seed: 1, seedIndex: 0 },
      after: ["dev_eval:base", "dev_eval:s1", "dev_eval:s2"],
    });
    expect(byKey.get("dev_eval:grpo:s2")?.after).toEqual(["grpo:s2"]);
    expect(byKey.get("select")?.after).toEqual(expect.arrayContaining(["dev_eval:grpo:s1", "dev_eval:grpo:s2"]));
    expect(stagePlan(ExperimentConfig.parse(input())).some((s) => s.kind === "grpo")).toBe(false);
  });

  it("maps the recipe to a grpo job payload its contract accepts, train tasks only; one GPU for a GPU method", () => {
    const cfg = ExperimentConfig.parse(
      input({ method: "sft+grpo", grpo: { steps: 20, snapshotEverySteps: 5, numGenerations: 4 } }),
    );
    const grpo = grpoRecipeOf(cfg) ?? GrpoRecipe.parse({});
    const payload = grpoJobPayload(cfg, grpo, { seed: 2, tasks: [task], start: null });
    const parsed = GrpoJobPayload.parse(payload);
    expect(parsed.tasks.map((t) => t.part)).toEqual(["train"]);
    expect(parsed.spec).toMatchObject({
      max_steps: 20,
      snapshot_every_steps: 5,
      num_generations: 4,
      max_completion_length: 300,
      seed: 2,
      beta: 0,
      loss_type: "dapo",
    });
    expect(parsed.rewardControl).toBe("none");
    // the shuffled-reward control arm differs in that field only
    const control = { ...grpo, rewardControl: "shuffle_within_group" as const };
    const shuffled = GrpoJobPayload.parse(grpoJobPayload(cfg, control, { seed: 2, tasks: [task], start: null }));
    expect({ ...shuffled, rewardControl: "none" }).toEqual(parsed);
    expect(() =>
      grpoJobPayload(cfg, grpo, { seed: 2, tasks: [task], start: { sha256: "a".repeat(64), artifact: null } }),
    ).toThrow(/no archive/);
    expect(grpoJobRequirements(cfg)).toEqual({ labels: [], gpus: 0, gpuMemoryMb: 0 });
    const gpu = ExperimentConfig.parse(input({ method: "sft+grpo", training: { method: "lora-bf16" } }));
    expect(grpoJobRequirements(gpu)).toMatchObject({ gpus: 1 });
  });

  it("selects among base, SFT and GRPO snapshots; a tie keeps the simpler model", () => {
    const cfg = ExperimentConfig.parse(input({ method: "sft+grpo", grpo: { steps: 5, snapshotEverySteps: 2 } }));
    const g = (seedIndex: number, epoch: number): ModelRef => ({
      model: "grpo",
      seed: seedIndex + 1,
      seedIndex,
      epoch,
    });
    const sft: ModelRef = { model: "adapter", seed: 1, seedIndex: 0, epoch: 1 };
    // ceil(5 / 2) = 3 snapshots per seed
    const refs: [ModelRef, number][] = [
      [{ model: "base" }, 2],
      [sft, 3],
      [g(0, 1), 3],
      [g(0, 2), 5],
      [g(0, 3), 5],
      [g(1, 3), 5],
      [g(1, 4), 9], // not a snapshot of a 5-step run at K = 2: never a candidate
    ];
    const rows = refs.flatMap(([ref, passed]) =>
      Array.from({ length: 10 }, (_, i) => ({
        modelKey: modelKey(ref),
        taskId: `d${i}`,
        verdict: i < passed ? "pass" : "fail",
      })),
    );
    const candidates = devCandidates(rows, new Set(), cfg);
    expect(candidates.map((c) => modelKey(c.ref))).toEqual([
      "base",
      "s1e1",
      "grpo-s1e1",
      "grpo-s1e2",
      "grpo-s1e3",
      "grpo-s2e3",
    ]);
    const decision = selectByDev(candidates);
    expect(decision.selected).toEqual(g(0, 2));
    expect(decision.rule).toBe(SELECTION_RULE_GRPO);
    expect(bestEpochPerSeed(candidates, "grpo").map((c) => c.ref)).toEqual([g(0, 2), g(1, 3)]);

    const outcome = (id: string, pass: boolean): TaskOutcome => ({
      taskId: id,
      group: id,
      verdict: pass ? "pass" : "fail",
    });
    const test = {
      base: ["a", "b", "c", "d"].map((id) => outcome(id, false)),
      s1e1: ["a", "b", "c", "d"].map((id) => outcome(id, id === "a")),
      "grpo-s1e2": ["a", "b", "c", "d"].map((id) => outcome(id, id !== "d")),
    };
    const section = grpoSection({
      table: decision.table,
      test,
      stats: { iterations: 200, seed: 1 },
    });
    expect(section.selectedSft).toEqual(sft);
    expect(section.selectedGrpo).toEqual(g(0, 2));
    expect(section.devPoints).toHaveLength(4);
    expect(section.comparisons.map((c) => [c.aLabel, c.bLabel, c.row.stats?.delta])).toEqual([
      ["base", "seed 1 · epoch 1", 0.25],
      ["base", "GRPO · seed 1 · snapshot 2", 0.75],
      ["seed 1 · epoch 1", "GRPO · seed 1 · snapshot 2", 0.5],
    ]);
  });
});
