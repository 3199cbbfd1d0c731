import { z } from "zod";
import type { ExperimentConfig } from "./config";

// The experiment as a stage graph. Pure: given the stored stage records it says what may run
// next, so a restarted server resumes exactly where the database says it stopped.

export const StageKind = z.enum(["collect", "verify", "dataset", "train", "dev_eval", "select", "test_eval", "report"]);
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

/** A stored answer's grading: waiting, graded, or given up on after the bounded retries. */
export const GENERATION_GRADE_STATES = ["pending", "graded", "no_verdict"] as const;

/** Which model a stage concerns: the base, or the adapter run of one seed. */
export type StageTarget = { model: "base" } | { model: "seed"; seed: number; seedIndex: number };

export type StageDef = { key: string; kind: StageKind; target: StageTarget | null; after: string[] };

export type StageRecord = { key: string; state: StageState; error?: string | null };

export const trainKey = (seed: number) => `train:s${seed}`;
export const devKey = (t: StageTarget) => (t.model === "base" ? "dev_eval:base" : `dev_eval:s${t.seed}`);

/**
 * collect → verify → dataset → train per seed → dev eval (base and every epoch of each seed) →
 * select → test eval → report. The base's dev evaluation needs no training, so it may run while
 * the teacher collects.
 */
export function stagePlan(config: Pick<ExperimentConfig, "seeds">): StageDef[] {
  const seeds = config.seeds.map((seed, seedIndex) => ({ model: "seed" as const, seed, seedIndex }));
  const base: StageTarget = { model: "base" };
  return [
    { key: "collect", kind: "collect", target: null, after: [] },
    { key: "verify", kind: "verify", target: null, after: ["collect"] },
    { key: "dataset", kind: "dataset", target: null, after: ["verify"] },
    ...seeds.map((t): StageDef => ({ key: trainKey(t.seed), kind: "train", target: t, after: ["dataset"] })),
    { key: devKey(base), kind: "dev_eval", target: base, after: [] },
    ...seeds.map((t): StageDef => ({ key: devKey(t), kind: "dev_eval", target: t, after: [trainKey(t.seed)] })),
    { key: "select", kind: "select", target: null, after: [devKey(base), ...seeds.map(devKey)] },
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
