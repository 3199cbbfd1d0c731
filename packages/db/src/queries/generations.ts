import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { GenerationSplit } from "@agentlab/core";
import type { Db } from "../client";
import { generations } from "../schema";

// Stored answers of an experiment's evaluations and their grading state: the grade
// stage reads answers from here, so a lost grade job is retried from the stored text instead of
// generating again.

export type GenerationRow = typeof generations.$inferSelect;
export type NewGeneration = Omit<
  typeof generations.$inferInsert,
  "createdAt" | "gradeJobIds" | "gradeState" | "gradeError"
>;

/** Idempotent: a model's answers are written once; a re-run of the step keeps the stored ones. */
export async function insertGenerations(db: Db, rows: NewGeneration[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insert(generations)
      .values(rows.slice(i, i + 500))
      .onConflictDoNothing();
}

/**
 * Stored answers under these cache keys, from any experiment, one per key (the oldest): what a
 * later evaluation reuses instead of generating again (core generationCacheKey).
 */
export async function cachedGenerations(db: Db, keys: readonly string[]): Promise<GenerationRow[]> {
  const out: GenerationRow[] = [];
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    out.push(
      ...(await db
        .selectDistinctOn([generations.cacheKey])
        .from(generations)
        .where(inArray(generations.cacheKey, chunk))
        .orderBy(asc(generations.cacheKey), asc(generations.createdAt))),
    );
  }
  return out;
}

export async function listGenerations(
  db: Db,
  opts: { experimentId: string; split: GenerationSplit; modelKey?: string },
): Promise<GenerationRow[]> {
  const conds = [eq(generations.experimentId, opts.experimentId), eq(generations.split, opts.split)];
  if (opts.modelKey) conds.push(eq(generations.modelKey, opts.modelKey));
  return db
    .select()
    .from(generations)
    .where(and(...conds))
    .orderBy(asc(generations.modelKey), asc(generations.taskId), asc(generations.sampleIndex));
}

/** One stored answer: a task's sample of one model on one split (sampleIndex 0 for a one-answer evaluation). */
export type GenerationKey = {
  experimentId: string;
  /** train: the sampled answers of preference pairs. */
  split: GenerationSplit;
  modelKey: string;
  taskId: string;
  sampleIndex: number;
};
type Key = GenerationKey;
const byKey = (k: Key) =>
  and(
    eq(generations.experimentId, k.experimentId),
    eq(generations.split, k.split),
    eq(generations.modelKey, k.modelKey),
    eq(generations.taskId, k.taskId),
    eq(generations.sampleIndex, k.sampleIndex),
  );

/** Appends a grade job to the answer's attempts (still pending). */
export async function addGradeJob(db: Db, key: Key, jobId: string): Promise<void> {
  await db
    .update(generations)
    .set({ gradeJobIds: sql`array_append(${generations.gradeJobIds}, ${jobId}::uuid)` })
    .where(and(byKey(key), sql`not (${jobId}::uuid = any(${generations.gradeJobIds}))`));
}

export async function setGradeState(
  db: Db,
  key: Key,
  state: "graded" | "no_verdict",
  error: string | null = null,
): Promise<void> {
  await db.update(generations).set({ gradeState: state, gradeError: error }).where(byKey(key));
}

/** Pairs without a verdict, per split and model, for the report's exclusion counts. */
export async function noVerdictGenerations(db: Db, experimentId: string) {
  return db
    .select({
      split: generations.split,
      modelKey: generations.modelKey,
      taskId: generations.taskId,
      sampleIndex: generations.sampleIndex,
      error: generations.gradeError,
    })
    .from(generations)
    .where(and(eq(generations.experimentId, experimentId), eq(generations.gradeState, "no_verdict")))
    .orderBy(asc(generations.split), asc(generations.modelKey), asc(generations.taskId), asc(generations.sampleIndex));
}

/** Answers and unparsed answers (no usable code block) per split and model, for the report's check. */
export async function answerParseCounts(db: Db, experimentId: string) {
  const rows = await db
    .select({
      split: generations.split,
      modelKey: generations.modelKey,
      answers: sql<number>`count(*)::int`,
      unparsed: sql<number>`count(*) filter (where not ${generations.parsed})::int`,
    })
    .from(generations)
    .where(eq(generations.experimentId, experimentId))
    .groupBy(generations.split, generations.modelKey)
    .orderBy(asc(generations.split), asc(generations.modelKey));
  return rows;
}

/** Dev and test answers stored so far, and those with a verdict or given up on (the time-left estimate). */
export async function evaluationCounts(db: Db, experimentId: string) {
  const [row] = await db
    .select({
      generated: sql<number>`count(*)::int`,
      graded: sql<number>`count(*) filter (where ${generations.gradeState} <> 'pending')::int`,
    })
    .from(generations)
    .where(and(eq(generations.experimentId, experimentId), inArray(generations.split, ["dev", "test"])));
  return { generated: row?.generated ?? 0, graded: row?.graded ?? 0 };
}
