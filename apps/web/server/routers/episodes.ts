import { z } from "zod";
import { DomainError, EpisodeBranching, EpisodeBudget, EpisodePolicySpec, ToolResult } from "@agentlab/core";
import { getEpisode, getEpisodeBlobs, listEpisodes } from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { enqueueEpisode } from "../episodes/enqueue";

// Episodes: the stored runs (main episodes and their continuations), each with its steps (the
// tool results read back from their content-addressed blobs) and its branch points' values.

export const episodesRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({
          taskRowId: z.string().uuid().optional(),
          all: z.boolean().default(false),
          limit: z.number().int().min(1).max(500).default(50),
        })
        .default({ all: false, limit: 50 }),
    )
    .query(({ ctx, input }) =>
      listEpisodes(ctx.db, { taskRowId: input.taskRowId, mainOnly: !input.all, limit: input.limit }),
    ),

  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const found = await getEpisode(ctx.db, input.id);
    if (!found) throw new DomainError("NOT_FOUND", "no such episode");
    const blobs = new Map(
      (
        await getEpisodeBlobs(
          ctx.db,
          found.steps.map((s) => s.resultHash),
        )
      ).map((b) => [b.sha256, b.content]),
    );
    const steps = found.steps.map((s) => {
      const raw = blobs.get(s.resultHash);
      const result = raw === undefined ? null : ToolResult.safeParse(JSON.parse(raw));
      return { ...s, result: result?.success ? result.data : null };
    });
    return { ...found, steps };
  }),

  /** A scripted control episode (the positive controls of the environment); model policies come later. */
  create: memberProcedure
    .input(
      z.strictObject({
        taskRowId: z.string().uuid(),
        policy: EpisodePolicySpec,
        seed: z.number().int().min(0),
        budget: EpisodeBudget.partial().optional(),
        branching: EpisodeBranching.partial().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const job = await enqueueEpisode(ctx, input, ctx.viewer.userId);
      return { jobId: job.id };
    }),
});
