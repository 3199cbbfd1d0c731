import { describe, expect, it } from "vitest";
import {
  defaultPairsView,
  marginHistogram,
  pairsFilter,
  pairsViewFromParams,
  pairsViewToParams,
  tallyPairs,
  withFilter,
  type GroupCount,
} from "./pairs";

describe("pair browser view state", () => {
  it("round-trips through the URL and sends only the set filters", () => {
    const v = {
      round: 1,
      layer: "hidden",
      chosen: "teacher",
      rejected: "on_policy",
      source: "near_miss",
      page: 2,
    } as const;
    const qs = pairsViewToParams(v);
    expect(qs).toBe("round=1&layer=hidden&chosen=teacher&rejected=on_policy&source=near_miss&page=2");
    expect(pairsViewFromParams(new URLSearchParams(qs))).toEqual(v);
    expect(pairsViewToParams(defaultPairsView)).toBe("");
    expect(pairsFilter("e", v)).toEqual({
      experimentId: "e",
      round: 1,
      failingLayer: "hidden",
      chosenSource: "teacher",
      rejectedSource: "on_policy",
      pairSource: "near_miss",
    });
    expect(pairsFilter("e", defaultPairsView)).toEqual({ experimentId: "e" });
    // round 0 is a real round, not "unset"
    expect(pairsFilter("e", { ...defaultPairsView, round: 0 })).toEqual({ experimentId: "e", round: 0 });
  });

  it("drops hand-edited values it does not know instead of sending them", () => {
    const v = pairsViewFromParams(
      new URLSearchParams("round=-1&layer=bogus&chosen=model&rejected=x&source=y&page=1.5"),
    );
    expect(v).toEqual(defaultPairsView);
    expect(pairsViewFromParams(new URLSearchParams("round=0&layer=syntax")).round).toBe(0);
  });

  it("a new filter goes back to the first page", () => {
    expect(withFilter({ ...defaultPairsView, page: 3 }, { layer: "public" })).toEqual({
      ...defaultPairsView,
      layer: "public",
    });
  });
});

describe("tallyPairs", () => {
  const groups: GroupCount[] = [
    {
      round: 0,
      failingLayer: "hidden",
      chosenSource: "reference",
      rejectedSource: "on_policy",
      pairSource: "cross_state",
      pairs: 5,
    },
    {
      round: 0,
      failingLayer: "syntax",
      chosenSource: "teacher",
      rejectedSource: "on_policy",
      pairSource: "cross_state",
      pairs: 2,
    },
    {
      round: 0,
      failingLayer: "hidden",
      chosenSource: "reference",
      rejectedSource: "mutant",
      pairSource: "near_miss",
      pairs: 3,
    },
    {
      round: 1,
      failingLayer: "public",
      chosenSource: "teacher",
      rejectedSource: "on_policy",
      pairSource: "cross_state",
      pairs: 4,
    },
  ];

  it("counts one round by layer and source, listing zeros, and every round's size", () => {
    const t = tallyPairs(groups, 0);
    expect(t.total).toBe(10);
    expect(t.byLayer).toEqual({ syntax: 2, public: 0, hidden: 8, limits: 0, tampered: 0 });
    expect(t.byChosen).toEqual({ teacher: 2, reference: 8, on_policy: 0, episode: 0 });
    expect(t.byRejected).toEqual({ on_policy: 7, mutant: 3, buggy: 0, episode: 0 });
    expect(t.bySource).toEqual({ cross_state: 7, near_miss: 3, on_policy: 0, episode_branch: 0 });
    expect(t.rounds).toEqual([
      { round: 0, pairs: 10 },
      { round: 1, pairs: 4 },
    ]);
  });

  it("null counts every round", () => {
    const t = tallyPairs(groups, null);
    expect(t.total).toBe(14);
    expect(t.byLayer.public).toBe(4);
    expect(tallyPairs([], null).total).toBe(0);
  });
});

describe("marginHistogram", () => {
  const w = (margin: number, weight = 1) => ({ margin, weight });

  it("puts every value in exactly one bin with round edges, edges opening their bin", () => {
    const values = [-2.3, -1, -0.5, 0, 0, 0.2, 1.9].map((m) => w(m));
    const bins = marginHistogram(values, 4);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(values.length);
    expect(bins[0]?.lo).toBe(-3);
    expect(bins.map((b) => b.hi - b.lo)).toEqual(bins.map(() => 1));
    const zeroBin = bins.find((b) => b.lo === 0);
    expect(zeroBin?.count).toBe(3); // 0, 0 and 0.2
    expect(bins.find((b) => b.lo === -1)?.count).toBe(2); // −1 opens its bin, −0.5 inside
    for (const v of values) {
      const holders = bins.filter((b) => v.margin >= b.lo && v.margin < b.hi);
      expect(holders).toHaveLength(1);
    }
  });

  it("counts down-weighted pairs (weight below 1) apart", () => {
    const bins = marginHistogram([w(0.5, 0.25), w(0.6, 0.25), w(-0.5)], 2);
    expect(bins.reduce((a, b) => a + b.downweighted, 0)).toBe(2);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(3);
  });

  it("one distinct value is one bin around it; no finite value is no bin", () => {
    expect(marginHistogram([w(1.5), w(1.5)])).toEqual([{ lo: 1, hi: 2, count: 2, downweighted: 0 }]);
    expect(marginHistogram([w(Number.NaN)])).toEqual([]);
    expect(marginHistogram([])).toEqual([]);
  });
});
