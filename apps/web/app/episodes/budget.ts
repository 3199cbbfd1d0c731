// The budget an episode had used after each of its steps, as the environment counts it: every
// policy call is a turn (a refused one too; the environment's own submit on an exhausted budget is
// not), and a test run is a run_public_tests call that ran (one refused for a spent test budget or
// a malformed call did not). A continuation starts from its state's counters.

export type StepForBudget = { role: string; tool: string; refusal: string | null; wallMs: number };
export type BudgetUsed = { turns: number; testRuns: number; wallMs: number };

const ranTests = (s: StepForBudget) =>
  s.tool === "run_public_tests" && s.refusal !== "test_budget" && s.refusal !== "bad_call";

export function budgetAfterEachStep(steps: readonly StepForBudget[], start: BudgetUsed): BudgetUsed[] {
  let used = { ...start };
  return steps.map((s) => {
    used = {
      turns: used.turns + (s.role === "assistant" ? 1 : 0),
      testRuns: used.testRuns + (ranTests(s) ? 1 : 0),
      wallMs: used.wallMs + s.wallMs,
    };
    return used;
  });
}
