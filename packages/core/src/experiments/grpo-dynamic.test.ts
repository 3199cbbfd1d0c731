import { describe, expect, it } from "vitest";
import { ExperimentConfig, type ExperimentConfigInput } from "./config";
import { grpoPromptFilter } from "./grpo-filter";
import { GrpoJobPayload } from "../jobs/grpo";
import { grpoJobPayload, grpoSamplingConfig } from "../jobs/recipe";
import { GRPO_SAMPLE_KEY, stagePlan } from "./stages";
import { recipeHash } from "./test-reads";
import { parseStageOutput } from "./stage-outputs";
import type { TaskSpec } from "../tasks";

// GRPO's dynamic sampling (recipe grpo.dynamicSampling): absent, the recipe, its hash, the stage plan
// and the job's spec are what they were; present, a grpo_sample stage measures the start's pass
// rates on train and only tasks strictly between 0 and 1 stay, and the trainer is told what to do
// with groups whose rewards come out all equal.

const input = (grpo?: ExperimentConfigInput["grpo"]): ExperimentConfigInput => ({
  name: "e",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/m" },
  evaluation: { graderVersion: "g/1", maxNewTokens: 300 },
  seeds: [1, 2],
  method: "sft+grpo",
  ...(grpo ? { grpo } : {}),
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
/** The payload as the stage enqueues it (before the contract fills the spec's defaults), checked by the contract. */
const payloadOf = (c: ExperimentConfig) => {
  if (!c.grpo) throw new Error("no grpo block");
  const p = grpoJobPayload(c, c.grpo, { seed: 1, tasks: [task], start: null });
  GrpoJobPayload.parse(p);
  return p;
};

describe("grpo dynamic sampling in the recipe", () => {
  it("absent: a stored recipe parses, hashes and plans exactly as before (control: set, all three change)", () => {
    // A recipe as stored before the setting existed: the grpo block without dynamicSampling.
    const stored = { steps: 5, numGenerations: 4 };
    const before = ExperimentConfig.parse(input(stored));
    expect(before.grpo && "dynamicSampling" in before.grpo).toBe(false);
    expect(recipeHash(ExperimentConfig.parse(JSON.parse(JSON.stringify(before))))).toBe(recipeHash(before));
    expect(stagePlan(before).some((s) => s.kind === "grpo_sample")).toBe(false);
    expect(stagePlan(before).find((s) => s.key === "grpo:s1")?.after).toEqual([
      "dev_eval:base",
      "dev_eval:s1",
      "dev_eval:s2",
    ]);
    expect(payloadOf(before).spec).not.toHaveProperty("equal_reward_groups");
    expect(payloadOf(before).spec).not.toHaveProperty("max_resamples");

    const on = ExperimentConfig.parse(input({ ...stored, dynamicSampling: {} }));
    expect(on.grpo?.dynamicSampling).toEqual({ passRateFilter: true, equalRewardGroups: "filter", maxResamples: 2 });
    expect(recipeHash(on)).not.toBe(recipeHash(before));
    const plan = stagePlan(on);
    expect(plan.filter((s) => s.kind === "grpo_sample").map((s) => [s.key, s.after])).toEqual([
      [GRPO_SAMPLE_KEY, ["dev_eval:base", "dev_eval:s1", "dev_eval:s2"]],
    ]);
    expect(plan.filter((s) => s.kind === "grpo").map((s) => s.after)).toEqual([[GRPO_SAMPLE_KEY], [GRPO_SAMPLE_KEY]]);
    expect(payloadOf(on).spec).toMatchObject({ equal_reward_groups: "filter", max_resamples: 2 });
  });

  it("the trainer's part alone: no grpo_sample stage without the pass-rate filter", () => {
    const c = ExperimentConfig.parse(
      input({ dynamicSampling: { passRateFilter: false, equalRewardGroups: "resample", maxResamples: 3 } }),
    );
    expect(stagePlan(c).some((s) => s.kind === "grpo_sample")).toBe(false);
    expect(payloadOf(c).spec).toMatchObject({ equal_reward_groups: "resample", max_resamples: 3 });
    expect(
      ExperimentConfig.safeParse(input({ dynamicSampling: { equalRewardGroups: "drop" as "filter" } })).success,
    ).toBe(false);
  });

  it("measures under the RL run's sampling: numGenerations answers at its temperature, top-p and completion length", () => {
    const c = ExperimentConfig.parse(
      input({ dynamicSampling: {}, numGenerations: 6, temperature: 0.7, topP: 0.9, maxCompletionLength: 128 }),
    );
    if (!c.grpo) throw new Error("no grpo block");
    expect(grpoSamplingConfig(c, c.grpo).evaluation).toMatchObject({
      samples: 6,
      maxNewTokens: 128,
      decoding: { doSample: true, temperature: 0.7, topP: 0.9 },
    });
    // the evaluation protocol itself is untouched
    expect(c.evaluation).toMatchObject({ samples: 1, maxNewTokens: 300 });
  });
});

describe("grpoPromptFilter", () => {
  const v = (taskId: string, verdicts: string[]) => verdicts.map((verdict) => ({ taskId, verdict }));

  it("keeps only the tasks whose pass rate lies strictly between 0 and 1, with the counts", () => {
    const answers = [
      ...v("all-pass", ["pass", "pass", "pass", "pass"]),
      ...v("all-fail", ["fail_hidden", "crash", "tampered", "unparseable"]),
      ...v("half", ["pass", "fail_hidden", "pass", "timeout"]),
      ...v("one", ["fail_hidden", "fail_hidden", "fail_hidden", "pass"]),
      // an infra error is no verdict: the remaining three all pass
      ...v("infra", ["pass", "infra_error", "pass", "pass"]),
      ...v("no-verdict", ["infra_error", "infra_error"]),
    ];
    const ids = ["all-fail", "all-pass", "half", "infra", "never-graded", "no-verdict", "one"];
    const out = grpoPromptFilter(ids, answers, 4);
    expect(out.kept).toEqual(["half", "one"]);
    expect(out.counts).toEqual({ measured: 5, allPass: 2, allFail: 1, kept: 2, unmeasured: 2, samples: 4 });
    expect(out.rates).toMatchObject({ half: 0.5, one: 0.25, "all-pass": 1, "all-fail": 0, infra: 1 });
  });

  it("parses as the grpo_sample stage's recorded output", () => {
    const { kept, counts } = grpoPromptFilter(["a", "b"], v("a", ["pass", "fail_hidden"]), 2);
    const out = parseStageOutput("grpo_sample", GRPO_SAMPLE_KEY, { generate: {}, done: {}, filter: counts, kept });
    expect(out?.filter).toEqual({ measured: 1, allPass: 0, allFail: 0, kept: 1, unmeasured: 1, samples: 2 });
  });
});
