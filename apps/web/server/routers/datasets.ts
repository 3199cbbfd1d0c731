import { z } from "zod";
import { ArchiveInput, ArchivedFilter, DataQuality, DomainError } from "@agentlab/core";
import {
  datasetSamplesPage,
  deleteDataset,
  getDataset,
  getReplay,
  listDatasets,
  listReplays,
  setArchived,
  type DatasetRow,
} from "@agentlab/db";
import { adminProcedure, memberProcedure, router, viewerProcedure } from "../trpc/init";
import { createDataset, exportDataset, startReplay } from "../teacher/datasets";
import { enqueueTokenize } from "../teacher/token-counts";
import { budgetDataset } from "../teacher/budget";
import { shuffleAnswers } from "../teacher/shuffle";
import { syncTeacher } from "../teacher/loops";

const Id = z.object({ id: z.string().uuid() });

/**
 * A snapshot as the pages and the CLI read it: the token counts without their per-sample arrays
 * (one number a sample, which only the budget operation reads), and whether those exist.
 */
function slim<T extends { tokenCounts: DatasetRow["tokenCounts"] }>(d: T) {
  if (!d.tokenCounts) return { ...d, perSampleCounts: false };
  const { perSample, sampleTokens: _lengths, ...counts } = d.tokenCounts;
  return { ...d, tokenCounts: counts, perSampleCounts: perSample !== undefined };
}

export const datasetsRouter = router({
  list: viewerProcedure
    .input(
      z.object({ experimentId: z.string().uuid().optional() }).and(ArchivedFilter).default({ includeArchived: false }),
    )
    .query(async ({ ctx, input }) =>
      (await listDatasets(ctx.db, { experimentId: input.experimentId, hideArchived: !input.includeArchived })).map(
        slim,
      ),
    ),

  /** The snapshot itself never changes; the mark only hides it from lists and the experiment form. */
  archive: memberProcedure.input(ArchiveInput).mutation(async ({ ctx, input }) => {
    const row = await setArchived(ctx.db, "dataset", input.id, input.archived);
    ctx.log.info({ datasetId: input.id, archived: input.archived }, "dataset archive mark set");
    return row;
  }),

  /** Only a snapshot no experiment used and no replay derived from. */
  delete: adminProcedure.input(Id).mutation(async ({ ctx, input }) => {
    await deleteDataset(ctx.db, input.id);
    ctx.log.info({ datasetId: input.id }, "dataset deleted");
    return { id: input.id };
  }),

  byId: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const d = await getDataset(ctx.db, input.id);
    if (!d) throw new DomainError("NOT_FOUND", "no such dataset");
    return { ...slim(d), replays: await listReplays(ctx.db, d.id) };
  }),

  /**
   * An immutable snapshot of the candidates of one or more collections of one split: the passing
   * ones, or those of another answer quality (core teacher/quality.ts).
   */
  create: memberProcedure
    .input(
      z.object({
        name: z.string().min(1).max(200),
        splitId: z.string().uuid(),
        collectionIds: z.array(z.string().uuid()).min(1).max(100),
        experimentId: z.string().uuid().optional(),
        quality: DataQuality.optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await syncTeacher(ctx);
      const d = await createDataset(ctx, { ...input, createdBy: ctx.viewer.userId });
      ctx.log.info(
        { datasetId: d.id, hash: d.hash, samples: d.sampleCount, quality: d.quality },
        "dataset snapshot created",
      );
      return d;
    }),

  samples: viewerProcedure
    .input(
      z.object({
        id: z.string().uuid(),
        after: z.number().int().optional(),
        limit: z.number().int().min(1).max(200).default(50),
      }),
    )
    .query(({ ctx, input }) => datasetSamplesPage(ctx.db, input.id, input)),

  /** The JSONL bytes whose sha256 is the snapshot hash. */
  export: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const { dataset, jsonl } = await exportDataset(ctx, input.id);
    return { hash: dataset.hash, sampleCount: dataset.sampleCount, oracleSamples: dataset.oracleSamples, jsonl };
  }),

  /** Re-grades every sample before training; survivors form the verified snapshot. */
  replay: memberProcedure.input(Id).mutation(async ({ ctx, input }) => {
    const r = await startReplay(ctx, input.id);
    return { id: r.id, jobs: Object.keys(r.jobs).length };
  }),

  replayStatus: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const r = await getReplay(ctx.db, input.id);
    if (!r) throw new DomainError("NOT_FOUND", "no such replay");
    return r;
  }),

  /**
   * Token matching: a child snapshot of whole tasks drawn (stratified by source group, seeded) until
   * its supervised tokens reach B ± 0.5%, from the parent's per-sample counts.
   */
  budget: memberProcedure
    .input(
      z.object({
        id: z.string().uuid(),
        tokens: z.number().int().positive(),
        seed: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1),
        name: z.string().min(1).max(200).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const r = await budgetDataset(ctx, {
        datasetId: input.id,
        tokens: input.tokens,
        seed: input.seed,
        name: input.name,
        createdBy: ctx.viewer.userId,
      });
      ctx.log.info(
        { datasetId: r.dataset.id, parentId: input.id, tokens: r.budget.tokens, target: input.tokens },
        "budget snapshot created",
      );
      return { dataset: slim(r.dataset), budget: r.budget };
    }),

  /** A study's negative control: the snapshot's answers rotated across its prompts (teacher/shuffle.ts). */
  shuffle: memberProcedure
    .input(
      z.object({
        id: z.string().uuid(),
        seed: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const d = await shuffleAnswers(ctx, { datasetId: input.id, seed: input.seed, createdBy: ctx.viewer.userId });
      ctx.log.info({ datasetId: d.id, parentId: input.id }, "shuffled-answers control created");
      return slim(d);
    }),

  /** Supervised-token counts with the student model's tokenizer, computed by an agent. */
  tokenize: memberProcedure
    .input(z.object({ id: z.string().uuid(), model: z.string().min(1).max(500) }))
    .mutation(async ({ ctx, input }) => {
      const job = await enqueueTokenize(ctx, input.id, input.model);
      return { jobId: job.id };
    }),
});
