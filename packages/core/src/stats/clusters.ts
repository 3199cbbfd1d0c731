import { DomainError } from "../errors";

/** One task's outcome under the base and the treated (fine-tuned) model: 0/1, or a pass rate in [0, 1]. */
export type PairedInput = { group: string; base: number; treated: number };

/** Paired outcomes reduced to what every clustered statistic needs: per-group sums of differences and sizes. */
export type Clusters = {
  n: number;
  groups: number;
  /** Σ (treated − base) over each group's tasks, in order of the group's first appearance. */
  sums: Float64Array;
  counts: Float64Array;
  baseSum: number;
  treatedSum: number;
  /** Tasks with treated > base, and with treated < base. */
  improved: number;
  regressed: number;
  /** Every outcome is exactly 0 or 1. */
  binary: boolean;
};

const isOutcome = (v: number) => Number.isFinite(v) && v >= 0 && v <= 1;

export function clusterPairs(pairs: readonly PairedInput[]): Clusters {
  const index = new Map<string, number>();
  const sums: number[] = [];
  const counts: number[] = [];
  let baseSum = 0;
  let treatedSum = 0;
  let improved = 0;
  let regressed = 0;
  let binary = true;
  for (const p of pairs) {
    if (!isOutcome(p.base) || !isOutcome(p.treated))
      throw new DomainError(
        "BAD_REQUEST",
        `outcomes must be numbers in [0, 1] (group ${p.group}: base ${p.base}, treated ${p.treated})`,
      );
    let i = index.get(p.group);
    if (i === undefined) {
      i = sums.length;
      index.set(p.group, i);
      sums.push(0);
      counts.push(0);
    }
    const d = p.treated - p.base;
    sums[i] = (sums[i] ?? 0) + d;
    counts[i] = (counts[i] ?? 0) + 1;
    baseSum += p.base;
    treatedSum += p.treated;
    if (d > 0) improved++;
    else if (d < 0) regressed++;
    if ((p.base !== 0 && p.base !== 1) || (p.treated !== 0 && p.treated !== 1)) binary = false;
  }
  return {
    n: pairs.length,
    groups: sums.length,
    sums: Float64Array.from(sums),
    counts: Float64Array.from(counts),
    baseSum,
    treatedSum,
    improved,
    regressed,
    binary,
  };
}

/** The per-task mean θ = Σs / Σn over all groups, and n = Σn. */
export function clusterMean(sums: ArrayLike<number>, counts: ArrayLike<number>): { theta: number; n: number } {
  let s = 0;
  let n = 0;
  for (let i = 0; i < sums.length; i++) {
    s += sums[i] ?? 0;
    n += counts[i] ?? 0;
  }
  return { theta: n ? s / n : 0, n };
}

/**
 * Cluster-robust standard error of the per-task mean difference Σs/Σn (the ratio estimator's
 * linearisation, with the g/(g−1) small-sample factor). 0 with fewer than two groups.
 */
export function clusterSe(sums: ArrayLike<number>, counts: ArrayLike<number>): number {
  const g = sums.length;
  if (g < 2) return 0;
  const { theta, n } = clusterMean(sums, counts);
  let ss = 0;
  for (let i = 0; i < g; i++) ss += ((sums[i] ?? 0) - theta * (counts[i] ?? 0)) ** 2;
  return Math.sqrt((g / (g - 1)) * ss) / n;
}
