import { DomainError } from "../errors";
import { clusterPairs, clusterSe } from "./clusters";
import { minimumDetectableEffect } from "./compare";
import { passRateOf, type SampleCount } from "./passk";

// Per-task pass rates as the paired quantity: with n samples per task the paired
// outcome of a task is its pass rate under each model, and the clustered test and interval
// (comparePaired) run on the rate differences unchanged. This file adds what only multi-sample
// data has: a histogram of the per-task rate changes, and what the same design would detect with
// one sample per task.

/** One task's samples under the base and the treated model, with its source group. */
export type TaskRatePair = { group: string; base: SampleCount; treated: SampleCount };

/** The pairs comparePaired takes: per-task pass rates in [0, 1]. */
export const ratePairs = (tasks: readonly TaskRatePair[]) =>
  tasks.map((t) => ({ group: t.group, base: passRateOf(t.base), treated: passRateOf(t.treated) }));

export type HistogramBin = { change: number; count: number };

/**
 * Counts of per-task rate changes (treated − base), one bin per multiple of 1/resolution from −1 to
 * +1. With n samples on both sides every change is such a multiple (resolution = n), so the bins
 * are exact; otherwise a change is put in the nearest bin.
 */
export function rateChangeHistogram(changes: readonly number[], resolution: number): HistogramBin[] {
  if (!Number.isInteger(resolution) || resolution < 1 || resolution > 1000)
    throw new DomainError("BAD_REQUEST", `histogram resolution must be an integer in [1, 1000] (got ${resolution})`);
  const counts = new Array<number>(2 * resolution + 1).fill(0);
  for (const d of changes) {
    if (!(d >= -1 && d <= 1)) throw new DomainError("BAD_REQUEST", `a rate change must lie in [−1, 1] (got ${d})`);
    const i = Math.round(d * resolution) + resolution;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts.map((count, i) => ({ change: (i - resolution) / resolution, count }));
}

/** Unbiased variance of one sample's 0/1 outcome from c of n (0 for a single sample: nothing to estimate). */
const sampleVariance = (s: SampleCount) => {
  if (s.samples < 2) return 0;
  const p = s.correct / s.samples;
  return (p * (1 - p) * s.samples) / (s.samples - 1);
};

export type SamplesMde = {
  /** Samples per task of this design (the smallest count over both sides). */
  samples: number;
  /** MDE of the comparison as run. */
  mde: number | null;
  /** Projected MDE with one sample per task at the same decoding; equal to `mde` when samples = 1. */
  mdeOneSample: number | null;
  se: number;
  seOneSample: number;
};

export const SAMPLES_MDE_METHOD =
  "One-sample projection: a task's rate difference with n_b and n_t samples has within-task variance v_b/n_b + v_t/n_t " +
  "(v = p(1−p), estimated unbiasedly as p̂(1−p̂)·n/(n−1)); with one sample it is v_b + v_t. The projected cluster SE adds " +
  "g/(g−1) · Σ_tasks [v_b(1−1/n_b) + v_t(1−1/n_t)] / N² to SE², and the MDE uses the same t quantiles. " +
  "It projects one sample at the same temperature, not greedy decoding (whose pass rate can differ).";

/** The MDE as run and projected for one sample per task, from the same per-task samples. */
export function samplesMde(tasks: readonly TaskRatePair[], alpha = 0.05, power = 0.8): SamplesMde {
  const c = clusterPairs(ratePairs(tasks));
  const se = clusterSe(c.sums, c.counts);
  const g = c.groups;
  let extra = 0;
  for (const t of tasks)
    extra +=
      sampleVariance(t.base) * (1 - 1 / t.base.samples) + sampleVariance(t.treated) * (1 - 1 / t.treated.samples);
  const seOne = g >= 2 && c.n > 0 ? Math.sqrt(se ** 2 + ((g / (g - 1)) * extra) / c.n ** 2) : 0;
  const samples = tasks.length ? Math.min(...tasks.flatMap((t) => [t.base.samples, t.treated.samples])) : 0;
  return {
    samples,
    mde: minimumDetectableEffect(se, g, alpha, power),
    mdeOneSample: minimumDetectableEffect(seOne, g, alpha, power),
    se,
    seOneSample: seOne,
  };
}
