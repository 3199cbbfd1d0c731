import { and, asc, eq, inArray } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../client";
import { episodeBranches, episodes, splitAssignments, tasks } from "../schema";

// The continuations of stored branch points, read for same-state preference pairs: per branch
// point of a main episode on the split's tasks of one part, its continuations (the episodes whose
// branch_id names it) with the main episode they branched from and the task row. Callers building
// training data pass part "train"; the preference_pairs triggers refuse any other pair.

const continuation = alias(episodes, "continuation");

/** Branch points on the split's `part` tasks (optionally only those keyed `taskKeys`), one row per continuation, in a stable order. */
export async function branchContinuations(
  db: Db,
  opts: { splitId: string; part: "train" | "dev" | "test"; taskKeys?: readonly string[] },
) {
  if (opts.taskKeys?.length === 0) return [];
  return db
    .select({
      branch: episodeBranches,
      main: episodes,
      continuation,
      task: tasks,
    })
    .from(episodeBranches)
    .innerJoin(episodes, eq(episodes.id, episodeBranches.episodeId))
    .innerJoin(continuation, eq(continuation.branchId, episodeBranches.id))
    .innerJoin(tasks, eq(tasks.id, episodes.taskRowId))
    .innerJoin(
      splitAssignments,
      and(eq(splitAssignments.taskRowId, episodes.taskRowId), eq(splitAssignments.splitId, opts.splitId)),
    )
    .where(
      and(eq(splitAssignments.part, opts.part), opts.taskKeys ? inArray(tasks.taskId, [...opts.taskKeys]) : undefined),
    )
    .orderBy(asc(episodes.taskKey), asc(episodeBranches.stateHash), asc(continuation.seed), asc(continuation.id));
}
