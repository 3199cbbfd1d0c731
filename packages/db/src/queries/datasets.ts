import { and, asc, desc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import type { Db } from "../client";
import {
  jobs,
  splitAssignments,
  sftDatasets,
  sftReplays,
  sftSamples,
  tasks,
  teacherCandidates,
  teacherCollectionItems,
  teacherCollections,
  type TokenCounts,
} from "../schema";

export type DatasetRow = typeof sftDatasets.$inferSelect;
export type SampleRow = typeof sftSamples.$inferSelect;
export type ReplayRow = typeof sftReplays.$inferSelect;

/**
 * Candidates of the given collections (only the passing ones with `passingOnly`), one row per
 * (task, candidate), with the task they answer and its part in the split. Callers refuse non-train
 * parts (SFT data is train-only; the sft_samples trigger refuses them too).
 */
export async function snapshotCandidates(
  db: Db,
  opts: { splitId: string; collectionIds: string[]; passingOnly: boolean },
) {
  const cols = await db
    .select({ id: teacherCollections.id, splitId: teacherCollections.splitId })
    .from(teacherCollections)
    .where(inArray(teacherCollections.id, opts.collectionIds));
  if (cols.length !== new Set(opts.collectionIds).size) throw new DomainError("NOT_FOUND", "unknown collection");
  if (cols.some((c) => c.splitId !== opts.splitId))
    throw new DomainError("BAD_REQUEST", "all collections of a dataset must share one split");
  return db
    .selectDistinctOn([tasks.id, teacherCandidates.id], {
      task: tasks,
      candidate: teacherCandidates,
      part: splitAssignments.part,
    })
    .from(teacherCollectionItems)
    .innerJoin(teacherCandidates, eq(teacherCandidates.id, teacherCollectionItems.candidateId))
    .innerJoin(tasks, eq(tasks.id, teacherCollectionItems.taskRowId))
    .innerJoin(
      splitAssignments,
      and(eq(splitAssignments.taskRowId, tasks.id), eq(splitAssignments.splitId, opts.splitId)),
    )
    .where(
      and(
        inArray(teacherCollectionItems.collectionId, opts.collectionIds),
        opts.passingOnly ? eq(teacherCandidates.verdict, "pass") : undefined,
      ),
    );
}

export type NewDataset = Omit<typeof sftDatasets.$inferInsert, "id" | "createdAt" | "tokenCounts">;
export type NewSample = Omit<typeof sftSamples.$inferInsert, "datasetId">;

export async function insertDataset(db: Db, dataset: NewDataset, samples: NewSample[]): Promise<DatasetRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(sftDatasets).values(dataset).returning();
    if (!row) throw new DomainError("INTERNAL", "dataset insert returned nothing");
    for (let i = 0; i < samples.length; i += 500)
      await tx.insert(sftSamples).values(samples.slice(i, i + 500).map((s) => ({ ...s, datasetId: row.id })));
    return row;
  });
}

export async function getDataset(db: Db, id: string): Promise<DatasetRow | undefined> {
  const [row] = await db.select().from(sftDatasets).where(eq(sftDatasets.id, id));
  return row;
}

export async function listDatasets(db: Db, opts: { experimentId?: string; hideArchived?: boolean } = {}) {
  return db
    .select()
    .from(sftDatasets)
    .where(
      and(
        opts.experimentId ? eq(sftDatasets.experimentId, opts.experimentId) : undefined,
        opts.hideArchived ? isNull(sftDatasets.archivedAt) : undefined,
      ),
    )
    .orderBy(desc(sftDatasets.createdAt))
    .limit(500);
}

export async function datasetSamplesPage(
  db: Db,
  datasetId: string,
  opts: { after?: number; limit: number },
): Promise<{ items: SampleRow[]; nextCursor: number | null }> {
  const rows = await db
    .select()
    .from(sftSamples)
    .where(
      and(
        eq(sftSamples.datasetId, datasetId),
        opts.after !== undefined ? gt(sftSamples.ordinal, opts.after) : undefined,
      ),
    )
    .orderBy(asc(sftSamples.ordinal))
    .limit(opts.limit + 1);
  const items = rows.slice(0, opts.limit);
  return { items, nextCursor: rows.length > opts.limit ? (items[items.length - 1]?.ordinal ?? null) : null };
}

/** Every sample in order, with its task; `candidate` is null for a sample made from an episode. */
export async function allDatasetSamples(db: Db, datasetId: string) {
  return db
    .select({ sample: sftSamples, candidate: teacherCandidates, task: tasks })
    .from(sftSamples)
    .leftJoin(teacherCandidates, eq(teacherCandidates.id, sftSamples.candidateId))
    .innerJoin(tasks, eq(tasks.id, sftSamples.taskRowId))
    .where(eq(sftSamples.datasetId, datasetId))
    .orderBy(asc(sftSamples.ordinal));
}

/** Supervised-token counts are written once (by the tokenize job) and never changed afterwards. */
export async function setDatasetTokenCounts(db: Db, id: string, counts: TokenCounts): Promise<boolean> {
  const rows = await db
    .update(sftDatasets)
    .set({ tokenCounts: counts })
    .where(and(eq(sftDatasets.id, id), isNull(sftDatasets.tokenCounts)))
    .returning({ id: sftDatasets.id });
  return rows.length > 0;
}

export async function insertReplay(db: Db, datasetId: string, jobIds: Record<string, string>): Promise<ReplayRow> {
  const [row] = await db.insert(sftReplays).values({ datasetId, jobs: jobIds }).returning();
  if (!row) throw new DomainError("INTERNAL", "replay insert returned nothing");
  return row;
}

export async function getReplay(db: Db, id: string): Promise<ReplayRow | undefined> {
  const [row] = await db.select().from(sftReplays).where(eq(sftReplays.id, id));
  return row;
}

export async function listReplays(db: Db, datasetId: string) {
  return db.select().from(sftReplays).where(eq(sftReplays.datasetId, datasetId)).orderBy(desc(sftReplays.createdAt));
}

export async function finishReplay(
  db: Db,
  id: string,
  patch: Pick<ReplayRow, "state" | "kept" | "dropped" | "resultDatasetId">,
): Promise<boolean> {
  const rows = await db
    .update(sftReplays)
    .set({ ...patch, finishedAt: sql`now()` })
    .where(and(eq(sftReplays.id, id), eq(sftReplays.state, "grading")))
    .returning({ id: sftReplays.id });
  return rows.length > 0;
}

export async function jobsByIds(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({ id: jobs.id, state: jobs.state, result: jobs.result, error: jobs.error })
    .from(jobs)
    .where(inArray(jobs.id, ids));
}
