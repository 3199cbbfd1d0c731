import { and, asc, desc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import {
  DomainError,
  storableJson,
  storableText,
  TERMINAL_STATES,
  type GradeResult,
  type GradeVerdict,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import {
  jobs,
  splitAssignments,
  tasks,
  teacherCandidates,
  teacherCollectionItems,
  teacherCollections,
  teacherLedger,
} from "../schema";

export type CollectionRow = typeof teacherCollections.$inferSelect;
export type CandidateRow = typeof teacherCandidates.$inferSelect;
export type NewCandidate = typeof teacherCandidates.$inferInsert;
export type TaskRowForCollect = typeof tasks.$inferSelect & { part: "train" | "dev" | "test" };

/**
 * The tasks a collection may ask a teacher about. Test-split tasks are refused here, by the
 * collection code itself, from the split assignment: whether asked for by part or by task id.
 */
export async function collectableTasks(
  db: Db,
  opts: { splitId: string; parts: readonly string[]; taskIds?: readonly string[] | null },
): Promise<TaskRowForCollect[]> {
  if (opts.parts.includes("test"))
    throw new DomainError("PRECONDITION_FAILED", "test-split tasks never reach a teacher: remove the test part");
  const [split] = await queryRows<{ frozen: boolean }>(db, sql`select frozen from splits where id = ${opts.splitId}`);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  if (!split.frozen) throw new DomainError("PRECONDITION_FAILED", "the split is not frozen");
  const where = [eq(splitAssignments.splitId, opts.splitId)];
  if (opts.taskIds) where.push(inArray(splitAssignments.taskId, [...opts.taskIds]));
  else where.push(inArray(splitAssignments.part, opts.parts as ("train" | "dev")[]));
  const rows = await db
    .select({ t: tasks, part: splitAssignments.part })
    .from(splitAssignments)
    .innerJoin(tasks, eq(tasks.id, splitAssignments.taskRowId))
    .where(and(...where))
    .orderBy(sql`${tasks.taskId} collate "C"`);
  if (opts.taskIds) {
    const test = rows.filter((r) => r.part === "test").map((r) => r.t.taskId);
    if (test.length > 0)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `test-split tasks never reach a teacher: ${test.slice(0, 10).join(", ")}${test.length > 10 ? ` and ${test.length - 10} more` : ""}`,
      );
    const found = new Set(rows.map((r) => r.t.taskId));
    const missing = opts.taskIds.filter((id) => !found.has(id));
    if (missing.length > 0) throw new DomainError("NOT_FOUND", `not in the split: ${missing.slice(0, 10).join(", ")}`);
    const other = rows.filter((r) => !opts.parts.includes(r.part)).map((r) => r.t.taskId);
    if (other.length > 0)
      throw new DomainError("BAD_REQUEST", `not in parts ${opts.parts.join("/")}: ${other.slice(0, 10).join(", ")}`);
  }
  // Belt and braces: whatever the filter above, no row of the test part leaves this function.
  return rows.filter((r) => r.part !== "test").map((r) => ({ ...r.t, part: r.part }));
}

export async function insertCollection(db: Db, values: typeof teacherCollections.$inferInsert): Promise<CollectionRow> {
  const [row] = await db.insert(teacherCollections).values(values).returning();
  if (!row) throw new DomainError("INTERNAL", "collection insert returned nothing");
  return row;
}

export async function getCollection(db: Db, id: string): Promise<CollectionRow | undefined> {
  const [row] = await db.select().from(teacherCollections).where(eq(teacherCollections.id, id));
  return row;
}

export async function listCollections(db: Db, opts: { experimentId?: string; limit?: number } = {}) {
  return db
    .select()
    .from(teacherCollections)
    .where(opts.experimentId ? eq(teacherCollections.experimentId, opts.experimentId) : undefined)
    .orderBy(desc(teacherCollections.createdAt))
    .limit(opts.limit ?? 200);
}

export async function updateCollection(
  db: Db,
  id: string,
  patch: Partial<typeof teacherCollections.$inferInsert>,
): Promise<void> {
  await db.update(teacherCollections).set(patch).where(eq(teacherCollections.id, id));
}

/** The states in which a collection still has teacher calls to make (its run is the leader's). */
const ACTIVE_STATES = ["queued", "running"] as const;

/** Collections whose run has not ended: what the leader starts, or resumes after a restart. */
export async function activeCollectionIds(db: Db): Promise<string[]> {
  const rows = await db
    .select({ id: teacherCollections.id })
    .from(teacherCollections)
    .where(inArray(teacherCollections.state, [...ACTIVE_STATES]))
    .orderBy(asc(teacherCollections.createdAt));
  return rows.map((r) => r.id);
}

/**
 * Updates a collection only while its run has not ended; false when it had (a cancel landed
 * first, say), so that the run's last write never overwrites a user's cancel.
 */
export async function updateActiveCollection(
  db: Db,
  id: string,
  patch: Partial<typeof teacherCollections.$inferInsert>,
): Promise<boolean> {
  const rows = await db
    .update(teacherCollections)
    .set(patch)
    .where(and(eq(teacherCollections.id, id), inArray(teacherCollections.state, [...ACTIVE_STATES])))
    .returning({ id: teacherCollections.id });
  return rows.length > 0;
}

export type CollectionDelta = {
  done?: number;
  failed?: number;
  reused?: number;
  costSaved?: number;
  tokensIn?: number;
  tokensOut?: number;
  cost?: number;
};

/** Counters move by increments in SQL so that concurrent workers never lose an update. */
export async function bumpCollection(db: Db, id: string, d: CollectionDelta): Promise<CollectionRow | undefined> {
  const c = teacherCollections;
  const [row] = await db
    .update(c)
    .set({
      samplesDone: sql`${c.samplesDone} + ${d.done ?? 0}`,
      samplesFailed: sql`${c.samplesFailed} + ${d.failed ?? 0}`,
      reused: sql`${c.reused} + ${d.reused ?? 0}`,
      costSavedUsd: sql`${c.costSavedUsd} + ${d.costSaved ?? 0}`,
      tokensIn: sql`${c.tokensIn} + ${d.tokensIn ?? 0}`,
      tokensOut: sql`${c.tokensOut} + ${d.tokensOut ?? 0}`,
      costUsd: sql`${c.costUsd} + ${d.cost ?? 0}`,
    })
    .where(eq(c.id, id))
    .returning();
  return row;
}

export async function findCandidate(db: Db, cacheKey: string): Promise<CandidateRow | undefined> {
  const [row] = await db.select().from(teacherCandidates).where(eq(teacherCandidates.cacheKey, cacheKey));
  return row;
}

/**
 * Inserts a candidate; when another run stored the same key first, that one wins and is returned.
 * The model's text is stored through core's storableText: one answer with a NUL in it would
 * otherwise fail this insert, and with it the collection.
 */
export async function insertCandidate(db: Db, values: NewCandidate): Promise<{ row: CandidateRow; inserted: boolean }> {
  const [row] = await db
    .insert(teacherCandidates)
    .values({
      ...values,
      answer: storableText(values.answer),
      files: values.files ? storableJson(values.files) : values.files,
      parseError: values.parseError ? storableText(values.parseError) : values.parseError,
      finishReason: values.finishReason ? storableText(values.finishReason) : values.finishReason,
    })
    .onConflictDoNothing({ target: teacherCandidates.cacheKey })
    .returning();
  if (row) return { row, inserted: true };
  const existing = await findCandidate(db, values.cacheKey);
  if (!existing) throw new DomainError("INTERNAL", "candidate conflict without a row");
  return { row: existing, inserted: false };
}

export async function linkCollectionItem(db: Db, v: typeof teacherCollectionItems.$inferInsert): Promise<boolean> {
  const rows = await db
    .insert(teacherCollectionItems)
    .values(v)
    .onConflictDoNothing()
    .returning({ id: teacherCollectionItems.candidateId });
  return rows.length > 0;
}

export async function collectionItemKeys(db: Db, collectionId: string): Promise<Set<string>> {
  const rows = await db
    .select({ t: teacherCollectionItems.taskRowId, i: teacherCollectionItems.sampleIndex })
    .from(teacherCollectionItems)
    .where(eq(teacherCollectionItems.collectionId, collectionId));
  return new Set(rows.map((r) => `${r.t}:${r.i}`));
}

/** Candidates of a collection that parsed, have no verdict and no grade job yet, with the task to grade against. */
export async function candidatesToGrade(db: Db, collectionId: string) {
  return db
    .selectDistinctOn([teacherCandidates.id], { candidate: teacherCandidates, task: tasks })
    .from(teacherCollectionItems)
    .innerJoin(teacherCandidates, eq(teacherCandidates.id, teacherCollectionItems.candidateId))
    .innerJoin(tasks, eq(tasks.id, teacherCollectionItems.taskRowId))
    .where(
      and(
        eq(teacherCollectionItems.collectionId, collectionId),
        isNull(teacherCandidates.verdict),
        isNull(teacherCandidates.gradeJobId),
        isNotNull(teacherCandidates.files),
      ),
    );
}

/**
 * The collection's candidates whose verdict is `infra_error` (the grader never judged the answer:
 * a refused result, a lost agent, a version mismatch) made ungraded again, so the collection's
 * grading grades them anew instead of inheriting the failure from the cache. Returns how many.
 */
export async function reopenInfraErrorCandidates(db: Db, collectionId: string): Promise<number> {
  const rows = await db
    .update(teacherCandidates)
    .set({ verdict: null, verdictReasons: null, gradeResult: null, gradeJobId: null, gradedAt: null })
    .where(
      and(
        eq(teacherCandidates.verdict, "infra_error"),
        inArray(
          teacherCandidates.id,
          db
            .select({ id: teacherCollectionItems.candidateId })
            .from(teacherCollectionItems)
            .where(eq(teacherCollectionItems.collectionId, collectionId)),
        ),
      ),
    )
    .returning({ id: teacherCandidates.id });
  return rows.length;
}

export async function setCandidateGradeJob(db: Db, candidateId: string, jobId: string): Promise<void> {
  await db
    .update(teacherCandidates)
    .set({ gradeJobId: jobId })
    .where(and(eq(teacherCandidates.id, candidateId), isNull(teacherCandidates.verdict)));
}

/** Candidates whose grade job has ended but whose verdict is not recorded yet (results: by job id, once per batch). */
export async function finishedGradeJobs(db: Db, limit = 500) {
  return db
    .select({
      candidateId: teacherCandidates.id,
      jobId: jobs.id,
      type: jobs.type,
      state: jobs.state,
      error: jobs.error,
      reason: jobs.terminalReason,
    })
    .from(teacherCandidates)
    .innerJoin(jobs, eq(jobs.id, teacherCandidates.gradeJobId))
    .where(and(isNull(teacherCandidates.verdict), inArray(jobs.state, [...TERMINAL_STATES])))
    .limit(limit);
}

export async function recordVerdict(
  db: Db,
  candidateId: string,
  v: { verdict: GradeVerdict; reasons: string[]; result: GradeResult | null },
): Promise<void> {
  await db
    .update(teacherCandidates)
    .set({
      verdict: v.verdict,
      verdictReasons: v.reasons.map(storableText),
      gradeResult: v.result && storableJson(v.result),
      gradedAt: sql`now()`,
    })
    .where(eq(teacherCandidates.id, candidateId));
}

export type CollectionTaskSummary = {
  taskRowId: string;
  taskKey: string;
  samples: number;
  graded: number;
  passed: number;
  malformed: number;
  reused: number;
};

export async function collectionTaskSummary(
  db: Db,
  collectionId: string,
  opts: { after?: string; limit: number },
): Promise<CollectionTaskSummary[]> {
  return queryRows<CollectionTaskSummary>(
    db,
    sql`select t.id as "taskRowId", t.task_id as "taskKey", count(*)::int as samples, count(c.verdict)::int as graded,
          count(*) filter (where c.verdict = 'pass')::int as passed, count(c.parse_error)::int as malformed, count(*) filter (where i.reused)::int as reused
        from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id join tasks t on t.id = i.task_row_id
        where i.collection_id = ${collectionId} ${opts.after !== undefined ? sql`and t.task_id collate "C" > ${opts.after}` : sql``}
        group by t.id, t.task_id order by t.task_id collate "C" limit ${opts.limit}`,
  );
}

export async function collectionVerdictCounts(db: Db, collectionId: string): Promise<Record<string, number>> {
  const rows = await queryRows<{ verdict: string | null; n: number }>(
    db,
    sql`select c.verdict, count(*)::int as n from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id where i.collection_id = ${collectionId} group by c.verdict`,
  );
  return Object.fromEntries(rows.map((r) => [r.verdict ?? "ungraded", r.n]));
}

export async function collectionCandidates(db: Db, collectionId: string, taskRowId: string) {
  return db
    .select({
      sampleIndex: teacherCollectionItems.sampleIndex,
      reused: teacherCollectionItems.reused,
      candidate: teacherCandidates,
    })
    .from(teacherCollectionItems)
    .innerJoin(teacherCandidates, eq(teacherCandidates.id, teacherCollectionItems.candidateId))
    .where(and(eq(teacherCollectionItems.collectionId, collectionId), eq(teacherCollectionItems.taskRowId, taskRowId)))
    .orderBy(asc(teacherCollectionItems.sampleIndex));
}

export async function getCandidate(db: Db, id: string): Promise<CandidateRow | undefined> {
  const [row] = await db.select().from(teacherCandidates).where(eq(teacherCandidates.id, id));
  return row;
}

/**
 * What a new pool snapshot can reuse: candidates are keyed by task fingerprint, so a task of the
 * target pool whose fingerprint has candidates from the source pool reuses them (and their verdicts,
 * since hidden tests are part of the fingerprint) without any copy.
 */
export async function cacheMigrationPlan(db: Db, fromPoolId: string, toPoolId: string) {
  const [row] = await queryRows<{
    targetTasks: number;
    matchedTasks: number;
    candidates: number;
    graded: number;
    costUsd: number;
  }>(
    db,
    sql`with target as (select id, fingerprint from tasks where pool_id = ${toPoolId}),
             src as (select distinct fingerprint from tasks where pool_id = ${fromPoolId}),
             cands as (select c.* from teacher_candidates c join src on src.fingerprint = c.fingerprint)
        select (select count(*) from target)::int as "targetTasks",
               (select count(*) from target where fingerprint in (select fingerprint from cands))::int as "matchedTasks",
               (select count(*) from cands where fingerprint in (select fingerprint from target))::int as candidates,
               (select count(*) from cands where verdict is not null and fingerprint in (select fingerprint from target))::int as graded,
               (select coalesce(sum(cost_usd), 0) from cands where fingerprint in (select fingerprint from target))::float8 as "costUsd"`,
  );
  return row ?? { targetTasks: 0, matchedTasks: 0, candidates: 0, graded: 0, costUsd: 0 };
}

type ItemRef = { collectionId: string; taskRowId: string; sampleIndex: number };

/**
 * A new answer, its ledger line, the collection item and the counters in one transaction: one
 * commit per sample instead of four (the collection row is a hot spot every worker updates).
 */
export async function recordFreshCandidate(
  db: Db,
  v: {
    candidate: NewCandidate;
    ledger: Omit<typeof teacherLedger.$inferInsert, "candidateId">;
    item: ItemRef;
    delta: CollectionDelta;
  },
) {
  return db.transaction(async (tx) => {
    const res = await insertCandidate(tx, v.candidate);
    await tx.insert(teacherLedger).values({ ...v.ledger, candidateId: res.row.id });
    await linkCollectionItem(tx, { ...v.item, candidateId: res.row.id, reused: !res.inserted });
    await bumpCollection(tx, v.item.collectionId, v.delta);
    return res;
  });
}

/** Links a cached candidate to a collection and counts the reuse and the cost it saved, once. */
export async function recordReusedCandidate(
  db: Db,
  item: ItemRef,
  cached: Pick<CandidateRow, "id" | "costUsd">,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const linked = await linkCollectionItem(tx, { ...item, candidateId: cached.id, reused: true });
    if (linked) await bumpCollection(tx, item.collectionId, { done: 1, reused: 1, costSaved: cached.costUsd });
    return linked;
  });
}
