import { z } from "zod";
import {
  DomainError,
  ExperimentConfig,
  GRPO_SAMPLE_KEY,
  parseJobResult,
  parseStageOutput,
  stagePlan,
} from "@agentlab/core";
import { grpoPoints, runCurve } from "@agentlab/core/experiments/training";
import { getExperiment, listStages } from "@agentlab/db";
import { trainStageData } from "@agentlab/db/queries/training";
import { router, viewerProcedure } from "../trpc/init";

// The experiment page's GRPO panel: each seed's grpo run as curves from the job's progress rows
// (one grpo_step event a step, read like the training and DPO panels'), its snapshots (each one a
// dev candidate) and the run's totals once it finished; with dynamic sampling, the pass-rate
// filter's counts (the grpo_sample stage's output).

export const grpoRouter = router({
  /** The pass-rate filter (recipe grpo.dynamicSampling): the start it measured, its state and counts; null without one. */
  promptFilter: viewerProcedure.input(z.object({ id: z.uuid() })).query(async ({ ctx, input }) => {
    const exp = await getExperiment(ctx.db, input.id);
    if (!exp) throw new DomainError("NOT_FOUND", `experiment ${input.id} not found`);
    const row = (await listStages(ctx.db, input.id)).find((r) => r.key === GRPO_SAMPLE_KEY);
    if (!row) return null;
    const out = parseStageOutput("grpo_sample", row.key, row.output);
    return { state: row.state, startLabel: out?.startLabel ?? null, counts: out?.filter ?? null };
  }),
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
