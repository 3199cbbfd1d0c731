import { exportTaskPage, getSplit, type Db } from "@agentlab/db";
import { DomainError, type SplitPart, type TaskSpec } from "@agentlab/core";

/** Every task of one part of a frozen split, in task-id order. */
export async function splitTasks(db: Db, splitId: string, part: SplitPart): Promise<TaskSpec[]> {
  const split = await getSplit(db, splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  const out: TaskSpec[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await exportTaskPage(db, { poolId: split.poolId, splitId, part, after, limit: 500 });
    out.push(...page.items);
    if (!page.nextCursor) return out;
    after = page.nextCursor;
  }
}
