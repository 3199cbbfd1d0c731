import type { PairedInput } from "./clusters";
import { mulberry32 } from "./random";

// Seeded data-generating processes for the simulations of false-positive rate and coverage (the
// unit tests run small versions, `npm run bench -- stats-sim` the full sweep). Each returns the
// paired outcomes and the true Δ of the process it drew them from.

export type Draw = { pairs: PairedInput[]; truth: number };
export type SeededDraw = {
  tasks: { taskId: string; group: string; cluster?: string; base: number; baseBySeed?: number[]; bySeed: number[] }[];
  seeds: number[];
  truth: number;
  /** The mean true change of these seeds' adapters on these tasks: what a "given-seeds" row estimates. */
  givenTruth: number;
};

export function randomSource(seed: number) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  // Marsaglia–Tsang gamma (shape ≥ 1; boosted below 1), for Beta draws.
  const gamma = (k: number): number => {
    if (k < 1) return gamma(k + 1) * rand() ** (1 / k);
    const d = k - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x = normal();
      let v = 1 + c * x;
      while (v <= 0) {
        x = normal();
        v = 1 + c * x;
      }
      v = v * v * v;
      const u = rand();
      if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  };
  const beta = (a: number, b: number) => {
    const x = gamma(a);
    return x / (x + gamma(b));
  };
  const bern = (p: number) => (rand() < p ? 1 : 0);
  return { rand, normal, beta, bern };
}

/**
 * Rare successes: `tasks` tasks in groups of `groupSize`, base pass probability `base`, treated
 * `base + lift`, drawn independently (the hardest shape for an interval: few or no changed pairs).
 */
export function sparseDraw(tasks: number, base: number, lift: number, groupSize: number, seed: number): Draw {
  const r = randomSource(seed);
  const pairs: PairedInput[] = [];
  for (let i = 0; i < tasks; i++)
    pairs.push({ group: `g${Math.floor(i / groupSize)}`, base: r.bern(base), treated: r.bern(base + lift) });
  return { pairs, truth: lift };
}

/**
 * Groups that react to training as a whole: pass probability π ~ Beta(2, 2), 1–6 variants; with
 * probability ½ + η training fixes the group (a failing variant passes with probability τ), else
 * breaks it. E[π] = ½, so the true Δ is τ·η.
 */
export function reactingGroupsDraw(groups: number, tau: number, eta: number, seed: number): Draw {
  const r = randomSource(seed);
  const pairs: PairedInput[] = [];
  for (let g = 0; g < groups; g++) {
    const pi = r.beta(2, 2);
    const fix = r.rand() < 0.5 + eta;
    const variants = 1 + Math.floor(r.rand() * 6);
    for (let t = 0; t < variants; t++) {
      const base = r.bern(pi);
      const treated = fix ? (base || r.rand() < tau ? 1 : 0) : base && r.rand() >= tau ? 1 : 0;
      pairs.push({ group: `g${g}`, base, treated });
    }
  }
  return { pairs, truth: tau * eta };
}

/**
 * Hidden clusters: `clusters` clusters of `perCluster` singleton source groups. The cluster's
 * change (treated − base pass probability) is shared by its tasks with intra-cluster correlation
 * `icc`: each cluster draws lift ℓ_c = Δ ± spread, its tasks pass with base π and π + ℓ_c (same
 * latent uniform, so outcomes move together). `declare` says whether the pairs carry the cluster.
 */
export function hiddenClustersDraw(
  clusters: number,
  perCluster: number,
  delta: number,
  icc: number,
  declare: boolean,
  seed: number,
): Draw {
  const r = randomSource(seed);
  const pairs: PairedInput[] = [];
  for (let c = 0; c < clusters; c++) {
    const pi = 0.4 + 0.2 * r.rand();
    const lift = delta + (r.rand() < 0.5 ? -1 : 1) * 0.3;
    const shared = r.rand();
    for (let t = 0; t < perCluster; t++) {
      const u = r.rand() < icc ? shared : r.rand();
      const base = u < pi ? 1 : 0;
      const treated = u < Math.min(1, Math.max(0, pi + lift)) ? 1 : 0;
      pairs.push({ group: `c${c}t${t}`, ...(declare ? { cluster: `c${c}` } : {}), base, treated });
    }
  }
  // π ∈ [0.4, 0.6] and lift = Δ ± 0.3 keep π + lift in [0, 1] for |Δ| ≤ 0.1: the mean change is Δ.
  return { pairs, truth: delta };
}

/**
 * Pass rates from `samples` samples per task: `groups` groups of 1–3 tasks around a group rate
 * π ~ Beta(1, 2); the treated model has the same per-task pass probability (Δ = 0).
 */
export function ratesDraw(groups: number, samples: number, seed: number): Draw {
  const r = randomSource(seed);
  const pairs: PairedInput[] = [];
  const rate = (p: number) => {
    let k = 0;
    for (let i = 0; i < samples; i++) k += r.bern(p);
    return k / samples;
  };
  for (let g = 0; g < groups; g++) {
    const pg = r.beta(1, 2);
    const size = 1 + Math.floor(r.rand() * 3);
    for (let t = 0; t < size; t++) {
      const p = Math.min(1, Math.max(0, pg + 0.1 * r.normal()));
      pairs.push({ group: `g${g}`, base: rate(p), treated: rate(p) });
    }
  }
  return { pairs, truth: 0 };
}

/**
 * Unequal declared clusters: `big` clusters of `bigSize` tasks and `small` singletons, each
 * cluster helped or hurt by 30 pp as a whole (ICC 0.8 through a shared latent uniform), Δ = 0.
 */
export function unequalClustersDraw(big: number, bigSize: number, small: number, seed: number): Draw {
  const r = randomSource(seed);
  const pairs: PairedInput[] = [];
  const sizes = [...Array<number>(big).fill(bigSize), ...Array<number>(small).fill(1)];
  sizes.forEach((size, c) => {
    const pi = 0.4 + 0.2 * r.rand();
    const lift = (r.rand() < 0.5 ? -1 : 1) * 0.3;
    const shared = r.rand();
    for (let t = 0; t < size; t++) {
      const u = r.rand() < 0.8 ? shared : r.rand();
      pairs.push({ group: `c${c}t${t}`, cluster: `c${c}`, base: u < pi ? 1 : 0, treated: u < pi + lift ? 1 : 0 });
    }
  });
  return { pairs, truth: 0 };
}

/**
 * Seeds that differ: each of `seeds` adapters shifts every task's pass probability by
 * Δ + u_seed, u ~ N(0, seedSd²) (the recipe effect is Δ). `groups` groups of 1–4 tasks with
 * π ~ Beta(2, 2); one base evaluation shared by the seeds, as in the report, or with
 * `baseEachSeed` one per seed (files that re-evaluated the base with every adapter).
 */
export function seedsDraw(
  groups: number,
  seeds: number,
  delta: number,
  seedSd: number,
  seed: number,
  baseEachSeed = false,
): SeededDraw {
  const r = randomSource(seed);
  const shifts = Array.from({ length: seeds }, () => delta + seedSd * r.normal());
  const tasks: SeededDraw["tasks"] = [];
  let given = 0;
  for (let g = 0; g < groups; g++) {
    const pi = r.beta(2, 2);
    const size = 1 + Math.floor(r.rand() * 4);
    for (let t = 0; t < size; t++) {
      const p = Math.min(0.98, Math.max(0.02, pi + 0.1 * r.normal()));
      for (const s of shifts) given += Math.min(1, Math.max(0, p + s)) - p;
      const base = r.bern(p);
      tasks.push({
        taskId: `g${g}t${t}`,
        group: `g${g}`,
        base,
        ...(baseEachSeed ? { baseBySeed: shifts.map(() => r.bern(p)) } : {}),
        bySeed: shifts.map((s) => r.bern(Math.min(1, Math.max(0, p + s)))),
      });
    }
  }
  return { tasks, seeds: shifts.map((_, i) => i), truth: delta, givenTruth: given / (tasks.length * seeds) };
}
