import { z } from "zod";
import { DomainError } from "@agentlab/core";
import { countPoolTasks, getPool, listTaskAudits, poolAuditSummary, setInProcessMark } from "@agentlab/db";
import { enqueueAudits, StartAudits } from "../audits/enqueue";
import { adminProcedure, memberProcedure, router, viewerProcedure } from "../trpc/init";

export const auditsRouter = router({
  /** A task's admission audits, newest first (the first is its current status). */
  list: viewerProcedure.input(z.object({ taskId: z.string().uuid() })).query(async ({ ctx, input }) => {
    const rows = await listTaskAudits(ctx.db, input.taskId);
    return rows.map((r) => ({ ...r.audit, jobState: r.jobState, jobProgress: r.jobProgress }));
  }),

  /** Counts of the pool's tasks by their newest audit's status (`none`: never audited). */
  summary: viewerProcedure.input(z.object({ poolId: z.string().uuid() })).query(async ({ ctx, input }) => {
    if (!(await getPool(ctx.db, { id: input.poolId }))) throw new DomainError("NOT_FOUND", "no such pool");
    return poolAuditSummary(ctx.db, input.poolId);
  }),

  /** Audits a pool's tasks (or the listed ones); tasks already audited by this grader are skipped unless `rerun`. */
  create: memberProcedure.input(StartAudits).mutation(async ({ ctx, input }) => {
    if (!(await getPool(ctx.db, { id: input.poolId }))) throw new DomainError("NOT_FOUND", "no such pool");
    const ids = input.taskIds ? [...new Set(input.taskIds)] : null;
    if (ids && (await countPoolTasks(ctx.db, input.poolId, ids)) !== ids.length)
      throw new DomainError("NOT_FOUND", "a task is not in this pool");
    return enqueueAudits(ctx, input, ctx.viewer.userId);
  }),

  /**
   * Admin only: allow the task's next audit to choose in-process grading (the weaker mode), with a
   * reason that every audit and verdict of it shows; `reason: null` withdraws it (back to the judge).
   * Takes effect with the next audit (`create` with `rerun`).
   */
  markInProcess: adminProcedure
    .input(z.object({ taskId: z.string().uuid(), reason: z.string().trim().min(10).max(2000).nullable() }))
    .mutation(async ({ ctx, input }) => {
      const mark = input.reason === null ? null : { reason: input.reason, by: ctx.viewer.userId };
      if (!(await setInProcessMark(ctx.db, input.taskId, mark))) throw new DomainError("NOT_FOUND", "no such task");
      return { marked: mark !== null };
    }),
});
