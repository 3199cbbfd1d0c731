import { describe, expect, it } from "vitest";
import { agenticSection, type AgenticEpisode } from "./report-agentic";

const ep = (taskId: string, pass: boolean, over: Partial<AgenticEpisode> = {}): AgenticEpisode => ({
  taskId,
  group: `g-${taskId}`,
  policy: "scripted:solver",
  pass,
  turns: 5,
  testRuns: 2,
  byBudget: false,
  ...over,
});
const opts = { iterations: 200, seed: 1 };

describe("agenticSection", () => {
  it("averages each task's rate over its seeds, then over tasks", () => {
    const s = agenticSection([ep("a", true), ep("a", false), ep("b", true), ep("b", true)], opts);
    expect(s?.rows).toHaveLength(1);
    const row = s?.rows[0];
    expect(row).toMatchObject({ tasks: 2, episodes: 4, seedsPerTask: [2, 2], meanTurns: 5, meanTestRuns: 2 });
    expect(row?.passAt1.value).toBeCloseTo(0.75);
    expect(row?.passAt1.lo).toBeLessThanOrEqual(0.75);
    expect(row?.passAt1.hi).toBeGreaterThanOrEqual(0.75);
  });

  it("one row per policy, budget submits counted; no episodes, no section", () => {
    const s = agenticSection(
      [ep("a", true), ep("a", false, { policy: "scripted:wrong", byBudget: true, turns: 30 })],
      opts,
    );
    expect(s?.rows.map((r) => [r.policy, r.passAt1.value, r.budgetSubmits, r.meanTurns])).toEqual([
      ["scripted:solver", 1, 0, 5],
      ["scripted:wrong", 0, 1, 30],
    ]);
    expect(agenticSection([], opts)).toBeNull();
  });
});
