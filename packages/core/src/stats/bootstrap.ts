import { DomainError } from "../errors";
import { mulberry32, quantileSorted } from "./random";

/** One task's outcome under the base model and the treated (fine-tuned) model: 1 pass, 0 fail, or a score. */
export type PairedOutcome = { base: number; treated: number };

export type BootstrapOptions<T> = {
  iterations?: number;
  seed?: number;
  /** Tasks sharing a key (a source group) are resampled together, since their outcomes correlate. */
  clusterBy?: (pair: T) => string;
  /** Two-sided coverage of the percentile interval. */
  level?: number;
};

export type BootstrapResult = {
  /** Observed mean of treated - base over all pairs. */
  mean: number;
  lo: number;
  hi: number;
  level: number;
  iterations: number;
  seed: number;
  n: number;
  /** Resampling units: clusters when clusterBy is given, else pairs. */
  units: number;
};

/**
 * Paired bootstrap of the mean difference with a percentile interval. With `clusterBy` whole
 * clusters are drawn with replacement and the statistic is the ratio Σdiff / Σcount over the drawn
 * clusters, i.e. the per-task mean of the resampled data set (a cluster bootstrap).
 */
export function pairedBootstrap<T extends PairedOutcome>(pairs: readonly T[], opts: BootstrapOptions<T> = {}): BootstrapResult {
  const iterations = opts.iterations ?? 10_000;
  const seed = opts.seed ?? 0;
  const level = opts.level ?? 0.95;
  if (!Number.isInteger(iterations) || iterations < 1) throw new DomainError("BAD_REQUEST", "iterations must be a positive integer");
  if (!(level > 0 && level < 1)) throw new DomainError("BAD_REQUEST", "level must lie in (0, 1)");
  if (pairs.length === 0) return { mean: 0, lo: 0, hi: 0, level, iterations, seed, n: 0, units: 0 };

  const sums: number[] = [];
  const counts: number[] = [];
  if (opts.clusterBy) {
    const index = new Map<string, number>();
    for (const p of pairs) {
      const key = opts.clusterBy(p);
      let i = index.get(key);
      if (i === undefined) {
        i = sums.length;
        index.set(key, i);
        sums.push(0);
        counts.push(0);
      }
      sums[i] = (sums[i] ?? 0) + (p.treated - p.base);
      counts[i] = (counts[i] ?? 0) + 1;
    }
  } else {
    for (const p of pairs) {
      sums.push(p.treated - p.base);
      counts.push(1);
    }
  }
  const units = sums.length;
  const total = sums.reduce((a, b) => a + b, 0);
  const mean = total / pairs.length;

  const rand = mulberry32(seed);
  const stats = new Float64Array(iterations);
  for (let it = 0; it < iterations; it++) {
    let s = 0;
    let c = 0;
    for (let j = 0; j < units; j++) {
      const u = Math.floor(rand() * units);
      s += sums[u] ?? 0;
      c += counts[u] ?? 0;
    }
    stats[it] = c === 0 ? 0 : s / c;
  }
  const sorted = Array.from(stats).sort((a, b) => a - b);
  const alpha = (1 - level) / 2;
  return { mean, lo: quantileSorted(sorted, alpha), hi: quantileSorted(sorted, 1 - alpha), level, iterations, seed, n: pairs.length, units };
}
