import { and, eq, sql } from "drizzle-orm";
import type { GenerationSplit } from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { sftDatasets } from "../schema";
import type { DatasetRow } from "./datasets";

// The teacher module's background reads and writes (grade sync, replays, tokenize sync,
// snapshots derived from another): kept here so that apps/web/server holds no SQL.

/** Candidates of a collection still without a verdict. */
export async function ungradedCandidateCount(db: Db, collectionId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(distinct c.id)::int as n from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id
        where i.collection_id = ${collectionId} and c.verdict is null`,
  );
  return row?.n ?? 0;
}

/** Collections in `grading` whose every candidate has a verdict become `done` (one statement, so two syncs cannot race). */
export async function closeGradedCollections(db: Db): Promise<void> {
  await queryRows(
    db,
    sql`update teacher_collections col set state = 'done', finished_at = now()
        where col.state = 'grading' and not exists (
          select 1 from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id
          where i.collection_id = col.id and c.verdict is null)`,
  );
}

/** Replays whose grade jobs are not all read back yet. */
export async function gradingReplayIds(db: Db): Promise<string[]> {
  return (await queryRows<{ id: string }>(db, sql`select id from sft_replays where state = 'grading'`)).map(
    (r) => r.id,
  );
}

/** Succeeded tokenize jobs of datasets without token counts yet (payload and result still to be read by their contract). */
export async function finishedTokenizeJobs(db: Db): Promise<{ payload: unknown; result: unknown }[]> {
  return queryRows<{ payload: unknown; result: unknown }>(
    db,
    sql`select j.payload, j.result from jobs j join sft_datasets d on d.id::text = j.payload->>'datasetId'
        where j.type = 'tokenize' and j.state = 'succeeded' and d.token_counts is null`,
  );
}

/** Models of an experiment split that have stored answers. */
export async function modelsWithGenerations(
  db: Db,
  experimentId: string,
  split: GenerationSplit,
): Promise<Set<string>> {
  const rows = await queryRows<{ model: string }>(
    db,
    sql`select distinct model_key as model from experiment_generations where experiment_id = ${experimentId} and split = ${split}`,
  );
  return new Set(rows.map((r) => r.model));
}

/** The snapshot derived from `parentId` under `name` (a re-run finds the child it made before). */
export async function childDatasetNamed(db: Db, parentId: string, name: string): Promise<DatasetRow | undefined> {
  const [row] = await db
    .select()
    .from(sftDatasets)
    .where(and(eq(sftDatasets.parentId, parentId), eq(sftDatasets.name, name)))
    .limit(1);
  return row;
}
