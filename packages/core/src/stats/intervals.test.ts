import { describe, expect, it } from "vitest";
import { clusterPairs, type PairedInput } from "./clusters";
import { comparePaired } from "./compare";
import { normQuantile } from "./distributions";
import { MIN_BOOTSTRAP_UNITS, pairedInterval, rateInterval } from "./paired-interval";
import { noEventUpperBound, scoreIntervalWithDesignEffect, tangoInterval, tangoStatistic } from "./score";

const z = normQuantile(0.975);
const singletons = (improved: number, regressed: number, same: number): PairedInput[] => [
  ...Array.from({ length: improved }, (_, i) => ({ group: `i${i}`, base: 0, treated: 1 })),
  ...Array.from({ length: regressed }, (_, i) => ({ group: `r${i}`, base: 1, treated: 0 })),
  ...Array.from({ length: same }, (_, i) => ({ group: `s${i}`, base: i % 2, treated: i % 2 })),
];

describe("exact and score intervals", () => {
  it("bounds |Δ| exactly when no outcome changed: 32 singletons give ±10.9 pp", () => {
    expect(noEventUpperBound(32, 0.025)).toBeCloseTo(1 - Math.exp(Math.log(0.025) / 32), 14);
    expect(noEventUpperBound(32, 0.025)).toBeCloseTo(0.1089, 4);
    // P(no event in 32 | rate = bound) = α/2 exactly: the Clopper–Pearson definition.
    expect((1 - noEventUpperBound(32, 0.025)) ** 32).toBeCloseTo(0.025, 12);
    const c = comparePaired(singletons(0, 0, 32), { iterations: 500 });
    expect(c).toMatchObject({ intervalMethod: "exact-no-discordance", significant: false, p: 1 });
    expect(c.ci).toEqual([expect.closeTo(-0.1089, 4), expect.closeTo(0.1089, 4)]);
  });
  it("Tango's statistic is McNemar's score at Δ0 = 0 and its interval has the closed form at b = c = 0", () => {
    expect(tangoStatistic(9, 3, 40, 0)).toBeCloseTo(6 / Math.sqrt(12), 12);
    // b = c = 0: T(Δ0) = −√(nΔ0/(1−Δ0)), so the upper end is z²/(n + z²).
    const [lo, hi] = tangoInterval(0, 0, 32, z);
    expect(hi).toBeCloseTo((z * z) / (32 + z * z), 9);
    expect(lo).toBeCloseTo(-hi, 9);
    // Ends are where |T| = z, and T falls through them.
    const [a, b] = tangoInterval(7, 2, 30, z);
    expect(tangoStatistic(7, 2, 30, a)).toBeCloseTo(z, 6);
    expect(tangoStatistic(7, 2, 30, b)).toBeCloseTo(-z, 6);
    expect(a).toBeLessThan(5 / 30);
    expect(b).toBeGreaterThan(5 / 30);
    // Every success: the upper end is the edge, the lower end is not.
    const [l1, h1] = tangoInterval(20, 0, 20, z);
    expect(h1).toBe(1);
    expect(tangoStatistic(20, 0, 20, l1)).toBeCloseTo(z, 6);
    expect(l1).toBeLessThan(1);
  });
  it("a unit of m identical copies counts as one task: the design effect undoes the duplication", () => {
    const base = singletons(4, 1, 25);
    const copies = base.flatMap((p, i) => Array.from({ length: 5 }, () => ({ ...p, group: `u${i}` })));
    const one = pairedInterval(clusterPairs(base), 0.95, 500, 1);
    const five = pairedInterval(clusterPairs(copies), 0.95, 500, 1);
    expect(one.intervalMethod).toBe("score-design-effect");
    expect(five.intervalMethod).toBe("score-design-effect");
    expect(five.ci[0]).toBeCloseTo(one.ci[0], 9);
    expect(five.ci[1]).toBeCloseTo(one.ci[1], 9);
    // Declared as independent tasks instead, the copies look five times as informative (positive control).
    const naive = pairedInterval(clusterPairs(copies.map((p, i) => ({ ...p, group: `t${i}` }))), 0.95, 500, 1);
    expect(naive.ci[1] - naive.ci[0]).toBeLessThan(0.6 * (one.ci[1] - one.ci[0]));
    const s = scoreIntervalWithDesignEffect(4, 1, 5, 30, 0, 0.95);
    expect(s.designEffect).toBe(1);
  });
  it("never collapses to zero width nor widens to the whole range on one or two changed pairs", () => {
    for (const [b, c] of [
      [1, 0],
      [0, 1],
      [2, 0],
      [1, 1],
    ] as const) {
      const r = comparePaired(singletons(b, c, 32 - b - c), { iterations: 2000, seed: 3 });
      expect(r.intervalMethod).toBe("score-design-effect");
      expect(r.ci[1] - r.ci[0]).toBeGreaterThan(0.05);
      expect(r.ci[1] - r.ci[0]).toBeLessThan(0.5);
      expect(r.ci[0]).toBeLessThanOrEqual(r.delta);
      expect(r.ci[1]).toBeGreaterThanOrEqual(r.delta);
    }
    // Every task improved: the bootstrap would see no spread; the score interval still has width.
    const all = comparePaired(singletons(20, 0, 0), { iterations: 500 });
    expect(all.ci[1] - all.ci[0]).toBeGreaterThan(0.05);
    // Enough changed units: the studentized bootstrap, as before.
    const many = comparePaired(singletons(MIN_BOOTSTRAP_UNITS + 4, 3, 40), { iterations: 500 });
    expect(many.intervalMethod).toBe("bootstrap-studentized");
    // One unit: nothing to compare it with.
    const one = comparePaired([
      { group: "g", base: 0, treated: 1 },
      { group: "g", base: 0, treated: 0 },
    ]);
    expect(one).toMatchObject({ intervalMethod: "single-unit", ci: [-1, 1], units: 1 });
  });
});

describe("one model's pass rate", () => {
  const rate = (passes: number, n: number) =>
    rateInterval(
      clusterPairs(Array.from({ length: n }, (_, i) => ({ group: `t${i}`, base: 0, treated: i < passes ? 1 : 0 }))),
      0.95,
      1000,
      1,
    );
  it("is exact at 0% and 100%, Wilson with few passes, the bootstrap with enough of both", () => {
    expect(rate(0, 32)).toMatchObject({ intervalMethod: "exact-no-discordance", ci: [0, expect.closeTo(0.1089, 4)] });
    expect(rate(32, 32).ci).toEqual([expect.closeTo(1 - 0.1089, 4), 1]);
    // Wilson 2/40 at z = 1.96: centre (p + z²/2n)/(1 + z²/n), half-width z√(p(1−p)/n + z²/4n²)/(1 + z²/n).
    const p = 2 / 40;
    const k = 1 + (z * z) / 40;
    const w = rate(2, 40);
    expect(w.intervalMethod).toBe("score-design-effect");
    expect(w.ci[0]).toBeCloseTo((p + (z * z) / 80 - z * Math.sqrt((p * (1 - p)) / 40 + (z * z) / 6400)) / k, 2);
    expect(w.ci[1]).toBeCloseTo((p + (z * z) / 80 + z * Math.sqrt((p * (1 - p)) / 40 + (z * z) / 6400)) / k, 2);
    expect(rate(20, 60).intervalMethod).toBe("bootstrap-studentized");
  });
});

describe("units of inference", () => {
  it("uses declared clusters, merges groups they span and clusters a group spans", () => {
    const pairs: PairedInput[] = [
      { group: "a", cluster: "X", base: 0, treated: 1 },
      { group: "b", cluster: "X", base: 0, treated: 1 },
      { group: "c", cluster: "Y", base: 1, treated: 1 },
      { group: "c", cluster: "Z", base: 0, treated: 0 },
      { group: "d", base: 0, treated: 1 },
      { group: "X", base: 1, treated: 0 }, // a group named like a cluster is still its own unit
    ];
    const c = clusterPairs(pairs);
    expect(c).toMatchObject({ unit: "cluster", groups: 4, sourceGroups: 5, discordantUnits: 3 });
    expect([...c.unitOf]).toEqual([0, 0, 1, 1, 2, 3]);
    expect([...c.sums]).toEqual([2, 0, 1, -1]);
    const r = comparePaired(pairs, { iterations: 200 });
    expect(r).toMatchObject({ unit: "cluster", units: 4, groups: 4, sourceGroups: 5 });
    expect(
      comparePaired(
        pairs.map(({ cluster: _, ...p }) => p),
        { iterations: 200 },
      ),
    ).toMatchObject({
      unit: "source_group",
      units: 5,
    });
  });
});
