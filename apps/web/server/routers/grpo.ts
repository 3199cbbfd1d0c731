import { z } from "zod";
import { DomainError, ExperimentConfig, parseJobResult, stagePlan } from "@agentlab/core";
import { grpoPoints, runCurve } from "@agentlab/core/experiments/training";
import { getExperiment } from "@agentlab/db";
import { trainStageData } from "@agentlab/db/queries/training";
import { router, viewerProcedure } from "../trpc/init";

// The experiment page's GRPO panel: each seed's grpo run as curves from the job's progress rows
// (one grpo_step event a step, read like the training and DPO panels'), its snapshots (each one a
// dev candidate) and the run's totals once it finished.

export const grpoRouter = router({
  /** Per seed: reward, pass share, groups without signal, KL, length and the audit by step (thinned to 1,500 points), and the snapshots. */
  curves: viewerProcedure.input(z.object({ id: z.uuid() })).query(async ({ ctx, input }) => {
    const exp = await getExperiment(ctx.db, input.id);
    if (!exp) throw new DomainError("NOT_FOUND", `experiment ${input.id} not found`);
    const targets = new Map(
      stagePlan(ExperimentConfig.parse(exp.config)).flatMap((s) =>
        s.target?.model === "grpo" ? [[s.key, s.target] as const] : [],
      ),
    );
    return (await trainStageData(ctx.db, input.id, "grpo")).flatMap((s) => {
      const t = targets.get(s.key);
      if (!t) return [];
      const record = parseJobResult("grpo", s.job?.result);
      return [
        {
          ...runCurve(s, grpoPoints(s.progress)),
          seed: t.seed,
          snapshots: (record?.snapshots ?? []).map((x) => ({
            snapshot: x.epoch,
            step: x.step,
            rewardMean: x.reward_mean,
          })),
          totals: record
            ? { steps: record.steps, graded: record.graded_completions, maskedGroups: record.masked_groups }
            : null,
        },
      ];
    });
  }),
});
