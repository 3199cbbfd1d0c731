import { nearMissAudits, type Db } from "@agentlab/db";
import {
  NEAR_MISS_PAIRS_PER_TASK,
  PromptMessage,
  buildPairs,
  formatAnswer,
  nearMissRejected,
  publicContext,
  renderRepairPrompt,
  trainsOn,
  type PreferencePair,
  type PromptVariant,
  type TaskSpec,
} from "@agentlab/core";

// Held-out pairs: near-miss pairs of DEV tasks, chosen = the task's reference (its admission audit
// passed it every run), rejected = its buggy file and the mutants the audit saw killed. They are
// scored, never trained on and never stored as preference pairs (preference_pairs refuses dev
// tasks); they say whether a DPO epoch kept the chosen answers likely on prompts it did not see.
// Dev only: the test part is never read here.

export async function heldOutPairs(
  db: Db,
  opts: { splitId: string; devTasks: readonly TaskSpec[]; promptVariant?: PromptVariant },
): Promise<{ pairs: PreferencePair[]; tasks: number }> {
  const audits = await nearMissAudits(db, { splitId: opts.splitId, part: "dev" });
  const tasks = opts.devTasks.filter((t) => {
    const a = audits.get(t.id);
    return a !== undefined && trainsOn(a.isolation);
  });
  const prompts = new Map(
    tasks.map((t) => [t.id, PromptMessage.array().parse(renderRepairPrompt(publicContext(t, opts.promptVariant)))]),
  );
  const built = buildPairs({
    prompts,
    chosen: tasks.map((t) => ({
      taskId: t.id,
      source: "reference" as const,
      text: formatAnswer(t.reference),
      verdict: "pass" as const,
    })),
    rejected: tasks.flatMap((t) => {
      const a = audits.get(t.id);
      return a ? nearMissRejected(t, a) : [];
    }),
    pairSource: "near_miss",
    maxPerTask: NEAR_MISS_PAIRS_PER_TASK,
  });
  return { pairs: built.pairs, tasks: new Set(built.pairs.map((p) => p.taskId)).size };
}
