import { z } from "zod";
import {
  EpisodeBranching,
  EpisodeBudget,
  CollectPart,
  EpisodePolicyRequest,
  NAME_MAX_LENGTH,
  TrajectorySelection,
} from "@agentlab/core";
import { listEpisodes } from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { enqueueEpisode, enqueueSplitEpisodes } from "../episodes/enqueue";
import { episodeScopeSplit } from "../episodes/scope";
import { createEpisodeDataset } from "../episodes/sft";
import { episodeTrajectory } from "../episodes/trajectory";

// Episodes: the stored runs (main episodes and their continuations), listed per task or per the
// split of an experiment or collection; one episode's trajectory (episodes/trajectory.ts).

export const episodesRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({
          taskRowId: z.string().uuid().optional(),
          /** Episodes on the tasks of this experiment's, collection's or split's split. */
          experimentId: z.string().uuid().optional(),
          collectionId: z.string().uuid().optional(),
          splitId: z.string().uuid().optional(),
          all: z.boolean().default(false),
          limit: z.number().int().min(1).max(500).default(50),
        })
        .default({ all: false, limit: 50 }),
    )
    .query(async ({ ctx, input }) =>
      listEpisodes(ctx.db, {
        taskRowId: input.taskRowId,
        splitId: await episodeScopeSplit(ctx.db, input),
        mainOnly: !input.all,
        limit: input.limit,
      }),
    ),

  /** One episode's trajectory: steps with observations and file changes, branch points with their runs. */
  byId: viewerProcedure
    .input(z.object({ id: z.string().uuid() }))
    .query(({ ctx, input }) => episodeTrajectory(ctx.db, input.id)),

  /** One episode: a scripted control, or a teacher (its split named: train or dev tasks only). */
  create: memberProcedure
    .input(
      z.strictObject({
        taskRowId: z.string().uuid(),
        policy: EpisodePolicyRequest,
        seed: z.number().int().min(0),
        splitId: z.string().uuid().optional(),
        budget: EpisodeBudget.partial().optional(),
        branching: EpisodeBranching.partial().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const job = await enqueueEpisode(ctx, input, ctx.viewer.userId);
      return { jobId: job.id };
    }),

  /** Episodes of one policy on a frozen split's train (or dev) tasks, `seeds` per task; never test tasks. */
  runSplit: memberProcedure
    .input(
      z.strictObject({
        splitId: z.string().uuid(),
        policy: EpisodePolicyRequest,
        parts: z.array(CollectPart).min(1).default(["train"]),
        seeds: z.number().int().min(1).max(64).default(1),
        limit: z.number().int().min(1).max(100_000).optional(),
        budget: EpisodeBudget.partial().optional(),
        branching: EpisodeBranching.partial().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => ({ jobIds: await enqueueSplitEpisodes(ctx, input, ctx.viewer.userId) })),

  /** An SFT snapshot (a dataset like any other) of verified, train-only episode trajectories. */
  toDataset: memberProcedure
    .input(
      z.strictObject({
        name: z.string().min(1).max(NAME_MAX_LENGTH),
        splitId: z.string().uuid(),
        kinds: TrajectorySelection.default("both"),
        episodeIds: z.array(z.string().uuid()).min(1).max(5000).optional(),
        policyName: z.string().min(1).max(200).optional(),
        /** A recovery's failed attempt stays in the context, unsupervised (its edits before the last failed test run). */
        maskFailedAttempts: z.boolean().default(false),
        experimentId: z.string().uuid().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const d = await createEpisodeDataset(ctx, { ...input, createdBy: ctx.viewer.userId });
      ctx.log.info({ datasetId: d.id, hash: d.hash, samples: d.sampleCount }, "episode trajectories snapshot created");
      return d;
    }),
});
