import { z } from "zod";
import { DomainError, TaskSearchInput } from "@agentlab/core";
import { getTask, listTasks, searchTasks, taskDuplicates } from "@agentlab/db";
import { router, viewerProcedure } from "../trpc/init";

// `none`: never audited; otherwise the status of the task's newest admission audit.
const TaskAuditState = z.enum(["none", "pending", "passed", "failed", "error"]);

export const tasksRouter = router({
  /** Keyset pagination in id order; `q` is a prefix of the task id or of its source group; `audit` filters by the newest audit's status. */
  list: viewerProcedure
    .input(
      z.object({
        poolId: z.string().uuid(),
        q: z.string().max(200).optional(),
        audit: TaskAuditState.optional(),
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(200).default(50),
      }),
    )
    .query(({ ctx, input }) => listTasks(ctx.db, input)),

  /** Full-text search in the instructions of a pool's tasks, best match first, with the total. */
  search: viewerProcedure.input(TaskSearchInput).query(({ ctx, input }) => searchTasks(ctx.db, input)),

  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const row = await getTask(ctx.db, input.id);
    if (!row) throw new DomainError("NOT_FOUND", "no such task");
    const { minhash: _sig, instructionTsv: _tsv, ...task } = row;
    return { task, duplicates: await taskDuplicates(ctx.db, row) };
  }),
});
