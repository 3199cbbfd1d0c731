import { and, eq, inArray } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import type { Db } from "../client";
import { experiments, splitAssignments } from "../schema";

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * The experiment's split and the task row of each task key in it, for writes whose rows name a
 * task of the experiment's split (preference pairs, GRPO prompts): a key not in the split is
 * refused here, naming `what` (the train-only triggers then refuse a key of the wrong part).
 */
export async function experimentTaskRows(
  tx: Tx,
  experimentId: string,
  keys: readonly string[],
  what: string,
): Promise<{ splitId: string; rowOf: Map<string, string> }> {
  const [exp] = await tx
    .select({ splitId: experiments.splitId })
    .from(experiments)
    .where(eq(experiments.id, experimentId));
  if (!exp) throw new DomainError("NOT_FOUND", `experiment ${experimentId} not found`);
  const unique = [...new Set(keys)];
  const rows = unique.length
    ? await tx
        .select({ taskId: splitAssignments.taskId, taskRowId: splitAssignments.taskRowId })
        .from(splitAssignments)
        .where(and(eq(splitAssignments.splitId, exp.splitId), inArray(splitAssignments.taskId, unique)))
    : [];
  const rowOf = new Map(rows.map((r) => [r.taskId, r.taskRowId]));
  const missing = unique.filter((k) => !rowOf.has(k));
  if (missing.length)
    throw new DomainError(
      "BAD_REQUEST",
      `${what} name tasks not in the experiment's split: ${missing.slice(0, 5).join(", ")}`,
    );
  return { splitId: exp.splitId, rowOf };
}
