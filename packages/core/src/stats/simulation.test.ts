import { describe, expect, it } from "vitest";
import { comparePaired } from "./compare";
import { mcnemarExact } from "./mcnemar";
import { mulberry32 } from "./random";
import type { PairedInput } from "./clusters";

// Seeded simulations of the report's significance rule and interval. Outcomes are clustered by
// source group: each group has its own pass probability π ~ Beta(2, 2), 1–6 variants, and reacts to
// training as a whole: with probability ½ + η training "fixes" it (a failing variant passes with
// probability τ), otherwise it "breaks" it (a passing variant fails with probability τ). Since
// E[π] = ½ the true Δ is τ·η exactly; with η = 0 the mean effect is zero although every group
// moves, the case where task-level McNemar over-rejects. Sizes: 800 replications, 600 bootstrap
// resamples (the report uses 10,000), about 3 s in all.

const REPS = 800;
const ITERATIONS = 600;

function simulate(groups: number, tau: number, eta: number, seed: number) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  // Marsaglia–Tsang gamma (shape ≥ 1), for the Beta draw.
  const gamma = (k: number): number => {
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
  let significant = 0;
  let covered = 0;
  let naive = 0;
  for (let r = 0; r < REPS; r++) {
    const pairs: PairedInput[] = [];
    for (let g = 0; g < groups; g++) {
      const x = gamma(2);
      const pi = x / (x + gamma(2));
      const fix = rand() < 0.5 + eta;
      const variants = 1 + Math.floor(rand() * 6);
      for (let t = 0; t < variants; t++) {
        const base = rand() < pi ? 1 : 0;
        const treated = fix ? (base || rand() < tau ? 1 : 0) : base && rand() >= tau ? 1 : 0;
        pairs.push({ group: `g${g}`, base, treated });
      }
    }
    const c = comparePaired(pairs, { iterations: ITERATIONS, seed: r });
    if (c.significant) significant++;
    if (c.ci[0] <= tau * eta && tau * eta <= c.ci[1]) covered++;
    if (mcnemarExact(c.improved, c.regressed) < 0.05) naive++;
  }
  return {
    falsePositive: significant / REPS,
    coverage: covered / REPS,
    naiveRejects: naive / REPS,
    power: significant / REPS,
  };
}

describe("simulated significance rule and interval (clustered outcomes)", () => {
  it.each([50, 150])(
    "H0 at %i groups: false-positive rate ≤ 6%, interval covers; task-level McNemar over-rejects (positive control)",
    (groups) => {
      const s = simulate(groups, 0.4, 0, groups);
      expect(s.falsePositive).toBeLessThanOrEqual(0.06);
      expect(s.coverage).toBeGreaterThanOrEqual(0.93);
      // The same data analysed as independent tasks: the problem the clustered test exists for.
      expect(s.naiveRejects).toBeGreaterThan(0.08);
    },
  );
  it.each([20, 50])("a true Δ = 10 pp at %i groups: coverage ≥ 93% and the test has power", (groups) => {
    const s = simulate(groups, 0.4, 0.25, 1000 + groups);
    expect(s.coverage).toBeGreaterThanOrEqual(0.93);
    expect(s.power).toBeGreaterThan(groups >= 50 ? 0.4 : 0.1);
  });
});
