import { z } from "zod";
import { dpoRecipeOf, grpoRecipeOf, type ExperimentConfig } from "./config";

// The experiment as a stage graph. Pure: given the stored stage records it says what may run
// next, so a restarted server resumes exactly where the database says it stopped.

export const StageKind = z.enum([
  "collect",
  "verify",
  "dataset",
  "train",
  "dev_eval",
  "select",
  "test_eval",
  "report",
  // sft+dpo: a round's start policy, its answers sampled and graded on train, the pairs, DPO per seed
  "dpo_start",
  "sample",
  "pairs",
  "dpo",
  // sft+grpo: the start policy's pass rates on train (dynamic sampling), online RL per seed from the dev-selected SFT start
  "grpo_sample",
  "grpo",
]);
export type StageKind = z.infer<typeof StageKind>;

export const STAGE_STATES = ["pending", "running", "succeeded", "failed"] as const;
export const StageState = z.enum(STAGE_STATES);
export type StageState = z.infer<typeof StageState>;

export const EXPERIMENT_STATES = ["running", "succeeded", "failed", "canceled"] as const;
export const ExperimentState = z.enum(EXPERIMENT_STATES);
export type ExperimentState = z.infer<typeof ExperimentState>;

/** The two evaluated parts of a split: dev (selection) and test (the one comparison). */
export const EVAL_SPLITS = ["dev", "test"] as const;
export const EvalSplit = z.enum(EVAL_SPLITS);
export type EvalSplit = z.infer<typeof EvalSplit>;
/**
 * Where answers are generated and graded: the evaluated parts, and train for the rejected answers
 * of preference pairs (never compared in a report, never selected on).
 */
export const GENERATION_SPLITS = [...EVAL_SPLITS, "train"] as const;
export type GenerationSplit = (typeof GENERATION_SPLITS)[number];

/** A stored answer's grading: waiting, graded, or given up on after the bounded retries. */
export const GENERATION_GRADE_STATES = ["pending", "graded", "no_verdict"] as const;

/** Which model a stage concerns: the base, the adapter run of one seed, or one seed's DPO run of a round. */
export type StageTarget =
  | { model: "base" }
  | { model: "seed"; seed: number; seedIndex: number }
  | { model: "dpo"; seed: number; seedIndex: number; round: number }
  | { model: "grpo"; seed: number; seedIndex: number };

/** `round`: the DPO round (1-based) of a dpo_start, sample, pairs, dpo or DPO dev_eval stage. */
export type StageDef = { key: string; kind: StageKind; target: StageTarget | null; after: string[]; round?: number };

export type StageRecord = { key: string; state: StageState; error?: string | null };

export const trainKey = (seed: number) => `train:s${seed}`;
export function devKey(t: StageTarget): string {
  if (t.model === "base") return "dev_eval:base";
  if (t.model === "dpo") return `dev_eval:dpo:s${t.seed}:r${t.round}`;
  if (t.model === "grpo") return `dev_eval:grpo:s${t.seed}`;
  return `dev_eval:s${t.seed}`;
}
export const dpoStartKey = (round: number) => `dpo_start:r${round}`;
export const sampleKey = (round: number) => `sample:r${round}`;
export const pairsKey = (round: number) => `pairs:r${round}`;
export const dpoKey = (seed: number, round: number) => `dpo:s${seed}:r${round}`;
export const grpoKey = (seed: number) => `grpo:s${seed}`;
/** One for the experiment: the start is the same dev selection for every seed. */
export const GRPO_SAMPLE_KEY = "grpo_sample";

/**
 * collect → verify → dataset → train per seed → dev eval (base and every epoch of each seed) →
 * select → test eval → report. The base's dev evaluation needs no training, so it may run while
 * the teacher collects.
 *
 * sft+dpo inserts before select, per round k: dpo_start (round 1: the dev selection of
 * the SFT start among base and SFT epochs; k > 1: round k−1's dev-best DPO epoch) → sample (n
 * answers per train task from that policy, graded) → pairs → dpo per seed → dev eval of every DPO
 * epoch; select then waits for every dev evaluation of every round.
 *
 * sft+grpo inserts before select, per seed: grpo (its start is the dev selection among base and SFT
 * epochs, so it waits for their dev evaluations) → dev eval of every GRPO snapshot. With the
 * recipe's pass-rate filter (grpo.dynamicSampling), one grpo_sample first: the start's answers on
 * train, graded, whose pass rates decide every seed's prompts.
 */
export function stagePlan(config: Pick<ExperimentConfig, "seeds" | "method" | "dpo" | "grpo">): StageDef[] {
  const seeds = config.seeds.map((seed, seedIndex) => ({ model: "seed" as const, seed, seedIndex }));
  const base: StageTarget = { model: "base" };
  const sftDev = [devKey(base), ...seeds.map(devKey)];
  const dpo: StageDef[] = [];
  let previous = sftDev;
  for (let round = 1; round <= (dpoRecipeOf(config)?.rounds ?? 0); round++) {
    const runs = seeds.map((t) => ({ ...t, model: "dpo" as const, round }));
    dpo.push(
      { key: dpoStartKey(round), kind: "dpo_start", target: null, after: previous, round },
      { key: sampleKey(round), kind: "sample", target: null, after: [dpoStartKey(round)], round },
      { key: pairsKey(round), kind: "pairs", target: null, after: [sampleKey(round)], round },
      ...runs.map(
        (t): StageDef => ({ key: dpoKey(t.seed, round), kind: "dpo", target: t, after: [pairsKey(round)], round }),
      ),
      ...runs.map(
        (t): StageDef => ({ key: devKey(t), kind: "dev_eval", target: t, after: [dpoKey(t.seed, round)], round }),
      ),
    );
    previous = runs.map(devKey);
  }
  const grpoRecipe = grpoRecipeOf(config);
  const grpoRuns = grpoRecipe ? seeds.map((t) => ({ ...t, model: "grpo" as const })) : [];
  // Absent filter: the plan is what it was (no stage added), so stored experiments resume unchanged.
  const filtered = grpoRecipe?.dynamicSampling?.passRateFilter === true;
  const grpo: StageDef[] = [
    ...(filtered ? [{ key: GRPO_SAMPLE_KEY, kind: "grpo_sample" as const, target: null, after: sftDev }] : []),
    ...grpoRuns.flatMap((t): StageDef[] => [
      { key: grpoKey(t.seed), kind: "grpo", target: t, after: filtered ? [GRPO_SAMPLE_KEY] : sftDev },
      { key: devKey(t), kind: "dev_eval", target: t, after: [grpoKey(t.seed)] },
    ]),
  ];
  const allDev = [...sftDev, ...[...dpo, ...grpo].filter((s) => s.kind === "dev_eval").map((s) => s.key)];
  return [
    { key: "collect", kind: "collect", target: null, after: [] },
    { key: "verify", kind: "verify", target: null, after: ["collect"] },
    { key: "dataset", kind: "dataset", target: null, after: ["verify"] },
    ...seeds.map((t): StageDef => ({ key: trainKey(t.seed), kind: "train", target: t, after: ["dataset"] })),
    { key: devKey(base), kind: "dev_eval", target: base, after: [] },
    ...seeds.map((t): StageDef => ({ key: devKey(t), kind: "dev_eval", target: t, after: [trainKey(t.seed)] })),
    ...dpo,
    ...grpo,
    { key: "select", kind: "select", target: null, after: allDev },
    { key: "test_eval", kind: "test_eval", target: null, after: ["select"] },
    { key: "report", kind: "report", target: null, after: ["test_eval"] },
  ];
}

export type PlanStatus =
  | { status: "running"; runnable: StageDef[] }
  | { status: "succeeded" }
  | { status: "failed"; stage: string; error: string };

/**
 * What to do now. A running stage is runnable again: its handler re-reads its jobs, and jobs are
 * enqueued under stable dedupe keys, so re-running after a crash reuses finished jobs.
 */
export function nextStages(plan: readonly StageDef[], records: readonly StageRecord[]): PlanStatus {
  const byKey = new Map(records.map((r) => [r.key, r]));
  const failed = plan.find((s) => byKey.get(s.key)?.state === "failed");
  if (failed) return { status: "failed", stage: failed.key, error: byKey.get(failed.key)?.error ?? "stage failed" };
  if (plan.every((s) => byKey.get(s.key)?.state === "succeeded")) return { status: "succeeded" };
  const done = (k: string) => byKey.get(k)?.state === "succeeded";
  const runnable = plan.filter((s) => !done(s.key) && s.after.every(done));
  return { status: "running", runnable };
}

/** Fraction of stages finished, for the progress bar. */
export const planProgress = (plan: readonly StageDef[], records: readonly StageRecord[]): number =>
  plan.length === 0
    ? 1
    : records.filter((r) => r.state === "succeeded" && plan.some((s) => s.key === r.key)).length / plan.length;
