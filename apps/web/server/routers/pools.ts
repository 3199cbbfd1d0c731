import { z } from "zod";
import { ArchiveInput, ArchivedFilter, DomainError, PoolName, SplitPart } from "@agentlab/core";
import {
  decideMerge,
  decideMerges,
  deletePool,
  exportTaskPage,
  getPool,
  listMergeProposals,
  listPools,
  poolClusterProposals,
  setArchived,
} from "@agentlab/db";
import { adminProcedure, memberProcedure, router, viewerProcedure } from "../trpc/init";

export const PoolRef = z.union([z.object({ id: z.string().uuid() }), z.object({ name: PoolName })]);

export const poolsRouter = router({
  /** Every pool with task, group and split counts and its origins; archived ones when asked. */
  list: viewerProcedure
    .input(ArchivedFilter.default({ includeArchived: false }))
    .query(({ ctx, input }) => listPools(ctx.db, { hideArchived: !input.includeArchived })),

  /** Hides the pool from lists and pickers (or shows it again); its tasks and splits are untouched. */
  archive: memberProcedure.input(ArchiveInput).mutation(async ({ ctx, input }) => {
    const row = await setArchived(ctx.db, "pool", input.id, input.archived);
    ctx.log.info({ poolId: input.id, archived: input.archived }, "pool archive mark set");
    return row;
  }),

  /** Only a pool no split was made from (a split pins its tasks); never the built-in pool. */
  delete: adminProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    await deletePool(ctx.db, input.id);
    ctx.log.info({ poolId: input.id }, "pool deleted");
    return { id: input.id };
  }),

  byId: viewerProcedure.input(PoolRef).query(async ({ ctx, input }) => {
    const pool = await getPool(ctx.db, input);
    if (!pool) throw new DomainError("NOT_FOUND", "no such pool");
    return pool;
  }),

  /** One page (most similar first) and the total, so a pool with thousands of proposals stays one page long. */
  mergeProposals: viewerProcedure
    .input(
      z.object({
        poolId: z.string().uuid(),
        status: z.enum(["pending", "accepted", "rejected"]).optional(),
        offset: z.number().int().min(0).default(0),
        limit: z.number().int().min(1).max(200).default(50),
      }),
    )
    .query(({ ctx, input }) => listMergeProposals(ctx.db, input)),

  /**
   * Tasks of several source groups sharing one reference (identical or near-identical), with a
   * proposed cluster each: declared in the task file, it becomes the report's unit of dependence.
   */
  clusterProposals: viewerProcedure
    .input(z.object({ poolId: z.string().uuid() }))
    .query(({ ctx, input }) => poolClusterProposals(ctx.db, input.poolId)),

  /** Accept (fold group B into group A for every task) or reject a near-duplicate proposal. */
  decideMerge: memberProcedure
    .input(z.object({ id: z.string().uuid(), accept: z.boolean() }))
    .mutation(({ ctx, input }) => decideMerge(ctx.db, { ...input, userId: ctx.viewer.userId })),

  /** The same decision for several proposals (a page's selection), in one transaction. */
  decideMerges: memberProcedure
    .input(z.object({ ids: z.array(z.string().uuid()).min(1).max(200), accept: z.boolean() }))
    .mutation(({ ctx, input }) => decideMerges(ctx.db, { ...input, userId: ctx.viewer.userId })),

  /** One keyset page of full Task spec v1 records (the CLI's `pools export` writes them as JSONL). */
  exportPage: viewerProcedure
    .input(
      z.object({
        poolId: z.string().uuid(),
        splitId: z.string().uuid().optional(),
        part: SplitPart.optional(),
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(1000).default(500),
      }),
    )
    .query(({ ctx, input }) => {
      if (input.part && !input.splitId) throw new DomainError("BAD_REQUEST", "a part needs a split");
      return exportTaskPage(ctx.db, input);
    }),
});
