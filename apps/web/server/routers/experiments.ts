import { z } from "zod";
import {
  DomainError,
  ExperimentConfig,
  MAX_SAMPLES,
  estimateWork,
  parseStageOutput,
  evaluationWork,
  planProgress,
  remainingTime,
  shownStageState,
  stagePlan,
} from "@agentlab/core";
import {
  getExperiment,
  getSelection,
  getSplit,
  recentThroughput,
  listExperiments,
  listStages,
  evaluationCounts,
  queueWaits,
  type Db,
  stageJobCounts,
} from "@agentlab/db";
import { trainStageData } from "@agentlab/db/queries/training";
import { trainPoints } from "@agentlab/core/experiments/training";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { cancelExperiment, createExperiment, resumeExperiment } from "../experiments/service";
import { wakeStudyArms } from "../studies/settle";
import { prepareCpuDemo } from "../models/cpu-demo";

const Id = z.object({ id: z.string().uuid() });

export const experimentsRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({
          state: z.enum(["running", "succeeded", "failed", "canceled"]).optional(),
          limit: z.number().int().min(1).max(200).default(50),
        })
        .default({ limit: 50 }),
    )
    .query(({ ctx, input }) => listExperiments(ctx.db, input)),

  /** The experiment with its stages in plan order, each with its jobs' states, and overall progress. */
  byId: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const exp = await getExperiment(ctx.db, input.id);
    if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
    const config = ExperimentConfig.parse(exp.config);
    const plan = stagePlan(config);
    const rows = new Map((await listStages(ctx.db, exp.id)).map((r) => [r.key, r]));
    // Job states are counted by the database (no job rows or payloads loaded), 50 listed per stage.
    const counts = await stageJobCounts(ctx.db, exp.id, 50);
    // A running stage whose jobs are all still queued says what it waits for (one job per stage).
    const waitingFor = new Map<string, string>();
    for (const s of plan) {
      const jobs = counts.get(s.key)?.jobs ?? [];
      const queued = jobs.find((j) => j.state === "queued");
      if (
        exp.state === "running" &&
        rows.get(s.key)?.state === "running" &&
        queued &&
        !jobs.some((j) => j.state === "running")
      )
        waitingFor.set(queued.id, s.key);
    }
    const waits = new Map(
      (await queueWaits(ctx.db, [...waitingFor.keys()])).map((w) => [waitingFor.get(w.jobId), w] as const),
    );
    const stages = plan.map((s) => {
      const row = rows.get(s.key);
      const c = counts.get(s.key) ?? { total: 0, done: 0, jobs: [] };
      return {
        key: s.key,
        kind: s.kind,
        state: shownStageState(exp.state, row?.state ?? "pending"),
        error: row?.error ?? null,
        startedAt: row?.startedAt ?? null,
        finishedAt: row?.finishedAt ?? null,
        jobs: c.jobs,
        jobCount: c.total,
        jobsDone: c.done,
        progress: row?.state === "succeeded" ? 1 : c.total ? c.done / c.total : 0,
        queueWait: waits.get(s.key) ?? null,
      };
    });
    return {
      ...exp,
      config,
      stages,
      remaining: exp.state === "running" ? await timeLeft(ctx.db, exp.id, exp.splitId, config) : null,
      progress: planProgress(plan, [...rows.values()]),
      selection: (await getSelection(ctx.db, exp.id)) ?? null,
      // Samples dropped before training for being longer than the max length.
      overLength: parseStageOutput("dataset", "dataset", rows.get("dataset")?.output)?.overLength ?? null,
    };
  }),

  /** The work of the evaluations (tasks × samples × models) and its time from recent measured throughput. */
  estimate: viewerProcedure
    .input(
      z.object({
        splitId: z.string().uuid(),
        samples: z.number().int().min(1).max(MAX_SAMPLES),
        seeds: z.number().int().min(1).max(16),
        epochs: z.number().int().min(1).max(50),
      }),
    )
    .query(async ({ ctx, input }) => {
      const split = await getSplit(ctx.db, input.splitId);
      if (!split) throw new DomainError("NOT_FOUND", "no such split");
      const work = evaluationWork({
        devTasks: split.counts.dev?.tasks ?? 0,
        testTasks: split.counts.test?.tasks ?? 0,
        seeds: input.seeds,
        epochs: input.epochs,
        samples: input.samples,
      });
      return { work, estimate: estimateWork(work, await recentThroughput(ctx.db)) };
    }),

  create: memberProcedure.input(ExperimentConfig).mutation(async ({ ctx, input }) => {
    const exp = await createExperiment(ctx.db, input, ctx.viewer.userId);
    ctx.log.info({ experimentId: exp.id, splitId: exp.splitId }, "experiment created");
    await ctx.queue.wakeExperiment(exp.id);
    return { id: exp.id };
  }),

  /**
   * The CPU demo preset (the form's button, the checklist's first experiment): the learnable pool's
   * frozen split, the reference oracle and a warmed tiny-base job; the form waits for the job.
   */
  cpuDemo: memberProcedure.mutation(({ ctx }) => prepareCpuDemo(ctx, ctx.viewer)),

  /** Stops advancing the experiment and cancels its unfinished jobs. */
  cancel: memberProcedure.input(Id).mutation(async ({ ctx, input }) => {
    const exp = await getExperiment(ctx.db, input.id);
    if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
    if (exp.state !== "running") throw new DomainError("CONFLICT", `the experiment is ${exp.state}`);
    await cancelExperiment(ctx, exp.id, "canceled by a user");
    // A study arm canceled before its test evaluation ends its study: the other arms stop now.
    await wakeStudyArms(ctx, exp.id);
    return { id: exp.id, state: "canceled" as const };
  }),

  /** A failed experiment continues where it stopped (its stored answers and claimed test run kept). */
  resume: memberProcedure.input(Id).mutation(async ({ ctx, input }) => {
    await resumeExperiment(ctx.db, input.id);
    await ctx.queue.wakeExperiment(input.id);
    ctx.log.info({ experimentId: input.id }, "experiment resumed");
    return { id: input.id, state: "running" as const };
  }),
});

/** The whole run's time left (core remainingTime) from the split's size, the stored answers and the trainers' ETAs. */
async function timeLeft(db: Db, experimentId: string, splitId: string, config: ExperimentConfig) {
  const [split, counts, throughput, seeds] = await Promise.all([
    getSplit(db, splitId),
    evaluationCounts(db, experimentId),
    recentThroughput(db),
    trainStageData(db, experimentId),
  ]);
  const work = evaluationWork({
    devTasks: split?.counts.dev?.tasks ?? 0,
    testTasks: split?.counts.test?.tasks ?? 0,
    seeds: config.seeds.length,
    epochs: config.training.epochs,
    samples: config.evaluation.samples,
  });
  const now = Date.now();
  return remainingTime({
    work,
    ...counts,
    throughput,
    seeds: seeds.map((s) => ({
      state:
        s.stageState === "running" || s.stageState === "succeeded" || s.stageState === "failed"
          ? s.stageState
          : "pending",
      etaS: trainPoints(s.progress).at(-1)?.etaS ?? null,
      elapsedS: s.startedAt ? ((s.finishedAt?.getTime() ?? now) - s.startedAt.getTime()) / 1000 : null,
    })),
  });
}
