import { z } from "zod";
import { CollectionInput, DomainError } from "@agentlab/core";
import {
  cacheMigrationPlan,
  collectionCandidates,
  collectionTaskSummary,
  collectionVerdictCounts,
  getCandidate,
  getCollection,
  ledgerTotals,
  listCollections,
} from "@agentlab/db";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { cancelCollection, wakeCollectionRuns } from "../teacher/collection-runs";
import { enqueueCollectionGrading } from "../teacher/grading";
import { createCollection } from "../teacher/collections";

const Id = z.object({ id: z.string().uuid() });

export const collectionsRouter = router({
  list: viewerProcedure
    .input(z.object({ experimentId: z.string().uuid().optional() }).default({}))
    .query(({ ctx, input }) => listCollections(ctx.db, input)),

  /** Progress, costs, reuse and verdict counts. */
  byId: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const col = await getCollection(ctx.db, input.id);
    if (!col) throw new DomainError("NOT_FOUND", "no such collection");
    return {
      ...col,
      verdicts: await collectionVerdictCounts(ctx.db, col.id),
      oracle: col.providerKind === "reference",
    };
  }),

  /** Creates the collection and wakes the leader, which runs it; test-split tasks are refused before anything is stored. */
  create: memberProcedure.input(CollectionInput).mutation(async ({ ctx, input }) => {
    const col = await createCollection(ctx, input, ctx.viewer.userId);
    ctx.log.info(
      { collectionId: col.id, providerId: col.providerId, tasks: col.tasksTotal, n: input.nSamples },
      "collection created",
    );
    await wakeCollectionRuns(ctx, col.id);
    return col;
  }),

  cancel: memberProcedure
    .input(Id)
    .mutation(async ({ ctx, input }) => ({ running: await cancelCollection(ctx, input.id) })),

  /** Enqueues grade jobs for candidates still without a verdict (e.g. after a collection ran with grade: false). */
  grade: memberProcedure
    .input(Id)
    .mutation(async ({ ctx, input }) => ({ pending: await enqueueCollectionGrading(ctx, input.id) })),

  tasks: viewerProcedure
    .input(
      z.object({
        id: z.string().uuid(),
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(500).default(100),
      }),
    )
    .query(({ ctx, input }) => collectionTaskSummary(ctx.db, input.id, input)),

  /** A task's candidates in this collection: answer, parse error, verdict and grader output. */
  candidates: viewerProcedure
    .input(z.object({ id: z.string().uuid(), taskRowId: z.string().uuid() }))
    .query(({ ctx, input }) => collectionCandidates(ctx.db, input.id, input.taskRowId)),

  candidate: viewerProcedure.input(Id).query(async ({ ctx, input }) => {
    const c = await getCandidate(ctx.db, input.id);
    if (!c) throw new DomainError("NOT_FOUND", "no such candidate");
    return c;
  }),

  ledger: viewerProcedure
    .input(
      z.object({
        by: z.enum(["provider", "experiment", "collection"]),
        experimentId: z.string().uuid().optional(),
        collectionId: z.string().uuid().optional(),
      }),
    )
    .query(({ ctx, input }) => ledgerTotals(ctx.db, input.by, input)),

  /** What a new pool snapshot reuses from an old one: candidates are keyed by fingerprint, so this is a plan, not a copy. */
  migrateCache: memberProcedure
    .input(z.object({ fromPoolId: z.string().uuid(), toPoolId: z.string().uuid() }))
    .mutation(({ ctx, input }) => cacheMigrationPlan(ctx.db, input.fromPoolId, input.toPoolId)),
});
