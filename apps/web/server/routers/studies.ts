import { z } from "zod";
import { StudyDefinition } from "@agentlab/core";
import { listStudies } from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { createStudy, planStudy } from "../studies/service";
import { studyView } from "../studies/view";

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
  byId: viewerProcedure.input(Id).query(({ ctx, input }) => studyView(ctx.db, input.id)),
});
