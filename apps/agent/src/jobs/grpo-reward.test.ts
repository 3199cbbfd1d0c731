import { describe, expect, it } from "vitest";
import { deriveSeed, mulberry32 } from "@agentlab/core";
import { shuffleWithinGroups } from "./grpo-reward";

// The shuffled-reward control: a reward that ignores the candidate must give the policy gradient
// no push towards the passing candidates. In GRPO that push is the advantage (reward − group mean)
// summed over the completions that really pass; with the judge's own rewards it is positive (the
// positive control), with rewards shuffled within each group its expectation is 0.

const G = 8;

/** Groups where completion i of a group passes iff i < k (k from 1 to G−1: never all equal). */
function groups(n: number, seed: number): boolean[][] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const k = 1 + Math.floor(r() * (G - 1));
    return Array.from({ length: G }, (_, i) => i < k);
  });
}

/** Σ over really passing completions of their group-normalised advantage, per group. */
function pushTowardsPassing(truth: boolean[][], rewards: number[][]): number {
  let push = 0;
  truth.forEach((group, g) => {
    const r = rewards[g] ?? [];
    const mean = r.reduce((a, b) => a + b, 0) / r.length;
    group.forEach((passes, i) => {
      if (passes) push += (r[i] ?? 0) - mean;
    });
  });
  return push / truth.length;
}

describe("the shuffled-reward control", () => {
  it("permutes within each group only: every group keeps its rewards, none crosses to another prompt", () => {
    const items = Array.from({ length: 3 * G + 3 }, (_, i) => ({ group: Math.floor(i / G), i }));
    const out = shuffleWithinGroups(items, G, mulberry32(1));
    expect(out).toHaveLength(items.length);
    for (let g = 0; g * G < items.length; g++) {
      const before = items.slice(g * G, (g + 1) * G);
      const after = out.slice(g * G, (g + 1) * G);
      expect(after.map((x) => x.group)).toEqual(before.map((x) => x.group));
      expect(after.map((x) => x.i).sort((a, b) => a - b)).toEqual(before.map((x) => x.i));
    }
    expect(out.map((x) => x.i)).not.toEqual(items.map((x) => x.i));
    // the same seed and request give the same permutation (a resumed run shuffles alike)
    const again = shuffleWithinGroups(items, G, mulberry32(1));
    expect(again).toEqual(out);
  });

  it("gives no push towards the passing candidates; the judge's own rewards do (positive control)", () => {
    const truth = groups(4000, 7);
    const own = truth.map((g) => g.map((p) => (p ? 1 : 0)));
    const shuffled = truth.map((g, req) =>
      shuffleWithinGroups(
        g.map((p) => (p ? 1 : 0)),
        G,
        mulberry32(deriveSeed(3, req)),
      ),
    );
    // E[push] with own rewards = E[k (1 − k/G)] over k uniform on 1..7 = 84 / 56 = 1.5
    expect(pushTowardsPassing(truth, own)).toBeCloseTo(1.5, 1);
    // shuffled: 0 in expectation; the sd of the mean over 4000 groups is ≈ 0.02
    expect(Math.abs(pushTowardsPassing(truth, shuffled))).toBeLessThan(0.1);
    // and the group statistics GRPO normalises by are untouched
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    shuffled.forEach((g, i) => expect(mean(g)).toBe(mean(own[i] ?? [])));
  });
});
