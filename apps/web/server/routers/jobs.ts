import { z } from "zod";
import { CreateJob, DomainError, JobState } from "@agentlab/core";
import {
  attemptJobType,
  countJobsByState,
  getJob,
  jobCreator,
  listAttempts,
  listJobArtifacts,
  listJobs,
  readLogs,
  readProgress,
} from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";

export const jobsRouter = router({
  list: viewerProcedure
    .input(
      z.object({
        state: JobState.optional(),
        type: z.string().max(32).optional(),
        experimentId: z.string().uuid().optional(),
        limit: z.number().int().min(1).max(500).default(100),
        before: z.coerce.date().optional(),
      }),
    )
    .query(({ ctx, input }) => listJobs(ctx.db, input)),

  counts: viewerProcedure.query(({ ctx }) => countJobsByState(ctx.db)),

  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const job = await getJob(ctx.db, input.id);
    if (!job) throw new DomainError("NOT_FOUND", "no such job");
    const [attempts, artifacts, creator] = await Promise.all([
      listAttempts(ctx.db, job.id),
      listJobArtifacts(ctx.db, job.id),
      jobCreator(ctx.db, job),
    ]);
    return { job, attempts, artifacts, creator };
  }),

  /** Log lines of one attempt after `afterSeq`, for a live tail. A shell job's output is admin-only. */
  logs: viewerProcedure
    .input(
      z.object({
        attemptId: z.string().uuid(),
        afterSeq: z.number().int().min(-1).default(-1),
        limit: z.number().int().min(1).max(2000).default(500),
      }),
    )
    .query(async ({ ctx, input }) => {
      if ((await attemptJobType(ctx.db, input.attemptId)) === "shell" && ctx.viewer.role !== "admin")
        throw new DomainError("FORBIDDEN", "only admins read the output of shell jobs");
      return readLogs(ctx.db, input.attemptId, input.afterSeq, input.limit);
    }),

  progress: viewerProcedure
    .input(z.object({ attemptId: z.string().uuid() }))
    .query(({ ctx, input }) => readProgress(ctx.db, input.attemptId)),

  // A shell job runs any command outside the sandbox on an opted-in agent: an admin's decision.
  // The input names no experiment and no dedupe key (CreateJob): those are the server's.
  create: memberProcedure.input(CreateJob).mutation(({ ctx, input }) => {
    if (input.type === "shell" && ctx.viewer.role !== "admin")
      throw new DomainError("FORBIDDEN", "only admins create shell jobs");
    return ctx.queue.enqueue({ ...input, createdBy: ctx.viewer.userId });
  }),

  cancel: memberProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    const res = await ctx.queue.cancel(input.id);
    if (!res) throw new DomainError("NOT_FOUND", "no such job");
    return res;
  }),
});
