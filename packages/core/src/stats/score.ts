import { normQuantile } from "./distributions";

// Intervals for the paired difference that do not rely on resampling, for the data where
// resampling degenerates: no changed outcome at all (a bootstrap sees no spread and returns a
// zero-width interval) or changes in a few units only (most resamples hold none of them, so
// studentized replicates blow up to the whole range).

/**
 * Exact (Clopper–Pearson) upper bound on a rate after 0 events in `units` independent trials, at
 * one-sided level 1 − a: 1 − a^(1/units). Every changed outcome moves |Δ| by at most its unit's
 * share, so this bound on the share of units with any change bounds |Δ|.
 */
export const noEventUpperBound = (units: number, a: number): number => (units >= 1 ? 1 - a ** (1 / units) : 1);

/**
 * Tango's score statistic for the paired difference Δ = p_gain − p_loss at Δ0, from `gain` tasks
 * improved and `loss` regressed out of `n` (Tango 1998): the numerator is the observed excess over
 * n·Δ0, the variance n·(2·q̃ + Δ0(1 − Δ0)) uses q̃, the restricted maximum-likelihood P(loss)
 * under Δ = Δ0. Fractional counts (pass-rate gains and losses) are accepted: a difference in
 * [−1, 1] with the same positive and negative means has at most the variance of a −1/0/1 one.
 */
export function tangoStatistic(gain: number, loss: number, n: number, d0: number): number {
  const w = -gain - loss + (2 * n - gain + loss) * d0;
  const q = (Math.sqrt(Math.max(0, w * w + 8 * n * loss * d0 * (1 - d0))) - w) / (4 * n);
  const variance = n * (2 * q + d0 * (1 - d0));
  const num = gain - loss - n * d0;
  if (!(variance > 0)) return num === 0 ? 0 : num > 0 ? Infinity : -Infinity;
  return num / Math.sqrt(variance);
}

/** {Δ0 : |T(Δ0)| ≤ z}: T decreases in Δ0 and is 0 at Δ̂, so each end is one bisection (or the edge of [−1, 1]). */
export function tangoInterval(gain: number, loss: number, n: number, z: number): [number, number] {
  const est = n > 0 ? (gain - loss) / n : 0;
  const t = (d0: number) => tangoStatistic(gain, loss, n, d0);
  const bisect = (target: number, lo: number, hi: number): number => {
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (t(mid) > target) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const lo = t(-1) <= z ? -1 : bisect(z, -1, est);
  const hi = t(1) >= -z ? 1 : bisect(-z, est, 1);
  return [lo, hi];
}

export type ScoreInterval = { lo: number; hi: number; designEffect: number; effectiveN: number };

/**
 * Tango's interval on effective counts: gains, losses and n divided by the design effect
 * deff = (cluster-robust variance of Δ̂) / (variance if tasks were independent), floored at 1, so
 * changes concentrated in few units count as the few observations they are.
 */
export function scoreIntervalWithDesignEffect(
  gain: number,
  loss: number,
  sumSq: number,
  n: number,
  clusterSe: number,
  level: number,
): ScoreInterval {
  const est = n > 0 ? (gain - loss) / n : 0;
  const iid = (sumSq / n - est * est) / n;
  const deff = iid > 0 && clusterSe > 0 ? Math.max(1, (clusterSe * clusterSe) / iid) : 1;
  const z = normQuantile((1 + level) / 2);
  const [lo, hi] = tangoInterval(gain / deff, loss / deff, n / deff, z);
  return { lo, hi, designEffect: deff, effectiveN: n / deff };
}
