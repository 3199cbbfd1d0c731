import { clusterPairs } from "../stats/clusters";
import { clusteredTest, MDE_SIMULATION } from "../stats/compare";
import { simulatedMde, type DiscordanceModel } from "../stats/mde";
import { MIN_RECIPE_SEEDS } from "../stats/pooling";
import { pairedInterval } from "../stats/paired-interval";
import { deriveSeed } from "../stats/random";

// Power before cost: for each primary contrast, the smallest test-set difference the study's rule
// would call significant in 80% of runs, simulated (stats/mde.ts) over the split's real test units
// under the definition's assumptions (share of tasks whose outcome changes between two arms, and
// the correlation of those changes within a unit). Holm tests the smallest p at α/m and the
// largest at α, so both ends are shown.

export type PlannedContrast = {
  arms: [string, string];
  /** At α/m (Holm's first step: what a contrast must beat when it is the strongest). */
  mdeHolm: number | null;
  /** At α (Holm's last step). */
  mdeAlpha: number | null;
};

export type StudyPowerPlan = {
  power: number;
  alpha: number;
  testTasks: number;
  units: number;
  unit: "cluster" | "source_group";
  samplesPerTask: number;
  seeds: number;
  assumptions: { changeRate: number; withinUnitCorrelation: number };
  contrasts: PlannedContrast[];
  /** Why a figure is missing, or what it assumes. */
  notes: string[];
};

export type PlanInput = {
  testTasks: { group: string; cluster?: string | undefined }[];
  contrasts: { arms: [string, string] }[];
  alpha: number;
  power?: number;
  seeds: number;
  samplesPerTask: number;
  changeRate: number;
  withinUnitCorrelation: number;
  seed?: number;
};

/** Bisection halvings: 1/1024 resolution (the report's 6 start from a data-driven hint; a plan has none). */
const PLAN_STEPS = 10;

function mdeAt(model: DiscordanceModel, alpha: number, power: number, seed: number): number | null {
  const m = MDE_SIMULATION;
  // The rule of every report (compare.ts): the clustered test AND the interval excluding 0.
  return simulatedMde(
    model,
    (sim, rep) => {
      const s = deriveSeed(seed, 100 + rep);
      if (clusteredTest(sim, m.permutations, s).p >= alpha) return false;
      const ci = pairedInterval(sim, 1 - alpha, m.iterations, deriveSeed(s, 1)).ci;
      return ci[0] > 0 || ci[1] < 0;
    },
    { reps: m.reps, steps: PLAN_STEPS, power, seed: deriveSeed(seed, 4) },
  );
}

export function planStudyPower(i: PlanInput): StudyPowerPlan {
  const power = i.power ?? 0.8;
  const c = clusterPairs(i.testTasks.map((t) => ({ group: t.group, cluster: t.cluster, base: 0, treated: 0 })));
  const model: DiscordanceModel = {
    sizes: Array.from(c.counts),
    rate: i.changeRate,
    rho: Math.sqrt(i.withinUnitCorrelation),
  };
  const notes = [
    "Simulated for one 0/1 outcome per task and arm; averaging more samples per task or seeds lowers the noise within a task, not the task-to-task variation assumed here, so the figures are conservative for them.",
  ];
  const m = i.contrasts.length;
  let holm: number | null = null;
  let plain: number | null = null;
  if (i.seeds < MIN_RECIPE_SEEDS)
    notes.push(
      `With ${i.seeds} seed${i.seeds === 1 ? "" : "s"} (fewer than ${MIN_RECIPE_SEEDS}) a contrast holds given these seeds only and is never labelled significant: no effect is detectable.`,
    );
  else if (c.n === 0) notes.push("The split has no test task.");
  else {
    const seed = i.seed ?? 0;
    holm = mdeAt(model, i.alpha / m, power, seed);
    plain = m === 1 ? holm : mdeAt(model, i.alpha, power, seed);
    if (holm === null) notes.push(`Even Δ = 100 pp is not detected at ${100 * power}% power with ${c.groups} units.`);
  }
  return {
    power,
    alpha: i.alpha,
    testTasks: c.n,
    units: c.groups,
    unit: c.unit,
    samplesPerTask: i.samplesPerTask,
    seeds: i.seeds,
    assumptions: { changeRate: i.changeRate, withinUnitCorrelation: i.withinUnitCorrelation },
    contrasts: i.contrasts.map((x) => ({ arms: x.arms, mdeHolm: holm, mdeAlpha: plain })),
    notes,
  };
}
