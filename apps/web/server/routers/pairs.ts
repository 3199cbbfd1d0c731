import { z } from "zod";
import { ChosenSource, DomainError, FailingLayer, PairSource, RejectedSource } from "@agentlab/core";
import { getExperiment, listPreferencePairs, preferencePairCounts } from "@agentlab/db";
import { browsePreferencePairs, preferencePairFigures } from "@agentlab/db/queries/pair-browser";
import { router, viewerProcedure } from "../trpc/init";

// Preference pairs of an experiment's DPO rounds: counts, a page of pairs, and the
// export (one JSON line per stored pair, every field, in the stored order).

const ByExperiment = z.object({
  experimentId: z.string().uuid(),
  round: z.number().int().min(0).optional(),
  pairSource: PairSource.optional(),
});
/** The pair browser's filters: a round, the pair source, the rejected answer's failing layer, either side's source. */
const PairFilter = ByExperiment.extend({
  failingLayer: FailingLayer.optional(),
  chosenSource: ChosenSource.optional(),
  rejectedSource: RejectedSource.optional(),
});

async function experimentOrThrow(ctx: { db: Parameters<typeof getExperiment>[0] }, id: string) {
  if (!(await getExperiment(ctx.db, id))) throw new DomainError("NOT_FOUND", `experiment ${id} not found`);
}

export const pairsRouter = router({
  /** Pairs per round and failing layer. */
  counts: viewerProcedure.input(z.object({ experimentId: z.string().uuid() })).query(async ({ ctx, input }) => {
    await experimentOrThrow(ctx, input.experimentId);
    return preferencePairCounts(ctx.db, input.experimentId);
  }),

  list: viewerProcedure
    .input(
      ByExperiment.extend({
        limit: z.number().int().min(1).max(500).default(50),
        offset: z.number().int().min(0).default(0),
      }),
    )
    .query(async ({ ctx, input }) => {
      await experimentOrThrow(ctx, input.experimentId);
      return listPreferencePairs(ctx.db, input);
    }),

  /** The pair browser's page: the pairs under its filters, the filtered total and its tasks. */
  browse: viewerProcedure
    .input(
      PairFilter.extend({
        limit: z.number().int().min(1).max(200).default(25),
        offset: z.number().int().min(0).default(0),
      }),
    )
    .query(async ({ ctx, input }) => {
      await experimentOrThrow(ctx, input.experimentId);
      return browsePreferencePairs(ctx.db, input);
    }),

  /** The browser's header: counts per round, layer and sources (whole experiment), margins under the filters. */
  figures: viewerProcedure.input(PairFilter).query(async ({ ctx, input }) => {
    await experimentOrThrow(ctx, input.experimentId);
    return preferencePairFigures(ctx.db, input);
  }),

  export: viewerProcedure.input(ByExperiment).query(async ({ ctx, input }) => {
    await experimentOrThrow(ctx, input.experimentId);
    const rows = await listPreferencePairs(ctx.db, {
      experimentId: input.experimentId,
      round: input.round,
      pairSource: input.pairSource,
    });
    const jsonl = rows
      .map(
        ({ id: _id, taskRowId: _row, createdAt, ...r }) =>
          `${JSON.stringify({ ...r, createdAt: createdAt.toISOString() })}\n`,
      )
      .join("");
    return { count: rows.length, jsonl };
  }),
});
