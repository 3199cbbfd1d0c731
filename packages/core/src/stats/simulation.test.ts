import { describe, expect, it } from "vitest";
import { clusterBootstrap } from "./bootstrap";
import { clusterPairs } from "./clusters";
import { comparePaired } from "./compare";
import { mcnemarExact } from "./mcnemar";
import { hiddenClustersDraw, reactingGroupsDraw, sparseDraw, type Draw } from "./simulate";

// Seeded simulations of the report's significance rule and interval (the full sweep, with more
// replications, is `npm run bench -- stats-sim`). Sizes here: a few hundred replications and 400
// bootstrap resamples (the report uses 10,000), about a second per scenario.

const ITERATIONS = 400;

function simulate(reps: number, draw: (rep: number) => Draw, bootstrapAlone = false) {
  let significant = 0;
  let covered = 0;
  let naive = 0;
  let bootstrapOnly = 0;
  for (let r = 0; r < reps; r++) {
    const { pairs, truth } = draw(r);
    const c = comparePaired(pairs, { iterations: ITERATIONS, seed: r, mde: "approximate" });
    if (c.significant) significant++;
    if (c.ci[0] <= truth && truth <= c.ci[1]) covered++;
    if (mcnemarExact(c.improved, c.regressed) < 0.05) naive++;
    if (bootstrapAlone) {
      // The interval before exact and score intervals took over: the bootstrap whatever the data.
      const cl = clusterPairs(pairs);
      const b = clusterBootstrap(cl.sums, cl.counts, { iterations: ITERATIONS, seed: r });
      if (b.lo <= truth && truth <= b.hi) bootstrapOnly++;
    }
  }
  return {
    rate: significant / reps,
    coverage: covered / reps,
    naiveRejects: naive / reps,
    bootstrapOnlyCoverage: bootstrapOnly / reps,
  };
}

describe("simulated significance rule and interval (clustered outcomes)", () => {
  it.each([50, 150])(
    "H0 at %i groups: false-positive rate ≤ 6%, interval covers; task-level McNemar over-rejects (positive control)",
    (groups) => {
      const s = simulate(groups > 100 ? 400 : 500, (r) => reactingGroupsDraw(groups, 0.4, 0, r * 1000 + groups));
      expect(s.rate).toBeLessThanOrEqual(0.06);
      expect(s.coverage).toBeGreaterThanOrEqual(0.93);
      // The same data analysed as independent tasks: the problem the clustered test exists for.
      expect(s.naiveRejects).toBeGreaterThan(0.08);
    },
  );
  it.each([20, 50])("a true Δ = 10 pp at %i groups: coverage ≥ 93% and the test has power", (groups) => {
    const s = simulate(400, (r) => reactingGroupsDraw(groups, 0.4, 0.25, r * 1000 + 1000 + groups));
    expect(s.coverage).toBeGreaterThanOrEqual(0.93);
    expect(s.rate).toBeGreaterThan(groups >= 50 ? 0.4 : 0.1);
  });
  it("sparse outcomes (base 3%, +5 pp, 20 tasks): the interval covers where the bootstrap alone did not", () => {
    const s = simulate(500, (r) => sparseDraw(20, 0.03, 0.05, 1, r), true);
    expect(s.coverage).toBeGreaterThanOrEqual(0.95);
    expect(s.bootstrapOnlyCoverage).toBeLessThan(0.9);
    const h0 = simulate(300, (r) => sparseDraw(100, 0.1, 0, 1, 7000 + r));
    expect(h0.rate).toBeLessThanOrEqual(0.06);
    expect(h0.coverage).toBeGreaterThanOrEqual(0.93);
  });
  it("hidden clusters (8 × 20 tasks, ICC 0.9, Δ = 0): declared, the test holds; as singletons it does not", () => {
    const declared = simulate(200, (r) => hiddenClustersDraw(8, 20, 0, 0.9, true, r));
    expect(declared.rate).toBeLessThanOrEqual(0.06);
    expect(declared.coverage).toBeGreaterThanOrEqual(0.93);
    const singletons = simulate(150, (r) => hiddenClustersDraw(8, 20, 0, 0.9, false, r));
    expect(singletons.rate).toBeGreaterThan(0.2);
  });
});
