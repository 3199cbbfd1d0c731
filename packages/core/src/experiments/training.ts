import { z } from "zod";
import { TrainerProgressEvent } from "../trainer/schemas";

// Training curves for the experiment page: the trainer's progress events (stored per attempt as
// job progress) read back as points, with epoch boundaries, a smoothed loss and an ETA. Pure.

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

/** Progress rows that are trainer progress events, in step order; anything else (a shell job's progress) is skipped. */
export function trainPoints(rows: readonly { data: unknown }[]): TrainPoint[] {
  const pts: TrainPoint[] = [];
  for (const r of rows) {
    const ev = TrainerProgressEvent.safeParse(r.data);
    if (!ev.success) continue;
    const e = ev.data;
    pts.push({
      step: e.step,
      epoch: e.epoch,
      loss: e.loss,
      lr: e.lr,
      tokensPerS: e.tokens_per_s,
      etaS: e.eta_s,
      totalSteps: e.total_steps,
      epochProgress: e.epoch_progress,
    });
  }
  // A retried delivery or a second attempt may repeat steps: keep the last report of each step.
  const byStep = new Map(pts.map((p) => [p.step, p]));
  return [...byStep.values()].sort((a, b) => a.step - b.step);
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
export function thin(points: readonly TrainPoint[], max: number): TrainPoint[] {
  if (points.length <= max) return [...points];
  const keep = new Set<number>([0, points.length - 1]);
  for (let i = 1; i < points.length; i++) if (points[i]?.epoch !== points[i - 1]?.epoch) keep.add(i);
  const stride = points.length / Math.max(1, max - keep.size);
  for (let x = 0; x < points.length; x += stride) keep.add(Math.floor(x));
  return [...keep].sort((a, b) => a - b).flatMap((i) => (points[i] ? [points[i]] : []));
}

/** Fraction of the run's steps done, from its latest event; null before the first. */
export const trainFraction = (points: readonly TrainPoint[]): number | null => {
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
