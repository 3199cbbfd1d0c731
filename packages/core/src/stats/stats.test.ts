import { describe, expect, it } from "vitest";
import { mcnemarExact } from "./mcnemar";
import { clusterBootstrap, expandedZ, studentizedInterval } from "./bootstrap";
import { clusterPairs, clusterSe } from "./clusters";
import { comparePaired, minimumDetectableEffect, significanceLabel } from "./compare";
import { normQuantile, tCdf, tQuantile } from "./distributions";
import { poolSeeds } from "./pooling";
import { deriveSeed, mulberry32, quantileSorted } from "./random";
import { signFlipTest } from "./signflip";

// Exact references with BigInt binomials, independent of the float code under test.
const choose = (n: number, k: number): bigint => {
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
};

describe("mcnemarExact", () => {
  it("matches exact binomial tails", () => {
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(1, 0)).toBe(1);
    expect(mcnemarExact(6, 0)).toBeCloseTo(2 / 64, 14);
    expect(mcnemarExact(10, 2)).toBeCloseTo(79 / 2048, 14); // 2·(1+12+66)/2^12
    expect(mcnemarExact(2, 10)).toBe(mcnemarExact(10, 2));
    const tail = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].reduce((s, i) => s + choose(35, i), 0n);
    expect(mcnemarExact(25, 10)).toBeCloseTo(Number((2n * tail * 10n ** 15n) / 2n ** 35n) / 1e15, 12);
  });
  it("stays finite for large counts", () => {
    const p = mcnemarExact(5000, 4800);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1);
  });
});

describe("distributions", () => {
  it("match tabulated values", () => {
    expect(normQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normQuantile(0.8)).toBeCloseTo(0.841621, 5);
    expect(normQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(tCdf(2.093024, 19)).toBeCloseTo(0.975, 6);
    expect(tCdf(-1, 3)).toBeCloseTo(0.1955011, 6);
    expect(tQuantile(0.975, 19)).toBeCloseTo(2.093024, 5);
    expect(tQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(tQuantile(0.8, 10)).toBeCloseTo(0.879058, 5);
    expect(tQuantile(0.025, 4)).toBeCloseTo(-2.776445, 5);
    expect(tQuantile(0.975, 1e6)).toBeCloseTo(1.959966, 4);
    expect(expandedZ(0.95, 20)).toBeCloseTo(Math.sqrt(20 / 19) * 2.093024, 5);
  });
});

describe("signFlipTest", () => {
  it("gives hand-enumerated exact p-values", () => {
    // Sums 3, 1, 2: of the 8 sign assignments only (+,+,+) and (−,−,−) reach |T| ≥ 6.
    expect(signFlipTest([3, 1, 2])).toMatchObject({ p: 0.25, test: "cluster sign-flip (exact)", nonZeroGroups: 3 });
    // Sums 3, −1, 2 (T = 4): |T| ∈ {6, 4, 4, 6} reach it, 4 of 8.
    expect(signFlipTest([3, -1, 2]).p).toBe(0.5);
    // Zero sums cannot move the statistic and are left out.
    expect(signFlipTest([3, 0, 1, 0, 2]).p).toBe(0.25);
    expect(signFlipTest([0, 0]).p).toBe(1);
    // Pass rates on a lattice (quarters) and off it (× π, enumerated): the same answer.
    expect(signFlipTest([0.5, 0.25, 0.75]).p).toBe(0.25);
    expect(signFlipTest([3, 1, 2].map((x) => x * Math.PI)).p).toBeCloseTo(0.25, 12);
  });
  it("equals exact McNemar on one-task groups, via the lattice DP and via enumeration", () => {
    for (const [b, c] of [
      [10, 2],
      [3, 9],
      [25, 10],
      [0, 5],
      [7, 7],
    ] as const) {
      const sums = [...Array<number>(b).fill(1), ...Array<number>(c).fill(-1), 0];
      expect(signFlipTest(sums).p).toBeCloseTo(mcnemarExact(b, c), 12);
      if (b + c <= 20) expect(signFlipTest(sums.map((x) => x * Math.E)).p).toBeCloseTo(mcnemarExact(b, c), 12);
    }
  });
  it("Monte Carlo agrees with exact enumeration and is seeded", () => {
    const r = mulberry32(5);
    const sums = Array.from({ length: 22 }, (_, i) => (r() - 0.35) * (1 + (i % 4)) * Math.SQRT2);
    const exact = signFlipTest(sums, { maxExactGroups: 22 });
    const mc = signFlipTest(sums, { maxExactGroups: 10, permutations: 20_000, seed: 3 });
    expect(exact.exact).toBe(true);
    expect(mc).toMatchObject({ exact: false, test: "cluster sign-flip (Monte Carlo, 20000)", permutations: 20_000 });
    expect(Math.abs(mc.p - exact.p)).toBeLessThan(0.01);
    expect(signFlipTest(sums, { maxExactGroups: 10, permutations: 20_000, seed: 3 }).p).toBe(mc.p);
    // The +1 correction: an extreme statistic is never given p = 0.
    expect(
      signFlipTest(
        Array.from({ length: 40 }, (_, i) => 1 + i * 1e-3 * Math.PI),
        { permutations: 1000 },
      ).p,
    ).toBeCloseTo(1 / 1001, 12);
  });
});

describe("studentized cluster bootstrap", () => {
  it("computes θ ± q·SE with q the |t*| quantile, floored at the expanded t quantile", () => {
    // |t*| = 0, 0.01, …, 9.99: the 0.95 quantile (type 7) is 9.4905, above the floor.
    const wide = Float64Array.from({ length: 1000 }, (_, i) => ((i % 2 ? 1 : -1) * i) / 100);
    expect(studentizedInterval(0.1, 0.01, wide, 0.95, 50, [-1, 1])).toEqual(
      [0.1 - 9.4905 * 0.01, 0.1 + 9.4905 * 0.01].map((x) => expect.closeTo(x, 12)),
    );
    // A bootstrap that sees no spread cannot narrow the interval below √(g/(g−1))·t_{g−1}.
    const q = expandedZ(0.95, 20);
    expect(studentizedInterval(0.1, 0.01, new Float64Array(1000), 0.95, 20, [-1, 1])).toEqual([
      expect.closeTo(0.1 - q * 0.01, 12),
      expect.closeTo(0.1 + q * 0.01, 12),
    ]);
    // An infinite t* (a resample with no spread that still moved θ) widens to the range.
    const inf = Float64Array.from({ length: 100 }, (_, i) => (i < 10 ? Infinity : 1));
    expect(studentizedInterval(0.1, 0.2, inf, 0.95, 20, [-1, 1])).toEqual([-1, 1]);
  });
  it("on many independent pairs it is the normal interval; it is reproducible", () => {
    const pairs = Array.from({ length: 400 }, (_, i) => ({ group: `g${i}`, base: 0, treated: i % 10 < 3 ? 1 : 0 }));
    const c = clusterPairs(pairs);
    const a = clusterBootstrap(c.sums, c.counts, { iterations: 4000, seed: 7 });
    expect(clusterBootstrap(c.sums, c.counts, { iterations: 4000, seed: 7 })).toEqual(a);
    const half = 1.96 * Math.sqrt((0.3 * 0.7) / 400); // ≈ 0.0449
    expect(a.lo).toBeCloseTo(0.3 - half, 2);
    expect(a.hi).toBeCloseTo(0.3 + half, 2);
    expect(a.reliable).toBe(true);
  });
  it("resamples clusters: correlated groups widen the interval; few groups are unreliable, one is no interval", () => {
    // 20 groups of 10 identical outcomes: effectively 20 observations, not 200.
    const pairs = Array.from({ length: 200 }, (_, i) => ({
      group: `g${Math.floor(i / 10)}`,
      base: 0,
      treated: Math.floor(i / 10) % 2,
    }));
    const flat = clusterPairs(pairs.map((p, i) => ({ ...p, group: `t${i}` })));
    const grouped = clusterPairs(pairs);
    const f = clusterBootstrap(flat.sums, flat.counts, { iterations: 2000, seed: 3 });
    const g = clusterBootstrap(grouped.sums, grouped.counts, { iterations: 2000, seed: 3 });
    expect(g.hi - g.lo).toBeGreaterThan(2.5 * (f.hi - f.lo));
    const few = clusterPairs(pairs.slice(0, 50));
    expect(clusterBootstrap(few.sums, few.counts, { iterations: 500 }).reliable).toBe(false);
    const one = clusterPairs(pairs.slice(0, 10));
    expect(clusterBootstrap(one.sums, one.counts, { iterations: 500 })).toMatchObject({
      lo: -1,
      hi: 1,
      reliable: false,
    });
  });
});

describe("comparePaired", () => {
  it("reports which test ran: exact McNemar only when every group is one 0/1 task", () => {
    const single = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0].map((t, i) => ({ group: `g${i}`, base: 1 - t, treated: t }));
    const r = comparePaired(single, { iterations: 500 });
    expect(r).toMatchObject({ test: "exact McNemar", n: 12, groups: 12, improved: 10, regressed: 2 });
    expect(r.p).toBeCloseTo(mcnemarExact(10, 2), 14);
    expect(r.delta).toBeCloseTo(8 / 12, 14);
    const grouped = single.map((p, i) => ({ ...p, group: `g${i % 6}` }));
    expect(comparePaired(grouped, { iterations: 500 }).test).toBe("cluster sign-flip (exact)");
    const rates = single.map((p) => ({ ...p, treated: p.treated * 0.75 }));
    expect(comparePaired(rates, { iterations: 500 }).test).toBe("cluster sign-flip (exact)");
  });
  it("labels significant only when the test and the interval agree", () => {
    const r = mulberry32(11);
    for (let k = 0; k < 60; k++) {
      const pairs = Array.from({ length: 40 }, (_, i) => ({
        group: `g${i % 15}`,
        base: r() < 0.4 ? 1 : 0,
        treated: r() < 0.4 + k / 150 ? 1 : 0,
      }));
      const c = comparePaired(pairs, { iterations: 400, seed: k });
      expect(c.significant).toBe(c.p < 0.05 && (c.ci[0] > 0 || c.ci[1] < 0));
      expect(significanceLabel(c).startsWith(c.significant ? "significant" : "not significant")).toBe(true);
    }
  });
  it("states the minimum detectable effect from the cluster-level SE", () => {
    // Group sums 1, 0, −1, 2 over one task each: Δ = 0.5, residuals ±0.5, ±1.5, SE = √(4/3 · 5) / 4.
    expect(clusterSe([1, 0, -1, 2], [1, 1, 1, 1])).toBeCloseTo(Math.sqrt((4 / 3) * 5) / 4, 14);
    expect(minimumDetectableEffect(0.05, 31)).toBeCloseTo((tQuantile(0.975, 30) + tQuantile(0.8, 30)) * 0.05, 14);
    expect(minimumDetectableEffect(0, 31)).toBeNull();
    const pairs = Array.from({ length: 90 }, (_, i) => ({
      group: `g${i % 30}`,
      base: i % 3 === 0 ? 1 : 0,
      treated: i % 4 === 0 ? 1 : 0,
    }));
    const c = comparePaired(pairs, { iterations: 500, mde: "approximate" });
    const cl = clusterPairs(pairs);
    expect(c.mdeMethod).toBe("approximate");
    expect(c.mde).toBeCloseTo((tQuantile(0.975, 29) + tQuantile(0.8, 29)) * clusterSe(cl.sums, cl.counts), 12);
    expect(significanceLabel(c)).toMatch(/could detect only \|Δ\| ≥ \d+\.\d pp at 80% power/);
  });
  it("refuses outcomes outside [0, 1]", () => {
    expect(() => comparePaired([{ group: "g", base: 2, treated: 0 }])).toThrow(/\[0, 1\]/);
    expect(() => comparePaired([{ group: "g", base: Number.NaN, treated: 0 }])).toThrow();
  });
});

describe("poolSeeds", () => {
  const tasks = (deltaBySeed: readonly number[]) =>
    Array.from({ length: 120 }, (_, i) => ({
      taskId: `t${i}`,
      group: `g${i % 40}`,
      base: i % 2,
      bySeed: deltaBySeed.map((d, s) => ((i * 7 + s * 13) % 100 < 50 + 100 * d ? 1 : 0)),
    }));
  it("gives every seed the clustered comparison and pools Δ as the mean over seeds", () => {
    const t = tasks([0.2, 0.1]);
    const r = poolSeeds(t, [3, 5], { iterations: 500, seed: 1 });
    expect(r.perSeed.map((s) => s.seed)).toEqual([3, 5]);
    const d = r.perSeed.map((s) => s.stats.delta);
    expect(r.pooled.delta).toBeCloseTo(((d[0] ?? 0) + (d[1] ?? 0)) / 2, 12);
    expect(r.spread).toEqual({
      sd: expect.closeTo(Math.abs((d[0] ?? 0) - (d[1] ?? 0)) / Math.SQRT2, 12),
      min: Math.min(...d),
      max: Math.max(...d),
    });
    expect(r.perSeed[0]?.stats.test).toBe("cluster sign-flip (exact)");
    expect(() => poolSeeds([{ taskId: "x", group: "g", base: 0, bySeed: [1] }], [0, 1])).toThrow();
  });
  it("puts seed variance inside the pooled test and interval (≥ 3 seeds)", () => {
    // About the same pooled Δ, once from agreeing seeds, once from seeds that disagree.
    const agree = tasks([0.3, 0.3, 0.3]);
    const disagree = tasks([0.5, 0, 0.4]);
    const a = poolSeeds(agree, [1, 2, 3], { iterations: 2000 });
    const b = poolSeeds(disagree, [1, 2, 3], { iterations: 2000 });
    expect(b.spread.sd).toBeGreaterThan(0.2);
    expect(a.pooled).toMatchObject({ scope: "recipe", intervalMethod: "seeds-t", significant: true });
    expect(b.pooled.ci[1] - b.pooled.ci[0]).toBeGreaterThan(1.5 * (a.pooled.ci[1] - a.pooled.ci[0]));
    // Given these seeds the disagreeing adapters still look better than the base; for the recipe they do not.
    expect(b.pooled.givenSeeds.significant).toBe(true);
    expect(b.pooled.significant).toBe(false);
    expect(b.pooled.p).toBeGreaterThanOrEqual(b.pooled.givenSeeds.p);
    expect(b.pooled.df).toBeGreaterThan(1);
  });
  it("with fewer than 3 seeds speaks only for the given seeds and is never significant", () => {
    const r = poolSeeds(tasks([0.3, 0.3]), [1, 2], { iterations: 500 });
    expect(r.pooled.givenSeeds.significant).toBe(true);
    expect(r.pooled).toMatchObject({ scope: "given-seeds", significant: false, df: null, seeds: 2 });
    expect(r.pooled.ci).toEqual(r.pooled.givenSeeds.ci);
  });
});

describe("random helpers", () => {
  it("mulberry32 is seeded and uniform-ish; streams differ; quantiles interpolate like numpy", () => {
    const r = mulberry32(42);
    const xs = Array.from({ length: 10000 }, () => r());
    expect(mulberry32(42)()).toBe(xs[0]);
    expect(xs.reduce((a, b) => a + b, 0) / xs.length).toBeCloseTo(0.5, 1);
    expect(new Set([0, 1, 2, 3].map((s) => deriveSeed(7, s))).size).toBe(4);
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([0, 10], 0.025)).toBeCloseTo(0.25, 12);
  });
});
