import { describe, expect, it } from "vitest";
import { passAtK, meanPassAtK } from "./passk";
import { mcnemarExact } from "./mcnemar";
import { pairedBootstrap } from "./bootstrap";
import { mulberry32, quantileSorted } from "./random";
import { poolSeeds } from "./pooling";

// Exact references with BigInt binomials, independent of the float code under test.
const choose = (n: number, k: number): bigint => {
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
};
const exactPassAtK = (n: number, c: number, k: number) => (n - c < k ? 1 : 1 - Number((choose(n - c, k) * 10n ** 15n) / choose(n, k)) / 1e15);

describe("passAtK", () => {
  it("matches hand-computed values", () => {
    expect(passAtK(10, 0, 1)).toBe(0);
    expect(passAtK(10, 10, 1)).toBe(1);
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    expect(passAtK(10, 3, 2)).toBeCloseTo(1 - 21 / 45, 12);
    expect(passAtK(5, 2, 4)).toBe(1); // fewer failures than k: some pick must pass
  });
  it("agrees with exact binomials for large n", () => {
    for (const [n, c, k] of [[200, 13, 10], [1000, 1, 100], [500, 250, 5]] as const) {
      expect(passAtK(n, c, k)).toBeCloseTo(exactPassAtK(n, c, k), 10);
    }
  });
  it("averages over tasks and refuses nonsense", () => {
    expect(meanPassAtK([{ n: 1, c: 1 }, { n: 1, c: 0 }], 1)).toBe(0.5);
    expect(() => passAtK(3, 4, 1)).toThrow();
    expect(() => passAtK(3, 1, 4)).toThrow();
  });
});

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

describe("pairedBootstrap", () => {
  it("degenerates to the mean when every difference is equal", () => {
    const r = pairedBootstrap(Array.from({ length: 20 }, () => ({ base: 0, treated: 1 })), { iterations: 500, seed: 1 });
    expect(r).toMatchObject({ mean: 1, lo: 1, hi: 1, n: 20, units: 20 });
  });
  it("gives the normal-approximation width on a large sample, reproducibly", () => {
    const pairs = Array.from({ length: 400 }, (_, i) => ({ base: 0, treated: i % 10 < 3 ? 1 : 0 }));
    const a = pairedBootstrap(pairs, { iterations: 4000, seed: 7 });
    const b = pairedBootstrap(pairs, { iterations: 4000, seed: 7 });
    expect(a).toEqual(b);
    expect(a.mean).toBeCloseTo(0.3, 12);
    const half = 1.96 * Math.sqrt((0.3 * 0.7) / 400); // ≈ 0.0449
    expect(a.lo).toBeGreaterThan(0.3 - half - 0.01);
    expect(a.lo).toBeLessThan(0.3 - half + 0.01);
    expect(a.hi).toBeGreaterThan(0.3 + half - 0.01);
    expect(a.hi).toBeLessThan(0.3 + half + 0.01);
  });
  it("resamples clusters: correlated groups widen the interval, one group collapses it", () => {
    // 20 groups of 10 identical outcomes: effectively 20 observations, not 200.
    const pairs = Array.from({ length: 200 }, (_, i) => ({ group: `g${Math.floor(i / 10)}`, base: 0, treated: Math.floor(i / 10) % 2 }));
    const flat = pairedBootstrap(pairs, { iterations: 3000, seed: 3 });
    const clustered = pairedBootstrap(pairs, { iterations: 3000, seed: 3, clusterBy: (p) => p.group });
    expect(clustered.units).toBe(20);
    expect(clustered.mean).toBe(flat.mean);
    expect(clustered.hi - clustered.lo).toBeGreaterThan(2 * (flat.hi - flat.lo));
    const one = pairedBootstrap(pairs, { iterations: 200, seed: 3, clusterBy: () => "all" });
    expect([one.lo, one.hi]).toEqual([0.5, 0.5]);
  });
  it("handles the empty case", () => {
    expect(pairedBootstrap([], { iterations: 10 })).toMatchObject({ mean: 0, n: 0 });
  });
});

describe("random helpers", () => {
  it("mulberry32 is seeded and uniform-ish; quantiles interpolate like numpy", () => {
    const r = mulberry32(42);
    const xs = Array.from({ length: 10000 }, () => r());
    expect(mulberry32(42)()).toBe(xs[0]);
    expect(xs.reduce((a, b) => a + b, 0) / xs.length).toBeCloseTo(0.5, 1);
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([0, 10], 0.025)).toBeCloseTo(0.25, 12);
  });
});

describe("poolSeeds", () => {
  it("builds the per-seed table and pools Δ as the mean over seeds", () => {
    const tasks = Array.from({ length: 10 }, (_, i) => ({ taskId: `t${i}`, group: `g${i}`, base: i < 4 ? 1 : 0, bySeed: [i < 6 ? 1 : 0, i < 5 || i === 9 ? 1 : 0] }));
    const r = poolSeeds(tasks, [0, 1], { iterations: 500, seed: 1 });
    expect(r.perSeed.map((s) => [s.seed, s.basePass, s.treatedPass, s.improved, s.regressed])).toEqual([
      [0, 0.4, 0.6, 2, 0],
      [1, 0.4, 0.6, 2, 0],
    ]);
    expect(r.perSeed[0]?.delta).toBeCloseTo(0.2, 12);
    expect(r.pooled.mean).toBeCloseTo(0.2, 12);
    expect(r.pooled.treatedPass).toBeCloseTo(0.6, 12);
    expect(r.seedSd).toBeCloseTo(0, 12);
    expect(r.perSeed[0]?.mcnemarP).toBeCloseTo(0.5, 12);
    expect(() => poolSeeds([{ taskId: "x", group: "g", base: 0, bySeed: [1] }], [0, 1])).toThrow();
  });
});
