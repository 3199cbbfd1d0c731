import { describe, expect, it } from "vitest";
import { poolSeeds } from "./pooling";
import { seedsDraw } from "./simulate";

// Seeded simulation of the pooled row when the recipe does nothing but seeds differ: each
// adapter shifts every task by u ~ N(0, sd²). The full sweep is `npm run bench -- stats-sim`.

function simulate(reps: number, seeds: number, delta: number, sd: number) {
  let recipe = 0;
  let given = 0;
  let covered = 0;
  for (let r = 0; r < reps; r++) {
    const d = seedsDraw(50, seeds, delta, sd, 90_000 + r * 17 + seeds);
    const p = poolSeeds(d.tasks, d.seeds, { iterations: 200, seed: r, mde: "approximate" }).pooled;
    if (p.significant) recipe++;
    if (p.givenSeeds.significant) given++;
    if (p.ci[0] <= d.truth && d.truth <= p.ci[1]) covered++;
  }
  return { recipe: recipe / reps, given: given / reps, coverage: covered / reps };
}

describe("pooled seeds (simulated)", () => {
  it("recipe Δ = 0, seed sd 12 pp, 3 seeds, 50 groups: 'significant' ≤ 8%; given-seeds over-rejects (positive control)", () => {
    const s = simulate(400, 3, 0, 0.12);
    expect(s.recipe).toBeLessThanOrEqual(0.08);
    expect(s.coverage).toBeGreaterThanOrEqual(0.92);
    expect(s.given).toBeGreaterThan(0.15);
  });
  it("2 seeds are never 'significant' for the recipe, even with a large real effect", () => {
    const s = simulate(60, 2, 0.2, 0);
    expect(s.given).toBeGreaterThan(0.8);
    expect(s.recipe).toBe(0);
  });
});
