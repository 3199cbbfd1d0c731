import { describe, expect, it } from "vitest";
import { comparePaired } from "./compare";
import { passAtK, passAtKRows, passRateOf, reportedKs } from "./passk";
import { mulberry32 } from "./random";
import { rateChangeHistogram, ratePairs, samplesMde, type TaskRatePair } from "./rates";

// Exact reference with BigInt binomials, independent of the product form under test.
const choose = (n: number, k: number): bigint => {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
};
const exactPassAtK = (n: number, c: number, k: number) =>
  1 - Number((choose(n - c, k) * 10n ** 15n) / choose(n, k)) / 1e15;

describe("passAtK (Chen et al. 2021, unbiased)", () => {
  it("matches hand-computed values", () => {
    // 1 − C(7,5)/C(10,5) = 1 − 21/252
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 14);
    expect(passAtK(10, 3, 5)).toBeCloseTo(0.9167, 4);
    // 1 − C(3,2)/C(4,2) = 1 − 3/6
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 14);
    expect(passAtK(10, 0, 5)).toBe(0);
    // Fewer wrong answers than k: every draw of k holds a correct one.
    expect(passAtK(10, 6, 5)).toBe(1);
    expect(passAtK(1, 1, 1)).toBe(1);
  });
  it("is c/n at k = 1 and agrees with exact binomials up to n = 200", () => {
    for (const [n, c] of [
      [7, 3],
      [20, 1],
      [200, 37],
    ] as const) {
      expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 14);
      for (const k of [2, 5, 10, 50]) if (k <= n) expect(passAtK(n, c, k)).toBeCloseTo(exactPassAtK(n, c, k), 12);
    }
  });
  it("stays finite and monotone in k at n = 1000", () => {
    const xs = [1, 5, 10, 100].map((k) => passAtK(1000, 3, k));
    for (const x of xs) expect(Number.isFinite(x)).toBe(true);
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
  });
  it("refuses impossible counts and k", () => {
    expect(() => passAtK(5, 6, 1)).toThrow(/exceeds/);
    expect(() => passAtK(5, 2, 6)).toThrow(/1 ≤ k ≤ n/);
    expect(() => passAtK(0, 0, 1)).toThrow(/samples ≥ 1/);
    expect(() => passAtK(4, 1.5, 1)).toThrow(/integers/);
  });
  it("reports k = 1, 5, 10 where the smallest sample count allows, pass@1 the mean pass rate", () => {
    expect(reportedKs(1)).toEqual([1]);
    expect(reportedKs(4)).toEqual([1]);
    expect(reportedKs(10)).toEqual([1, 5, 10]);
    const rows = passAtKRows([
      { samples: 10, correct: 3 },
      { samples: 10, correct: 0 },
      { samples: 10, correct: 10 },
    ]);
    expect(rows.map((r) => r.k)).toEqual([1, 5, 10]);
    expect(rows[0]?.value).toBeCloseTo((0.3 + 0 + 1) / 3, 14);
    expect(rows[1]?.value).toBeCloseTo((1 - 21 / 252 + 0 + 1) / 3, 14);
    // One task lost a sample's verdict: k stops at its count.
    expect(
      passAtKRows([
        { samples: 10, correct: 3 },
        { samples: 9, correct: 3 },
      ]).map((r) => r.k),
    ).toEqual([1, 5]);
    expect(passAtKRows([])).toEqual([]);
    expect(passRateOf({ samples: 4, correct: 3 })).toBe(0.75);
  });
});

describe("per-task rates as the paired quantity", () => {
  const draw = (r: () => number, p: number, n: number) => {
    let c = 0;
    for (let i = 0; i < n; i++) if (r() < p) c++;
    return { samples: n, correct: c };
  };
  /** 60 tasks in 20 groups; each task's true pass rate under both models, the treated one +gain. */
  const design = (seed: number, n: number, gain: number): TaskRatePair[] => {
    const r = mulberry32(seed);
    return Array.from({ length: 60 }, (_, i) => {
      const p = 0.15 + 0.7 * r();
      return { group: `g${i % 20}`, base: draw(r, p, n), treated: draw(r, Math.min(1, p + gain), n) };
    });
  };
  it("compares rates with the clustered sign-flip test; Δ is the mean rate difference", () => {
    const tasks = design(3, 4, 0.1);
    const pairs = ratePairs(tasks);
    const c = comparePaired(pairs, { iterations: 500 });
    const mean = tasks.reduce((s, t) => s + t.treated.correct / 4 - t.base.correct / 4, 0) / tasks.length;
    expect(c.delta).toBeCloseTo(mean, 14);
    expect(c.test).toMatch(/^cluster sign-flip/);
    expect(c.n).toBe(60);
    expect(c.groups).toBe(20);
  });
  it("gives a narrower interval with 8 samples than with 1 from the same true rates", () => {
    let narrower = 0;
    for (let s = 0; s < 10; s++) {
      const one = comparePaired(ratePairs(design(100 + s, 1, 0.1)), { iterations: 300, seed: s });
      const eight = comparePaired(ratePairs(design(100 + s, 8, 0.1)), { iterations: 300, seed: s });
      if (eight.ci[1] - eight.ci[0] < one.ci[1] - one.ci[0]) narrower++;
    }
    expect(narrower).toBeGreaterThanOrEqual(9);
  });
  it("projects the one-sample MDE close to what one sample actually gives", () => {
    // Positive control for the projection: its SE, averaged over replications, matches the SE of
    // real one-sample draws of the same design (within 10%), and is larger than the n-sample SE.
    let projected = 0;
    let actual = 0;
    let asRun = 0;
    const reps = 200;
    for (let s = 0; s < reps; s++) {
      const m = samplesMde(design(1000 + s, 8, 0.05));
      projected += m.seOneSample / reps;
      asRun += m.se / reps;
      actual += samplesMde(design(5000 + s, 1, 0.05)).se / reps;
    }
    expect(projected / actual).toBeGreaterThan(0.9);
    expect(projected / actual).toBeLessThan(1.1);
    expect(asRun).toBeLessThan(0.75 * projected);
  });
  it("with one sample the projection is the MDE as run", () => {
    const m = samplesMde(design(7, 1, 0.1));
    expect(m.samples).toBe(1);
    expect(m.mdeOneSample).toBe(m.mde);
    expect(m.seOneSample).toBeCloseTo(m.se, 15);
  });
  it("histograms the per-task rate changes in exact 1/n bins", () => {
    const h = rateChangeHistogram([0.25, 0.25, -0.5, 0, 1, -1, 0.25], 4);
    expect(h.map((b) => b.change)).toEqual([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1]);
    expect(h.map((b) => b.count)).toEqual([1, 0, 1, 0, 1, 3, 0, 0, 1]);
    expect(() => rateChangeHistogram([1.5], 4)).toThrow(/\[−1, 1\]/);
    expect(() => rateChangeHistogram([0], 0)).toThrow(/resolution/);
  });
});
