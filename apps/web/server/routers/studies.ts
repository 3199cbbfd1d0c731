import { z } from "zod";
import { DomainError, ExperimentConfig, StudyDefinition, planProgress, stagePlan } from "@agentlab/core";
import { getExperiment, getStudy, listStages, listStudies, listStudyArms, studyTestClaim } from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { createStudy, planStudy } from "../studies/service";
import { studyReport } from "../studies/report";

const Id = z.object({ id: z.string().uuid() });

export const studiesRouter = router({
  list: viewerProcedure.query(({ ctx }) => listStudies(ctx.db)),

  /** Power before cost: MDE per primary contrast and the arms' evaluation work, before anything runs. */
  plan: viewerProcedure.input(StudyDefinition).query(({ ctx, input }) => planStudy(ctx.db, input)),

  create: memberProcedure.input(StudyDefinition).mutation(async ({ ctx, input }) => {
    const { study, experimentIds } = await createStudy(ctx.db, input, ctx.viewer.userId);
    ctx.log.info({ studyId: study.id, arms: experimentIds.length }, "study created");
    for (const id of experimentIds) await ctx.queue.wakeExperiment(id);
    return { id: study.id, experimentIds };
  }),

  /** The study, each arm with its experiment's state and progress, the test claim, and the report once every arm is done. */
  byId: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const study = await getStudy(ctx.db, input.id);
    if (!study) throw new DomainError("NOT_FOUND", "no such study");
    const arms = await Promise.all(
      (await listStudyArms(ctx.db, study.id)).map(async (a) => {
        const exp = await getExperiment(ctx.db, a.experimentId);
        const rows = await listStages(ctx.db, a.experimentId);
        const plan = exp ? stagePlan(ExperimentConfig.parse(exp.config)) : [];
        const testEval = rows.find((r) => r.key === "test_eval");
        return {
          name: a.name,
          role: a.role,
          factor: a.factor,
          experimentId: a.experimentId,
          state: exp?.state ?? "missing",
          error: exp?.error ?? null,
          progress: planProgress(plan, rows),
          selected: rows.find((r) => r.key === "select")?.state === "succeeded",
          waitingForStudyClaim: testEval?.state === "running" && !study.testClaimId,
        };
      }),
    );
    const claim = study.testClaimId ? await studyTestClaim(ctx.db, study.testClaimId) : undefined;
    return {
      id: study.id,
      name: study.name,
      splitId: study.splitId,
      state: study.state,
      definition: study.definition,
      createdAt: study.createdAt,
      arms,
      testClaim: claim ? { id: claim.id, claimedAt: claim.claimedAt, models: claim.models } : null,
      report: await studyReport(ctx.db, study),
    };
  }),
});
