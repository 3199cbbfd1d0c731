import { and, asc, eq } from "drizzle-orm";
import type { ChatMessage } from "@agentlab/core";
import type { Db } from "../client";
import { grpoPrompts } from "../schema";
import { experimentTaskRows } from "./experiment-task-rows";

// The prompts of one GRPO run (experiment, seed), written in one transaction, all or none; the
// database refuses a prompt of a dev or test task (trigger grpo_prompts_train_only).

export type GrpoPromptInput = { taskId: string; prompt: ChatMessage[] };

/** Idempotent per (experiment, seed, task): a re-run of the stage keeps the stored rows. Returns the run's count. */
export async function insertGrpoPrompts(
  db: Db,
  opts: { experimentId: string; seed: number; prompts: readonly GrpoPromptInput[] },
): Promise<number> {
  return db.transaction(async (tx) => {
    const { splitId, rowOf } = await experimentTaskRows(
      tx,
      opts.experimentId,
      opts.prompts.map((p) => p.taskId),
      "prompts",
    );
    for (let i = 0; i < opts.prompts.length; i += 200) {
      const chunk = opts.prompts.slice(i, i + 200).map((p) => ({
        experimentId: opts.experimentId,
        seed: opts.seed,
        splitId,
        taskRowId: rowOf.get(p.taskId) ?? "",
        taskKey: p.taskId,
        prompt: p.prompt,
      }));
      await tx.insert(grpoPrompts).values(chunk).onConflictDoNothing();
    }
    const stored = await tx
      .select({ id: grpoPrompts.id })
      .from(grpoPrompts)
      .where(and(eq(grpoPrompts.experimentId, opts.experimentId), eq(grpoPrompts.seed, opts.seed)));
    return stored.length;
  });
}

/** The task keys of one run's stored prompts, in key order. */
export async function grpoPromptTasks(db: Db, opts: { experimentId: string; seed: number }): Promise<string[]> {
  const rows = await db
    .select({ taskKey: grpoPrompts.taskKey })
    .from(grpoPrompts)
    .where(and(eq(grpoPrompts.experimentId, opts.experimentId), eq(grpoPrompts.seed, opts.seed)))
    .orderBy(asc(grpoPrompts.taskKey));
  return rows.map((r) => r.taskKey);
}
