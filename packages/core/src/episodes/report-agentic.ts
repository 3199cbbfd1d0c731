import { passRate, type GroupOutcome, type Interval } from "../experiments/report-stats";

// Agentic pass@1 for an experiment's report: per policy, each dev task's pass rate over its
// episode seeds (main episodes only: a continuation starts from a state another run reached),
// averaged over tasks with the report's clustered interval (source group, or the declared
// cluster), beside the turns and test runs the episodes used. Dev only: agentic episodes on test
// tasks are not yet run under the experiment's one test claim, so reporting them would be a
// second read of the test split.

export type AgenticEpisode = {
  taskId: string;
  group: string;
  cluster?: string;
  policy: string;
  pass: boolean;
  turns: number;
  testRuns: number;
  /** The budget, not the policy, submitted it. */
  byBudget: boolean;
};

export type AgenticRow = {
  split: "dev";
  policy: string;
  tasks: number;
  episodes: number;
  /** Episodes per task (seeds): the fewest and the most. */
  seedsPerTask: [number, number];
  passAt1: Interval;
  meanTurns: number;
  meanTestRuns: number;
  budgetSubmits: number;
};

export type AgenticReportSection = { rows: AgenticRow[]; note: string };

export const AGENTIC_NOTE =
  "dev only (selection split, descriptive); pass@1 = mean over tasks of each task's pass rate over its episode seeds";

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Null when no episode ran on the dev tasks. */
export function agenticSection(
  episodes: readonly AgenticEpisode[],
  opts: { iterations: number; seed: number; level?: number },
): AgenticReportSection | null {
  if (episodes.length === 0) return null;
  const policies = [...new Set(episodes.map((e) => e.policy))].sort();
  const rows = policies.map((policy): AgenticRow => {
    const mine = episodes.filter((e) => e.policy === policy);
    const byTask = new Map<string, AgenticEpisode[]>();
    for (const e of mine) byTask.set(e.taskId, [...(byTask.get(e.taskId) ?? []), e]);
    const outcomes: GroupOutcome[] = [...byTask.values()].map((es) => {
      const first = es[0];
      return {
        group: first?.group ?? "",
        ...(first?.cluster ? { cluster: first.cluster } : {}),
        pass: mean(es.map((e) => (e.pass ? 1 : 0))),
      };
    });
    const sizes = [...byTask.values()].map((es) => es.length);
    return {
      split: "dev",
      policy,
      tasks: byTask.size,
      episodes: mine.length,
      seedsPerTask: [Math.min(...sizes), Math.max(...sizes)],
      passAt1: passRate(outcomes, opts),
      meanTurns: mean(mine.map((e) => e.turns)),
      meanTestRuns: mean(mine.map((e) => e.testRuns)),
      budgetSubmits: mine.filter((e) => e.byBudget).length,
    };
  });
  return { rows, note: AGENTIC_NOTE };
}
