import { z } from "zod";
import { DomainError, PoolName, SplitPart } from "@agentlab/core";
import { decideMerge, exportTaskPage, getPool, listMergeProposals, listPools } from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";

export const PoolRef = z.union([z.object({ id: z.string().uuid() }), z.object({ name: PoolName })]);

export const poolsRouter = router({
  /** Every pool with task, group and split counts and its origins. */
  list: viewerProcedure.query(({ ctx }) => listPools(ctx.db)),

  byId: viewerProcedure.input(PoolRef).query(async ({ ctx, input }) => {
    const pool = await getPool(ctx.db, input);
    if (!pool) throw new DomainError("NOT_FOUND", "no such pool");
    return pool;
  }),

  mergeProposals: viewerProcedure
    .input(z.object({ poolId: z.string().uuid(), status: z.enum(["pending", "accepted", "rejected"]).optional() }))
    .query(({ ctx, input }) => listMergeProposals(ctx.db, input)),

  /** Accept (fold group B into group A for every task) or reject a near-duplicate proposal. */
  decideMerge: memberProcedure
    .input(z.object({ id: z.string().uuid(), accept: z.boolean() }))
    .mutation(({ ctx, input }) => decideMerge(ctx.db, { ...input, userId: ctx.viewer.userId })),

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
