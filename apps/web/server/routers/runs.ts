import { z } from "zod";
import { DomainError, ExperimentConfig } from "@agentlab/core";
import { compareRecipes } from "@agentlab/core/experiments/compare";
import {
  CompareInput,
  ReportDigest,
  RunAnnotation,
  RunListInput,
  outcomeMatrix,
} from "@agentlab/core/experiments/runs";
import { epochLosses, epochMarks, restartMarks, runCurve, trainPoints } from "@agentlab/core/experiments/training";
import { getExperiment } from "@agentlab/db";
import { trainStageData } from "@agentlab/db/queries/training";
import { annotateRun, listRuns, recentBaseModels, reportsOf, runTags, setRunArchived } from "@agentlab/db/queries/runs";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";

// The runs table and the compare view. Figures come from the stored, immutable report
// JSON; nothing here writes to a recorded run except its tags, notes and archive mark.

export const runsRouter = router({
  list: viewerProcedure.input(RunListInput.prefault({})).query(({ ctx, input }) => listRuns(ctx.db, input)),

  tags: viewerProcedure.query(({ ctx }) => runTags(ctx.db)),

  /** Base models of earlier experiments, newest first (the form's picker). */
  models: viewerProcedure.query(({ ctx }) => recentBaseModels(ctx.db)),

  annotate: memberProcedure.input(RunAnnotation).mutation(async ({ ctx, input }) => {
    if (!(await annotateRun(ctx.db, input.id, input))) throw new DomainError("NOT_FOUND", "no such experiment");
    return { id: input.id };
  }),

  /** Archiving hides a finished run from the table; its jobs, data and report are kept (and it can be restored). */
  archive: memberProcedure.input(z.object({ id: z.uuid(), archived: z.boolean() })).mutation(async ({ ctx, input }) => {
    const exp = await getExperiment(ctx.db, input.id);
    if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
    if (input.archived && exp.state === "running")
      throw new DomainError("CONFLICT", "a running experiment cannot be archived; cancel it first");
    await setRunArchived(ctx.db, input.id, input.archived);
    return { id: input.id, archived: input.archived };
  }),

  /** Per seed: the loss/lr/tokens-per-second curve (thinned to 1,500 points), epoch marks, per-epoch eval loss, ETA. */
  training: viewerProcedure.input(z.object({ id: z.uuid() })).query(async ({ ctx, input }) => {
    const stages = await trainStageData(ctx.db, input.id);
    return stages.map((s) => {
      const points = trainPoints(s.progress);
      return {
        ...runCurve(s, points),
        seed: Number(s.key.replace(/^train:s/, "")),
        startedAt: s.startedAt,
        finishedAt: s.finishedAt,
        marks: epochMarks(points),
        restarts: restartMarks(s.progress),
        epochs: epochLosses(s.adapters, s.job?.result ?? null, points),
      };
    });
  }),

  /** Two or more experiments on the same split: their figures side by side and the per-task test outcomes. */
  compare: viewerProcedure.input(CompareInput).query(async ({ ctx, input }) => {
    const ids = [...new Set(input.ids)];
    const { rows } = await listRuns(ctx.db, { ...RunListInput.parse({ limit: ids.length }), ids });
    const missing = ids.filter((id) => !rows.some((r) => r.id === id));
    if (missing.length) throw new DomainError("NOT_FOUND", `no such experiment: ${missing.join(", ")}`);
    const splits = new Set(rows.map((r) => r.splitId));
    if (splits.size > 1)
      throw new DomainError(
        "PRECONDITION_FAILED",
        "these experiments use different splits; their test figures are not comparable",
      );
    const ordered = ids.map((id) => rows.find((r) => r.id === id)).filter((r) => r !== undefined);
    const bodies = new Map(
      (await reportsOf(ctx.db, ids)).map((r) => [r.experimentId, ReportDigest.safeParse(r.body).data ?? null]),
    );
    const runs = ordered.map((r) => {
      const report = bodies.get(r.id) ?? null;
      const cfg = ExperimentConfig.safeParse(report?.config);
      const c = cfg.success ? cfg.data : null;
      return {
        ...r,
        recipe: c && {
          epochs: c.training.epochs,
          learningRate: c.training.learningRate,
          batchSize: c.training.batchSize,
          loraR: c.training.lora.r,
          loraAlpha: c.training.lora.alpha,
          seeds: c.seeds,
          maxNewTokens: c.evaluation.maxNewTokens,
        },
        dev: report?.summary[0] ?? null,
        selected: report?.outcome.selectedLabel ?? null,
        headline: report?.outcome.headline ?? null,
      };
    });
    const matrix = outcomeMatrix(ordered.map((r) => ({ experimentId: r.id, tasks: bodies.get(r.id)?.tasks ?? [] })));
    // Every recipe and protocol field side by side, from the stored reports (null: no report yet).
    const sides = compareRecipes(
      ordered.map((r) => ({
        config: bodies.get(r.id)?.config ?? null,
        protocol: bodies.get(r.id)?.protocol?.protocol ?? null,
      })),
    );
    const curves = ordered.map((r) => ({
      experimentId: r.id,
      name: r.name,
      devCurve: bodies.get(r.id)?.devCurve ?? null,
    }));
    return { runs, matrix, ...sides, curves };
  }),
});
