import { describe, expect, it } from "vitest";
import { budgetAfterEachStep } from "./budget";

const step = (tool: string, refusal: string | null = null, role = "assistant") => ({ role, tool, refusal, wallMs: 10 });

describe("budgetAfterEachStep", () => {
  it("counts every policy call as a turn and only test runs that ran", () => {
    const used = budgetAfterEachStep(
      [
        step("run_public_tests"),
        step("edit_file", "no_match"),
        step("run_public_tests", "test_budget"),
        step("run_public_tests", "bad_call"),
        step("submit", null, "environment"),
      ],
      { turns: 0, testRuns: 0, wallMs: 0 },
    );
    expect(used.map((u) => [u.turns, u.testRuns])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [4, 1],
    ]);
    expect(used[4]?.wallMs).toBe(50);
  });

  it("a continuation counts on from its state's counters", () => {
    expect(budgetAfterEachStep([step("submit")], { turns: 4, testRuns: 2, wallMs: 100 })).toEqual([
      { turns: 5, testRuns: 2, wallMs: 110 },
    ]);
  });
});
