import { z } from "zod";
import { DpoStepProgress, GrpoStepProgress, TrainStepProgress } from "../jobs/progress";

// Training curves for the experiment page: the trainer's progress events (stored per attempt as
// job progress) read back as points, with epoch boundaries, a smoothed loss and an ETA; a dpo job's
// steps with their DPO figures for the DPO panel, a grpo job's for the GRPO panel. Pure.

export type TrainPoint = {
  step: number;
  epoch: number;
  loss: number;
  lr: number;
  tokensPerS: number;
  etaS: number;
  totalSteps: number;
  epochProgress: number;
};
export type EpochMark = { epoch: number; step: number };
export type EpochLoss = { epoch: number; step: number; trainLoss: number | null; evalLoss: number | null };

/** A stored progress row; `attempt`: the job attempt that reported it (rows come in attempt order). */
export type ProgressRow = { data: unknown; attempt?: number };

/**
 * The trainer's step events among progress rows (anything else, a shell job's progress, is skipped),
 * one per step in step order: a retried delivery may repeat a step, and its last report wins. A
 * later attempt replaces every step from its first one on, so a run restarted from step 0 shows
 * its own curve and a run resumed after an epoch continues the earlier one. The one reader of
 * step events, for SFT's curves and DPO's alike.
 */
function stepEvents(rows: readonly ProgressRow[]): TrainStepProgress[] {
  return latestPerStep(rows, TrainStepProgress);
}

/** Rows of one step-event kind, one per step as stepEvents describes (grpo steps read the same way). */
function latestPerStep<T extends { step: number }>(
  rows: readonly ProgressRow[],
  schema: { safeParse(d: unknown): { success: true; data: T } | { success: false } },
): T[] {
  const byStep = new Map<number, T>();
  let attempt: number | undefined;
  for (const r of rows) {
    const ev = schema.safeParse(r.data);
    if (!ev.success) continue;
    if (r.attempt !== attempt) {
      attempt = r.attempt;
      for (const step of byStep.keys()) if (step >= ev.data.step) byStep.delete(step);
    }
    byStep.set(ev.data.step, ev.data);
  }
  return [...byStep.values()].sort((a, b) => a.step - b.step);
}

/** One grpo step for the GRPO panel: reward and its spread, pass share, the signal left, KL, length, hacks. */
export type GrpoPoint = {
  step: number;
  totalSteps: number;
  loss: number;
  rewardMean: number;
  rewardStd: number;
  /** Completions the judge passed, of those scored. */
  passShare: number;
  /** Groups whose rewards were all equal: no learning signal from them. */
  zeroVarianceShare: number;
  kl: number | null;
  completionLength: number;
  truncatedShare: number;
  maskedGroups: number;
  /** Dynamic sampling: groups left out of the loss for equal rewards, and groups resampled; null when not reported. */
  droppedGroups: number | null;
  resampledGroups: number | null;
  /** Completions the judge caught tampering, timing out, over a limit or unparseable. */
  suspicious: number;
  etaS: number;
};

export function grpoPoints(rows: readonly ProgressRow[]): GrpoPoint[] {
  return latestPerStep(rows, GrpoStepProgress).map((e) => ({
    step: e.step,
    totalSteps: e.total_steps,
    loss: e.loss,
    rewardMean: e.reward_mean,
    rewardStd: e.reward_std,
    passShare: e.completions > 0 ? e.pass_count / e.completions : 0,
    zeroVarianceShare: e.zero_variance_share,
    kl: e.kl,
    completionLength: e.completion_length_mean,
    truncatedShare: e.truncated_share,
    maskedGroups: e.masked_groups,
    droppedGroups: e.dropped_groups ?? null,
    resampledGroups: e.resampled_groups ?? null,
    suspicious: e.audit.tampered + e.audit.timeout + e.audit.resource_limit + e.audit.unparseable,
    etaS: e.eta_s,
  }));
}

/** Where a later attempt of the job took over: its first step (1: restarted from scratch; more: resumed). */
export type RestartMark = { attempt: number; step: number; resumed: boolean };

export function restartMarks(rows: readonly ProgressRow[]): RestartMark[] {
  const marks: RestartMark[] = [];
  let attempt: number | undefined;
  for (const r of rows) {
    const ev = TrainStepProgress.safeParse(r.data);
    if (!ev.success || r.attempt === attempt) continue;
    if (attempt !== undefined && r.attempt !== undefined)
      marks.push({ attempt: r.attempt, step: ev.data.step, resumed: ev.data.step > 1 });
    attempt = r.attempt;
  }
  return marks;
}

const trainPoint = (e: TrainStepProgress): TrainPoint => ({
  step: e.step,
  epoch: e.epoch,
  loss: e.loss,
  lr: e.lr,
  tokensPerS: e.tokens_per_s,
  etaS: e.eta_s,
  totalSteps: e.total_steps,
  epochProgress: e.epoch_progress,
});

/** Progress rows that are trainer step events (train and dpo jobs), as the training panel's points. */
export function trainPoints(rows: readonly ProgressRow[]): TrainPoint[] {
  return stepEvents(rows).map(trainPoint);
}

/** A dpo step: the train point with the DPO figures every dpo step reports (DpoStepProgress). */
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
  /** The epoch's last step only: mean Δ log-prob (nats per answer, vs the reference) on the train pairs. */
  chosenLogpDelta?: number;
  rejectedLogpDelta?: number;
  /** Set with them when the chosen answers' log-prob fell. */
  logpWarning?: string;
};

/** The DPO panel's points: the step events that carry DPO figures (a train job's steps are skipped). */
export function dpoPoints(rows: readonly ProgressRow[]): DpoPoint[] {
  return stepEvents(rows).flatMap((e) => {
    const d = DpoStepProgress.safeParse(e);
    if (!d.success) return [];
    const f = d.data;
    return [
      {
        ...trainPoint(e),
        dpoLoss: f.dpo_loss,
        sftLoss: f.sft_loss,
        rewardMargin: f.reward_margin,
        preferenceAccuracy: f.preference_accuracy,
        chosenReward: f.chosen_reward,
        rejectedReward: f.rejected_reward,
        ...(f.chosen_logp_delta === undefined ? {} : { chosenLogpDelta: f.chosen_logp_delta }),
        ...(f.rejected_logp_delta === undefined ? {} : { rejectedLogpDelta: f.rejected_logp_delta }),
        ...(f.logp_warning === undefined ? {} : { logpWarning: f.logp_warning }),
      },
    ];
  });
}

/** Per finished epoch: what the run did to each side's likelihood on its train pairs (and the warning). */
export type DpoEpochDynamics = {
  epoch: number;
  step: number;
  chosen: number;
  rejected: number;
  warning: string | null;
};

/** The epoch-end points' Δ log-probs, in step order (runs from before they were measured have none). */
export function dpoEpochDynamics(points: readonly DpoPoint[]): DpoEpochDynamics[] {
  return points.flatMap((p) =>
    p.chosenLogpDelta === undefined || p.rejectedLogpDelta === undefined
      ? []
      : [
          {
            epoch: p.epoch,
            step: p.step,
            chosen: p.chosenLogpDelta,
            rejected: p.rejectedLogpDelta,
            warning: p.logpWarning ?? null,
          },
        ],
  );
}

/** The first step of each epoch after the first: where the chart draws an epoch boundary. */
export function epochMarks(points: readonly TrainPoint[]): EpochMark[] {
  const marks: EpochMark[] = [];
  for (let i = 1; i < points.length; i++) {
    const prev = points[i - 1];
    const cur = points[i];
    if (prev && cur && cur.epoch !== prev.epoch) marks.push({ epoch: cur.epoch, step: cur.step });
  }
  return marks;
}

/**
 * Exponential moving average with bias correction (as TensorBoard's smoothing): `weight` 0 is the
 * raw series, 0.99 nearly flat; the first values are not pulled toward zero.
 */
export function smooth(values: readonly number[], weight: number): number[] {
  const w = Math.min(Math.max(weight, 0), 0.999);
  let last = 0;
  let n = 0;
  return values.map((v) => {
    if (!Number.isFinite(v)) return v;
    last = last * w + (1 - w) * v;
    n++;
    return last / (1 - w ** n);
  });
}

/**
 * Downsamples to at most `max` points for drawing, keeping the first and last and every epoch
 * boundary, so a long run stays a light payload without moving the epoch marks.
 */
export function thin<P extends { step: number; epoch?: number }>(points: readonly P[], max: number): P[] {
  if (points.length <= max) return [...points];
  const keep = new Set<number>([0, points.length - 1]);
  for (let i = 1; i < points.length; i++) if (points[i]?.epoch !== points[i - 1]?.epoch) keep.add(i);
  const stride = points.length / Math.max(1, max - keep.size);
  for (let x = 0; x < points.length; x += stride) keep.add(Math.floor(x));
  return [...keep].sort((a, b) => a - b).flatMap((i) => (points[i] ? [points[i]] : []));
}

/**
 * What every curves panel (training, DPO, GRPO) shows of one stage's run besides its own figures:
 * its state and job, the curve thinned for drawing, the progress, the ETA while running, the latest point.
 */
export function runCurve<P extends { step: number; totalSteps: number; etaS: number; epoch?: number }>(
  s: { key: string; stageState: string; job: { id: string; state: string } | null },
  points: readonly P[],
) {
  const last = points.at(-1) ?? null;
  return {
    key: s.key,
    stageState: s.stageState,
    jobId: s.job?.id ?? null,
    jobState: s.job?.state ?? null,
    points: thin(points, 1500),
    fraction: s.stageState === "succeeded" ? 1 : trainFraction(points),
    etaS: s.job?.state === "running" && last ? last.etaS : null,
    latest: last,
  };
}

/** Fraction of the run's steps done, from its latest event; null before the first. */
export const trainFraction = (points: readonly { step: number; totalSteps: number }[]): number | null => {
  const last = points.at(-1);
  return last ? Math.min(1, last.step / last.totalSteps) : null;
};

/**
 * A progress value that never runs backwards while a stage keeps running: a stage whose jobs
 * are added as it goes (generate, then one grade job per task) would otherwise drop from 1/1 to
 * 1/41. It restarts only when the stage does (its state leaves "running" for "pending"/"failed").
 */
export function ratchet(
  prev: { state: string; value: number } | undefined,
  state: string,
  value: number,
): { state: string; value: number } {
  if (state === "succeeded") return { state, value: 1 };
  if (!prev || prev.state !== state || state !== "running") return { state, value };
  return { state, value: Math.max(prev.value, value) };
}

const AdapterMeta = z.object({
  epoch: z.number().int(),
  trainLoss: z.number().nullable().optional(),
  evalLoss: z.number().nullable().optional(),
});
const ResultSnapshots = z.object({
  snapshots: z.array(
    z.object({
      epoch: z.number().int(),
      step: z.number().int(),
      train_loss: z.number(),
      eval_loss: z.number().nullable(),
    }),
  ),
});

/**
 * Per-epoch train and eval loss: from the finished run record when there is one, else from the
 * adapters uploaded so far (each carries its epoch's losses); the step is the epoch's last step.
 */
export function epochLosses(
  adapters: readonly { meta: unknown }[],
  result: unknown,
  points: readonly TrainPoint[],
): EpochLoss[] {
  const record = ResultSnapshots.safeParse(result);
  if (record.success)
    return record.data.snapshots
      .map((s) => ({ epoch: s.epoch, step: s.step, trainLoss: s.train_loss, evalLoss: s.eval_loss }))
      .sort((a, b) => a.epoch - b.epoch);
  const lastStep = (epoch: number) => points.filter((p) => p.epoch === epoch).at(-1)?.step ?? null;
  return adapters
    .flatMap((a) => {
      const m = AdapterMeta.safeParse(a.meta);
      if (!m.success) return [];
      const step = lastStep(m.data.epoch);
      return step === null
        ? []
        : [{ epoch: m.data.epoch, step, trainLoss: m.data.trainLoss ?? null, evalLoss: m.data.evalLoss ?? null }];
    })
    .sort((a, b) => a.epoch - b.epoch);
}
