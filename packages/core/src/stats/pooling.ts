import { DomainError } from "../errors";
import { pairedBootstrap, type BootstrapResult } from "./bootstrap";
import { mcnemarExact } from "./mcnemar";

/** One task under the base model and under each seed's adapter (same order as `seeds`). */
export type SeedTaskOutcome = { taskId: string; group: string; base: number; bySeed: readonly number[] };

export type SeedRow = {
  seed: number;
  n: number;
  basePass: number;
  treatedPass: number;
  delta: number;
  improved: number;
  regressed: number;
  mcnemarP: number;
  interval: BootstrapResult;
};

export type PooledResult = {
  perSeed: SeedRow[];
  /** Mean over seeds of each seed's Δ (equal to the Δ of the seed-averaged outcome per task). */
  pooled: BootstrapResult & { basePass: number; treatedPass: number };
  /** Sample standard deviation of the per-seed Δ; 0 with one seed. */
  seedSd: number;
  method: string;
};

const POOLING_METHOD =
  "Pooled Δ = mean over seeds of Δ_seed. Its interval is a cluster bootstrap over source groups with seeds nested: " +
  "a drawn task brings every seed's outcome, so the interval reflects task sampling given these seeds; seed-to-seed spread is the per-seed table and seedSd.";

/** Per-seed paired statistics and the pooled estimate across seeds (brief §7). */
export function poolSeeds(tasks: readonly SeedTaskOutcome[], seeds: readonly number[], opts: { iterations?: number; seed?: number } = {}): PooledResult {
  for (const t of tasks) {
    if (t.bySeed.length !== seeds.length) throw new DomainError("BAD_REQUEST", `task ${t.taskId} has ${t.bySeed.length} seed outcomes, expected ${seeds.length}`);
  }
  const boot = { iterations: opts.iterations ?? 10_000, seed: opts.seed ?? 0 };
  const byGroup = (p: { group: string }) => p.group;
  const n = tasks.length;
  const basePass = n ? tasks.reduce((s, t) => s + t.base, 0) / n : 0;
  const perSeed = seeds.map((seed, i): SeedRow => {
    const pairs = tasks.map((t) => ({ group: t.group, base: t.base, treated: t.bySeed[i] ?? 0 }));
    const improved = pairs.filter((p) => p.treated > p.base).length;
    const regressed = pairs.filter((p) => p.treated < p.base).length;
    const interval = pairedBootstrap(pairs, { ...boot, clusterBy: byGroup });
    return {
      seed,
      n,
      basePass,
      treatedPass: n ? pairs.reduce((s, p) => s + p.treated, 0) / n : 0,
      delta: interval.mean,
      improved,
      regressed,
      mcnemarP: mcnemarExact(improved, regressed),
      interval,
    };
  });
  const avg = tasks.map((t) => ({ group: t.group, base: t.base, treated: seeds.length ? t.bySeed.reduce((a, b) => a + b, 0) / seeds.length : t.base }));
  const pooled = pairedBootstrap(avg, { ...boot, clusterBy: byGroup });
  const deltas = perSeed.map((r) => r.delta);
  const m = deltas.length ? deltas.reduce((a, b) => a + b, 0) / deltas.length : 0;
  const seedSd = deltas.length > 1 ? Math.sqrt(deltas.reduce((s, d) => s + (d - m) ** 2, 0) / (deltas.length - 1)) : 0;
  return {
    perSeed,
    pooled: { ...pooled, basePass, treatedPass: n ? avg.reduce((s, p) => s + p.treated, 0) / n : 0 },
    seedSd,
    method: POOLING_METHOD,
  };
}
