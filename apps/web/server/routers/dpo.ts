import { z } from "zod";
import { DomainError, DpoJobResult, ExperimentConfig, modelLabel, parseStageOutput, stagePlan } from "@agentlab/core";
import { dpoEpochDynamics, dpoPoints, epochMarks, runCurve } from "@agentlab/core/experiments/training";
import { getExperiment, listStages } from "@agentlab/db";
import { trainStageData } from "@agentlab/db/queries/training";
import { router, viewerProcedure } from "../trpc/init";

// The experiment page's DPO half: each seed's DPO run of each round as curves (the dpo
// job's progress rows, read like the training panel's) with each epoch's held-out dev-pair Δ
// log-probs, and each round's pairs stage summary.

async function planOf(ctx: { db: Parameters<typeof getExperiment>[0] }, id: string) {
  const exp = await getExperiment(ctx.db, id);
  if (!exp) throw new DomainError("NOT_FOUND", `experiment ${id} not found`);
  return stagePlan(ExperimentConfig.parse(exp.config));
}

export const dpoRouter = router({
  /** Per seed and round: loss, reward margin and preference accuracy by step (thinned to 1,500 points), epoch marks and means. */
  curves: viewerProcedure.input(z.object({ id: z.uuid() })).query(async ({ ctx, input }) => {
    const plan = await planOf(ctx, input.id);
    const targets = new Map(plan.flatMap((s) => (s.target?.model === "dpo" ? [[s.key, s.target] as const] : [])));
    const stages = await trainStageData(ctx.db, input.id, "dpo");
    const outputs = new Map((await listStages(ctx.db, input.id)).map((r) => [r.key, r.output]));
    return stages.flatMap((s) => {
      const t = targets.get(s.key);
      if (!t) return [];
      const points = dpoPoints(s.progress);
      const record = DpoJobResult.safeParse(s.job?.result);
      return [
        {
          ...runCurve(s, points),
          seed: t.seed,
          round: t.round,
          marks: epochMarks(points),
          // read from every point (thinning could skip an epoch's last step)
          dynamics: dpoEpochDynamics(points),
          // the finished run record's epoch means (what dev selection then scores, epoch by epoch)
          epochs: record.success
            ? record.data.snapshots.map((e) => ({
                epoch: e.epoch,
                step: e.step,
                trainLoss: e.train_loss,
                rewardMargin: e.reward_margin,
                preferenceAccuracy: e.preference_accuracy,
              }))
            : [],
          // each epoch scored on held-out dev pairs (a score job), or why none was
          heldOut: parseStageOutput("dpo", s.key, outputs.get(s.key))?.heldOut ?? null,
        },
      ];
    });
  }),

  /** Each round's pairs stage: the policy sampled, pairs built, skipped by reason, kept/dropped/down-weighted, stored. */
  rounds: viewerProcedure.input(z.object({ id: z.uuid() })).query(async ({ ctx, input }) => {
    const plan = await planOf(ctx, input.id);
    const rows = new Map((await listStages(ctx.db, input.id)).map((r) => [r.key, r]));
    return plan
      .filter((s) => s.kind === "pairs")
      .map((s) => {
        const row = rows.get(s.key);
        const out = parseStageOutput("pairs", s.key, row?.output);
        return {
          key: s.key,
          round: s.round ?? out?.round ?? 0,
          state: row?.state ?? "pending",
          policy: out ? modelLabel(out.policy) : null,
          built: out?.built ?? null,
          skipped: out?.skipped ?? {},
          tasksWithoutPairs: out?.tasksWithoutPairs ?? null,
          stored: out?.stored ?? null,
          stats: out?.stats ?? null,
        };
      });
  }),
});
