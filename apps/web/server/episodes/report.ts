import { agenticSection, type AgenticReportSection, type TaskSpec } from "@agentlab/core";
import { listEpisodes, type Db } from "@agentlab/db";

// The report's agentic section: the stored main episodes on the experiment's dev tasks, each
// task's source group and declared cluster as the single-shot rows use them (core agenticSection).
// Kept apart from the report stage, which calls it once.

export async function agenticReport(
  db: Db,
  opts: { splitId: string; devTasks: readonly TaskSpec[]; bootstrap: { iterations: number; seed: number } },
): Promise<{ agentic?: AgenticReportSection }> {
  const dev = new Map(opts.devTasks.map((t) => [t.id, t]));
  const episodes = (await listEpisodes(db, { splitId: opts.splitId, mainOnly: true, limit: 100_000 })).flatMap((e) => {
    const task = dev.get(e.taskKey);
    if (!task) return [];
    return [
      {
        taskId: e.taskKey,
        group: task.source_group,
        ...(task.cluster ? { cluster: task.cluster } : {}),
        policy: e.policyName,
        pass: e.verdict === "pass",
        turns: e.turns,
        testRuns: e.testRuns,
        byBudget: e.submittedBy === "budget",
      },
    ];
  });
  const agentic = agenticSection(episodes, opts.bootstrap);
  return agentic ? { agentic } : {};
}
