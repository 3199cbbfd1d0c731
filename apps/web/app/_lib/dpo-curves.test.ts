import { describe, expect, it } from "vitest";
import { defaultDpoRound, dpoRoundsShown } from "./dpo-curves";

const run = (round: number, steps: number) => ({ round, points: Array.from({ length: steps }, () => ({})) });

describe("DPO rounds on the experiment page", () => {
  it("lists rounds in order with their seeds and started runs", () => {
    expect(dpoRoundsShown([run(2, 0), run(1, 3), run(1, 0), run(2, 1)])).toEqual([
      { round: 1, seeds: 2, started: 1 },
      { round: 2, seeds: 2, started: 1 },
    ]);
    expect(dpoRoundsShown([])).toEqual([]);
  });

  it("shows the latest round that reported a step, else the first", () => {
    expect(defaultDpoRound(dpoRoundsShown([run(1, 5), run(2, 2), run(3, 0)]))).toBe(2);
    expect(defaultDpoRound(dpoRoundsShown([run(1, 0), run(2, 0)]))).toBe(1);
    expect(defaultDpoRound([])).toBe(1);
  });
});
