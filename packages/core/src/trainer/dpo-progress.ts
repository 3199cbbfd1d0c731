import type { TrainPoint } from "../experiments/training";
import { TrainerProgressEvent } from "./schemas";

// DPO curves for the experiment page (issue 18): a dpo job's progress events (stored per attempt as
// job progress, like a train job's) read back as points with the DPO figures each step reports.
// Pure; the experiment page draws them with the training panel's chart.

export type DpoPoint = TrainPoint & {
  /** The step's DPO term and SFT term (loss = dpo + sftWeight · sft). */
  dpoLoss: number;
  sftLoss: number;
  /** Mean β·(Δ log π(chosen) − Δ log π(rejected)) over the step's pairs, Δ against the reference. */
  rewardMargin: number;
  /** Share of the step's pairs whose chosen reward exceeds the rejected one. */
  preferenceAccuracy: number;
  chosenReward: number;
  rejectedReward: number;
};

/**
 * The progress rows that are DPO progress events (a train event, which lacks the reward figures,
 * is skipped), in step order; a repeated step (a retried delivery) keeps its last report.
 */
export function dpoPoints(rows: readonly { data: unknown }[]): DpoPoint[] {
  const byStep = new Map<number, DpoPoint>();
  for (const r of rows) {
    const ev = TrainerProgressEvent.safeParse(r.data);
    if (!ev.success) continue;
    const e = ev.data;
    if (e.reward_margin === undefined || e.preference_accuracy === undefined) continue;
    byStep.set(e.step, {
      step: e.step,
      epoch: e.epoch,
      loss: e.loss,
      lr: e.lr,
      tokensPerS: e.tokens_per_s,
      etaS: e.eta_s,
      totalSteps: e.total_steps,
      epochProgress: e.epoch_progress,
      dpoLoss: e.dpo_loss ?? e.loss,
      sftLoss: e.sft_loss ?? 0,
      rewardMargin: e.reward_margin,
      preferenceAccuracy: e.preference_accuracy,
      chosenReward: e.chosen_reward ?? Number.NaN,
      rejectedReward: e.rejected_reward ?? Number.NaN,
    });
  }
  return [...byStep.values()].sort((a, b) => a.step - b.step);
}
