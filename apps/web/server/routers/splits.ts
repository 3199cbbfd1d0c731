import { z } from "zod";
import { ArchiveInput, ArchivedFilter, DomainError, NAME_MAX_LENGTH, SplitParams, SplitPart } from "@agentlab/core";
import {
  createSplit,
  deleteSplit,
  getExperiment,
  getSplit,
  grantTestOverride,
  listSplitGroups,
  listSplits,
  markSplitFinal,
  setArchived,
  splitTestReads,
} from "@agentlab/db";
import { adminProcedure, memberProcedure, router, viewerProcedure } from "../trpc/init";
import { resumeExperiment } from "../experiments/service";

const SplitId = z.object({ splitId: z.string().uuid() });

export const splitsRouter = router({
  list: viewerProcedure
    .input(z.object({ poolId: z.string().uuid().optional() }).and(ArchivedFilter).default({ includeArchived: false }))
    .query(({ ctx, input }) => listSplits(ctx.db, { poolId: input.poolId, hideArchived: !input.includeArchived })),

  /** Archiving is the only change a frozen split accepts: its tasks and hash stay as they are. */
  archive: memberProcedure.input(ArchiveInput).mutation(async ({ ctx, input }) => {
    const row = await setArchived(ctx.db, "split", input.id, input.archived);
    ctx.log.info({ splitId: input.id, archived: input.archived }, "split archive mark set");
    return row;
  }),

  /** Only while no experiment, collection or dataset uses the split; those keep it forever. */
  delete: adminProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    await deleteSplit(ctx.db, input.id);
    ctx.log.info({ splitId: input.id }, "split deleted");
    return { id: input.id };
  }),

  /** The split with its sizes per part, manifest hash and leakage report. */
  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const split = await getSplit(ctx.db, input.id);
    if (!split) throw new DomainError("NOT_FOUND", "no such split");
    return split;
  }),

  /** Every claim of the split's test part (the test-read ledger) and its final mark. */
  testReads: viewerProcedure.input(SplitId).query(({ ctx, input }) => splitTestReads(ctx.db, input.splitId)),

  /** After this, a test claim on the split is refused unless an admin overrides it with a reason. It stays final. */
  markFinal: adminProcedure
    .input(SplitId.extend({ note: z.string().max(2000).default("") }))
    .mutation(async ({ ctx, input }) => {
      const res = await markSplitFinal(ctx.db, { splitId: input.splitId, by: ctx.viewer.userId, note: input.note });
      ctx.log.info({ splitId: input.splitId, marked: res.marked }, "split marked final");
      return res;
    }),

  /**
   * Lets one experiment claim a final split's test part; the reason is printed with the claim on
   * every report. An experiment that failed on the refusal is resumed.
   */
  overrideFinal: adminProcedure
    .input(SplitId.extend({ experimentId: z.string().uuid(), reason: z.string().trim().min(1).max(2000) }))
    .mutation(async ({ ctx, input }) => {
      await grantTestOverride(ctx.db, { ...input, by: ctx.viewer.userId });
      ctx.log.info({ splitId: input.splitId, experimentId: input.experimentId }, "final split overridden");
      const exp = await getExperiment(ctx.db, input.experimentId);
      if (exp?.state !== "failed") return { resumed: false };
      await resumeExperiment(ctx.db, input.experimentId);
      await ctx.queue.wakeExperiment(input.experimentId);
      return { resumed: true };
    }),

  groups: viewerProcedure
    .input(
      z.object({
        splitId: z.string().uuid(),
        part: SplitPart.optional(),
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(500).default(100),
      }),
    )
    .query(({ ctx, input }) => listSplitGroups(ctx.db, input)),

  /**
   * Frozen on creation; the same pool snapshot and parameters return the existing split. Tasks
   * whose admission audit failed are left out unless `includeFailedAudits` (recorded on the split).
   */
  create: memberProcedure
    .input(
      z
        .object({
          poolId: z.string().uuid(),
          name: z.string().min(1).max(NAME_MAX_LENGTH).optional(),
          includeFailedAudits: z.boolean().default(false),
        })
        .and(SplitParams),
    )
    .mutation(async ({ ctx, input }) => {
      const { split, created } = await createSplit(ctx.db, { ...input, createdBy: ctx.viewer.userId });
      ctx.log.info(
        {
          splitId: split.id,
          poolId: split.poolId,
          manifestHash: split.manifestHash,
          created,
          admission: split.admission && { ...split.admission, excludedTaskIds: split.admission.excludedTaskIds.length },
        },
        "split created",
      );
      return {
        id: split.id,
        manifestHash: split.manifestHash,
        counts: split.counts,
        created,
        admission: split.admission,
      };
    }),
});
