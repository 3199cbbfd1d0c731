import { DomainError } from "../errors";
import {
  bootstrapSettings,
  MIN_RELIABLE_GROUPS,
  resampleGroups,
  studentizedInterval,
  studentizedMethod,
} from "./bootstrap";
import { clusterPairs, clusterSe } from "./clusters";
import {
  clusteredTest,
  compareClusters,
  minimumDetectableEffect,
  type CompareOptions,
  type PairedComparison,
} from "./compare";
import { deriveSeed, mulberry32, quantileSorted } from "./random";

/** One task under the base model and under each seed's adapter (same order as `seeds`). */
export type SeedTaskOutcome = { taskId: string; group: string; base: number; bySeed: readonly number[] };

export type SeedRow = { seed: number; stats: PairedComparison };

/** The pooled row: Δ averaged over seeds; its interval and SE include seed-to-seed variance. */
export type PooledComparison = Omit<PairedComparison, "improved" | "regressed"> & { seeds: number };

export type PooledResult = {
  perSeed: SeedRow[];
  pooled: PooledComparison;
  /** Spread of the per-seed Δ: sample standard deviation (0 with one seed), min and max. */
  spread: { sd: number; min: number; max: number };
  method: string;
};

export const POOLING_METHOD =
  "Pooled Δ = mean over seeds of Δ_seed. Interval: hierarchical studentized bootstrap (draw the seeds with replacement, then the source groups with replacement; " +
  "t* = (Δ* − Δ) / SE*_groups), so seed-to-seed variance widens the distribution of t* and the interval. Test: the clustered test on the seed-averaged outcomes. " +
  "SE for the MDE: √(SE_groups² + sd_seed² / seeds).";

/** Per-seed clustered comparisons and the pooled estimate across seeds. */
export function poolSeeds(
  tasks: readonly SeedTaskOutcome[],
  seeds: readonly number[],
  opts: CompareOptions = {},
): PooledResult {
  const k = seeds.length;
  if (k === 0) throw new DomainError("BAD_REQUEST", "poolSeeds needs at least one seed");
  for (const t of tasks) {
    if (t.bySeed.length !== k)
      throw new DomainError("BAD_REQUEST", `task ${t.taskId} has ${t.bySeed.length} seed outcomes, expected ${k}`);
  }
  const perSeed = seeds.map(
    (seed, i): SeedRow => ({
      seed,
      stats: compareClusters(
        clusterPairs(tasks.map((t) => ({ group: t.group, base: t.base, treated: t.bySeed[i] ?? 0 }))),
        opts,
      ),
    }),
  );
  const deltas = perSeed.map((r) => r.stats.delta);
  const mean = deltas.reduce((a, b) => a + b, 0) / k;
  const sd = k > 1 ? Math.sqrt(deltas.reduce((s, d) => s + (d - mean) ** 2, 0) / (k - 1)) : 0;

  const avg = clusterPairs(
    tasks.map((t) => ({ group: t.group, base: t.base, treated: t.bySeed.reduce((a, b) => a + b, 0) / k })),
  );
  // Per (group, seed) sums of differences, group-major, in clusterPairs' group order.
  const g = avg.groups;
  const order = new Map<string, number>();
  for (const t of tasks) if (!order.has(t.group)) order.set(t.group, order.size);
  const bySeed = new Float64Array(g * k);
  for (const t of tasks) {
    const gi = order.get(t.group) ?? 0;
    for (let j = 0; j < k; j++) bySeed[gi * k + j] = (bySeed[gi * k + j] ?? 0) + (t.bySeed[j] ?? 0) - t.base;
  }
  const { iterations, seed } = bootstrapSettings(opts);
  const alpha = opts.alpha ?? 0.05;
  const level = 1 - alpha;
  const seGroups = clusterSe(avg.sums, avg.counts);
  let ci: [number, number] = [-1, 1];
  if (g >= 2) {
    const rand = mulberry32(deriveSeed(seed, 3));
    const tStars = new Float64Array(iterations);
    const thetas = new Float64Array(iterations);
    const weights = new Float64Array(k);
    const groupSums = new Float64Array(g);
    const one = new Float64Array(1);
    const oneTheta = new Float64Array(1);
    for (let it = 0; it < iterations; it++) {
      // Seeds first: each resample sees a seed mix drawn with replacement, then the groups.
      weights.fill(0);
      for (let j = 0; j < k; j++) {
        const u = Math.floor(rand() * k);
        weights[u] = (weights[u] ?? 0) + 1 / k;
      }
      for (let i = 0; i < g; i++) {
        let s = 0;
        for (let j = 0; j < k; j++) s += (weights[j] ?? 0) * (bySeed[i * k + j] ?? 0);
        groupSums[i] = s;
      }
      resampleGroups(groupSums, avg.counts, Math.floor(rand() * 4294967296), mean, one, oneTheta);
      tStars[it] = one[0] ?? 0;
      thetas[it] = oneTheta[0] ?? 0;
    }
    if (seGroups > 0) ci = studentizedInterval(mean, seGroups, tStars, level, g, [-1, 1]);
    else {
      // No spread between groups: only the seeds move Δ, so their replicates give the interval.
      thetas.sort();
      ci = [quantileSorted(thetas, alpha / 2), quantileSorted(thetas, 1 - alpha / 2)];
    }
  }
  const { p, test } = clusteredTest(avg, opts.permutations ?? 20_000, seed);
  const se = Math.sqrt(seGroups ** 2 + (sd * sd) / k);
  const power = opts.power ?? 0.8;
  const pooled: PooledComparison = {
    seeds: k,
    n: avg.n,
    groups: g,
    basePass: avg.n ? avg.baseSum / avg.n : 0,
    treatedPass: avg.n ? avg.treatedSum / avg.n : 0,
    delta: mean,
    ci,
    ciMethod:
      g >= 2
        ? studentizedMethod(g, iterations, "hierarchical bootstrap (seeds, then groups)")
        : `no interval: ${g} source group${g === 1 ? "" : "s"}`,
    reliable: g >= MIN_RELIABLE_GROUPS,
    p,
    test,
    alpha,
    significant: p < alpha && (ci[0] > 0 || ci[1] < 0),
    se,
    mde: minimumDetectableEffect(se, g, alpha, power),
    power,
    iterations,
    seed,
  };
  return {
    perSeed,
    pooled,
    spread: { sd, min: Math.min(...deltas), max: Math.max(...deltas) },
    method: POOLING_METHOD,
  };
}
