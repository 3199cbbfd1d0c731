import { z } from "zod";
import { ArchiveInput, ArchivedFilter, DomainError, NAME_MAX_LENGTH, SplitParams, SplitPart } from "@agentlab/core";
import { createSplit, deleteSplit, getSplit, listSplitGroups, listSplits, setArchived } from "@agentlab/db";
import { adminProcedure, memberProcedure, router, viewerProcedure } from "../trpc/init";

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
