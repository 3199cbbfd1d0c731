// `npm run bench -- stats-sim`: the seeded simulations of false-positive rate, coverage and power
// behind docs/status.md's statistics figures, through the function `agentlab stats compare` runs
// per comparison (compareFileComparison: comparePaired, or poolSeeds with seeds). Replications
// per scenario: BENCH_STATS_REPS (default 1000); bootstrap resamples: BENCH_STATS_ITERATIONS
// (default 2000; the report uses 10,000). Prints one line per scenario on stderr and one JSON line.
import {
  clusterPairs,
  compareClusters,
  compareFileComparison,
  drawDiscordance,
  fitDiscordance,
  mulberry32,
  ratesDraw,
  unequalClustersDraw,
  hiddenClustersDraw,
  reactingGroupsDraw,
  seedsDraw,
  sparseDraw,
  type Draw,
  type FileComparison,
  type SeededDraw,
} from "@agentlab/core";

const REPS = Number(process.env.BENCH_STATS_REPS ?? 1000);
const ITERATIONS = Number(process.env.BENCH_STATS_ITERATIONS ?? 2000);

type Scenario = { name: string; h0: boolean; draw: (rep: number) => Draw | SeededDraw };

const scenarios: Scenario[] = [
  { name: "sparse: base 3%, +5 pp, 20 singleton tasks", h0: false, draw: (r) => sparseDraw(20, 0.03, 0.05, 1, r) },
  { name: "sparse H0: base 3%, 20 singleton tasks", h0: true, draw: (r) => sparseDraw(20, 0.03, 0, 1, r) },
  { name: "no changes possible: base 0%, 32 singletons", h0: true, draw: (r) => sparseDraw(32, 0, 0, 1, r) },
  {
    name: "sparse: base 5%, +3 pp, 100 tasks in groups of 5",
    h0: false,
    draw: (r) => sparseDraw(100, 0.05, 0.03, 5, r),
  },
  { name: "H0: base 10%, 100 singletons", h0: true, draw: (r) => sparseDraw(100, 0.1, 0, 1, r) },
  ...[10, 20, 50, 150].map((g) => ({
    name: `reacting groups H0: ${g} groups of 1–6 tasks`,
    h0: true,
    draw: (r: number) => reactingGroupsDraw(g, 0.4, 0, 1e6 + r * 997 + g),
  })),
  ...[20, 50].map((g) => ({
    name: `reacting groups: +10 pp, ${g} groups`,
    h0: false,
    draw: (r: number) => reactingGroupsDraw(g, 0.4, 0.25, 2e6 + r * 997 + g),
  })),
  ...[true, false].map((declare) => ({
    name: `hidden clusters H0: 8 × 20 tasks, ICC 0.9, ${declare ? "declared" : "declared as singletons"}`,
    h0: true,
    draw: (r: number) => hiddenClustersDraw(8, 20, 0, 0.9, declare, 3e6 + r),
  })),
  {
    name: "hidden clusters H0: 20 × 8 tasks, ICC 0.9, declared",
    h0: true,
    draw: (r) => hiddenClustersDraw(20, 8, 0, 0.9, true, 4e6 + r),
  },
  {
    name: "hidden clusters: +5 pp, 20 × 8 tasks, ICC 0.5, declared",
    h0: false,
    draw: (r) => hiddenClustersDraw(20, 8, 0.05, 0.5, true, 5e6 + r),
  },
  ...[0.06, 0.12].map((sd) => ({
    name: `seeds H0: 3 seeds, seed sd ${100 * sd} pp, 50 groups`,
    h0: true,
    draw: (r: number) => seedsDraw(50, 3, 0, sd, 6e6 + r * 31),
  })),
  {
    name: "seeds H0: 5 seeds, seed sd 12 pp, 50 groups",
    h0: true,
    draw: (r) => seedsDraw(50, 5, 0, 0.12, 7e6 + r * 31),
  },
  {
    name: "seeds H0: 2 seeds, seed sd 12 pp, 50 groups",
    h0: true,
    draw: (r) => seedsDraw(50, 2, 0, 0.12, 8e6 + r * 31),
  },
  {
    name: "seeds H0: 3 seeds, seed sd 12 pp, 50 groups, base evaluated per seed",
    h0: true,
    draw: (r) => seedsDraw(50, 3, 0, 0.12, 9.5e6 + r * 31, true),
  },
  { name: "pass rates (4 samples) H0: 60 groups of 1–3 tasks", h0: true, draw: (r) => ratesDraw(60, 4, 1.1e7 + r) },
  {
    name: "unequal clusters H0: 4 × 30 tasks + 40 singletons, ICC 0.8, declared",
    h0: true,
    draw: (r) => unequalClustersDraw(4, 30, 40, 1.2e7 + r),
  },
  {
    name: "seeds: +15 pp, 3 seeds, seed sd 0, 50 groups",
    h0: false,
    draw: (r) => seedsDraw(50, 3, 0.15, 0, 9e6 + r * 31),
  },
];

function asComparison(d: Draw | SeededDraw): FileComparison {
  if ("pairs" in d) return { name: "sim", kind: "paired", pairs: d.pairs };
  return { name: "sim", kind: "seeded", seeds: d.seeds.map(String), tasks: d.tasks, excluded: 0 };
}

const results: Record<string, unknown>[] = [];
const t0 = performance.now();
for (const s of scenarios) {
  let significant = 0;
  let covered = 0;
  let width = 0;
  const methods: Record<string, number> = {};
  for (let r = 0; r < REPS; r++) {
    const d = s.draw(r);
    const out = compareFileComparison(asComparison(d), { iterations: ITERATIONS, seed: r, mde: "approximate" });
    if (out.significant) significant++;
    // A "given-seeds" row estimates these seeds' own mean change, not the recipe's.
    const truth = "scope" in out && out.scope === "given-seeds" && "givenTruth" in d ? d.givenTruth : d.truth;
    if (out.interval[0] <= truth && truth <= out.interval[1]) covered++;
    width += out.interval[1] - out.interval[0];
    methods[out.interval_method] = (methods[out.interval_method] ?? 0) + 1;
  }
  const row = {
    scenario: s.name,
    [s.h0 ? "falsePositive" : "power"]: significant / REPS,
    coverage: covered / REPS,
    meanWidthPp: Number(((100 * width) / REPS).toFixed(1)),
    methods,
  };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  results.push(row);
}
// The MDE: fitted to one data set of each design, then the rule's power at that Δ counted on
// fresh draws from the fitted model, for the simulated MDE and for the t formula.
const mdes: Record<string, unknown>[] = [];
const designs: [string, Draw][] = [
  ["sparse: base 3%, +5 pp, 20 singletons", sparseDraw(20, 0.03, 0.05, 1, 5)],
  ["sparse: base 3%, +5 pp, 40 singletons", sparseDraw(40, 0.03, 0.05, 1, 5)],
  ["sparse: base 5%, +3 pp, 100 tasks in groups of 5", sparseDraw(100, 0.05, 0.03, 5, 3)],
  ["reacting groups: 50 groups", reactingGroupsDraw(50, 0.4, 0.1, 3)],
];
for (const [name, d] of designs) {
  const c = clusterPairs(d.pairs);
  const m = fitDiscordance(c);
  const powerAt = (delta: number | null) => {
    if (delta === null) return null;
    let hits = 0;
    for (let r = 0; r < REPS; r++) {
      const sim = drawDiscordance(m, delta, mulberry32(1e7 + r));
      if (compareClusters(sim, { iterations: ITERATIONS, seed: r, mde: "approximate" }).significant) hits++;
    }
    return hits / REPS;
  };
  const simulated = compareClusters(c, { iterations: ITERATIONS }).mde;
  const formula = compareClusters(c, { iterations: ITERATIONS, mde: "approximate" }).mde;
  const row = {
    design: name,
    simulatedMde: simulated,
    powerAtSimulated: powerAt(simulated),
    formulaMde: formula,
    powerAtFormula: powerAt(formula),
  };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  mdes.push(row);
}
console.log(
  JSON.stringify({
    bench: "stats-sim",
    reps: REPS,
    iterations: ITERATIONS,
    s: Number(((performance.now() - t0) / 1000).toFixed(1)),
    scenarios: results,
    mde: mdes,
  }),
);
