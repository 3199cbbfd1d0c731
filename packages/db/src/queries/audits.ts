import { and, asc, desc, eq, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { TERMINAL_STATES, type AuditResult } from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { jobs, taskAuditMutants, taskAudits, tasks } from "../schema";

export type TaskAuditRow = typeof taskAudits.$inferSelect;
export type AuditRowStatus = TaskAuditRow["status"];
/** A task's audit state as the pool view filters it: its newest audit's status, or `none`. */
export type TaskAuditState = AuditRowStatus | "none";

// The newest audit row of the task in the current `tasks` row; correlated so that a keyset page
// of tasks costs one index probe per row (task_audits_task_idx), never a scan of all audits.
// Qualified by hand: in a select list drizzle renders ${tasks.id} as a bare "id", which inside
// the subquery would bind to task_audits.id.
const outerTaskId = sql.raw(`"tasks"."id"`);
export const latestAuditStatus = sql<TaskAuditState>`coalesce((select a.status::text from task_audits a where a.task_row_id = ${outerTaskId} order by a.created_at desc limit 1), 'none')`;

/** The SQL condition "the task's audit state is `state`", for task listings. */
export const auditStateIs = (state: TaskAuditState): SQL => sql`${latestAuditStatus} = ${state}`;

// The row type is spelled from the schema, not imported from ./tasks, which imports this file.
export type AuditCandidate = typeof tasks.$inferSelect & { round: number | null; latest: AuditRowStatus | null };

/**
 * One keyset page (by row id) of a pool's tasks to audit, each with its highest audit round under
 * `graderVersion` and the status of that round, so the caller decides whether to (re-)audit.
 */
export async function auditCandidates(
  db: Db,
  opts: { poolId: string; taskRowIds?: string[]; graderVersion: string; after?: string; limit: number },
): Promise<AuditCandidate[]> {
  const conds: SQL[] = [eq(tasks.poolId, opts.poolId)];
  if (opts.taskRowIds)
    conds.push(
      inArray(tasks.id, opts.taskRowIds.length > 0 ? opts.taskRowIds : ["00000000-0000-0000-0000-000000000000"]),
    );
  if (opts.after) conds.push(sql`${tasks.id} > ${opts.after}`);
  const newest = sql`(select a.round, a.status::text as status from task_audits a where a.task_row_id = ${outerTaskId} and a.grader_version = ${opts.graderVersion} order by a.round desc, a.created_at desc limit 1)`;
  const rows = await db
    .select({
      task: tasks,
      round: sql<number | null>`(select n.round from ${newest} n)`,
      latest: sql<AuditRowStatus | null>`(select n.status from ${newest} n)`,
    })
    .from(tasks)
    .where(and(...conds))
    .orderBy(asc(tasks.id))
    .limit(opts.limit);
  return rows.map((r) => ({ ...r.task, round: r.round, latest: r.latest }));
}

export type NewAuditRow = {
  taskRowId: string;
  jobId: string;
  graderVersion: string;
  round: number;
  sandbox: string;
  requestedBy: string | null;
};

export async function insertAuditRows(db: Db, rows: NewAuditRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const out = await db.insert(taskAudits).values(rows).returning({ id: taskAudits.id });
  return out.length;
}

export type FinishedAuditJob = {
  id: string;
  jobId: string | null;
  state: string | null;
  result: Record<string, unknown> | null;
  error: string | null;
  reason: string | null;
  finishedAt: Date | null;
};

/** Pending audit rows whose job has ended (or vanished): what the sync loop copies next. */
export async function finishedAuditJobs(db: Db, limit = 500): Promise<FinishedAuditJob[]> {
  return db
    .select({
      id: taskAudits.id,
      jobId: taskAudits.jobId,
      state: jobs.state,
      result: jobs.result,
      error: jobs.error,
      reason: jobs.terminalReason,
      finishedAt: jobs.finishedAt,
    })
    .from(taskAudits)
    .leftJoin(jobs, eq(jobs.id, taskAudits.jobId))
    .where(and(eq(taskAudits.status, "pending"), or(isNull(jobs.id), inArray(jobs.state, [...TERMINAL_STATES]))))
    .limit(limit);
}

export type AuditOutcome = { status: "passed" | "failed"; result: AuditResult } | { status: "error"; error: string };

/** Records an audit's end; a row already finished is left alone (the loop may see it twice). */
export async function finishAudit(
  db: Db,
  id: string,
  outcome: AuditOutcome,
  finishedAt?: Date | null,
): Promise<boolean> {
  const values =
    outcome.status === "error"
      ? { status: "error" as const, error: outcome.error }
      : {
          status: outcome.status,
          // The killed mutants' programs live in task_audit_mutants, not twice in the result.
          result: { ...outcome.result, killed: [] },
          mutationScore: outcome.result.mutationScore,
          mutantsTotal: outcome.result.mutantsTotal,
          unsandboxed: outcome.result.unsandboxed,
        };
  return db.transaction(async (tx) => {
    const out = await tx
      .update(taskAudits)
      .set({ ...values, finishedAt: finishedAt ?? sql`now()` })
      .where(and(eq(taskAudits.id, id), eq(taskAudits.status, "pending")))
      .returning({ id: taskAudits.id, taskRowId: taskAudits.taskRowId });
    const row = out[0];
    // The audit decides how the task is graded from now on (isolated judge unless it needs in-process).
    if (row && outcome.status !== "error") {
      await tx.update(tasks).set({ gradingIsolation: outcome.result.isolation }).where(eq(tasks.id, row.taskRowId));
      const killed = outcome.result.killed.map((m, position) => ({
        auditId: row.id,
        taskRowId: row.taskRowId,
        position,
        ...m,
      }));
      for (let i = 0; i < killed.length; i += 200) await tx.insert(taskAuditMutants).values(killed.slice(i, i + 200));
    }
    return out.length > 0;
  });
}

/**
 * An admin's mark that allows in-process grading of a task (with its reason), or its removal
 * (null). The mark only lets the next audit choose the weaker mode; removing it puts the task
 * back in the isolated judge at once. False when no such task exists.
 */
export async function setInProcessMark(
  db: Db,
  taskRowId: string,
  mark: { reason: string; by: string | null } | null,
): Promise<boolean> {
  const values = mark
    ? { inProcessReason: mark.reason, inProcessMarkedBy: mark.by, inProcessMarkedAt: sql`now()` }
    : { inProcessReason: null, inProcessMarkedBy: null, inProcessMarkedAt: null, gradingIsolation: "judge" as const };
  const out = await db.update(tasks).set(values).where(eq(tasks.id, taskRowId)).returning({ id: tasks.id });
  return out.length > 0;
}

/** Task ids of a split's pool graded in-process (usually none): what grade payloads must say. */
export async function inProcessTaskIds(db: Db, poolId: string): Promise<Set<string>> {
  const rows = await db
    .select({ taskId: tasks.taskId })
    .from(tasks)
    .where(and(eq(tasks.poolId, poolId), eq(tasks.gradingIsolation, "in_process")));
  return new Set(rows.map((r) => r.taskId));
}

/** A task's audits, newest first, with the live state of pending ones' jobs. */
export async function listTaskAudits(db: Db, taskRowId: string, limit = 20) {
  return db
    .select({ audit: taskAudits, jobState: jobs.state, jobProgress: jobs.progress })
    .from(taskAudits)
    .leftJoin(jobs, eq(jobs.id, taskAudits.jobId))
    .where(eq(taskAudits.taskRowId, taskRowId))
    .orderBy(desc(taskAudits.createdAt))
    .limit(limit);
}

/**
 * A pool's cross-file tasks (their reference reads a dependency file's symbol), by each task's
 * newest audit that recorded it: `tasks` of them in `groups` source groups; `unknown` tasks have
 * no such audit (never audited, still pending, errored, or audited before audits recorded it).
 */
export type PoolCrossFile = { tasks: number; groups: number; unknown: number };

export type PoolAuditSummary = {
  total: number;
  byState: Record<TaskAuditState, number>;
  running: number;
  unsandboxed: number;
  crossFile: PoolCrossFile;
};

/** Counts of a pool's tasks by their newest audit's status; `running` counts pending audits an agent holds. */
export async function poolAuditSummary(db: Db, poolId: string): Promise<PoolAuditSummary> {
  const rows = await queryRows<{ state: TaskAuditState; n: number; running: number; unsandboxed: number }>(
    db,
    sql`select coalesce(l.status::text, 'none') as state, count(*)::int as n,
          count(*) filter (where j.state in ('running', 'canceling'))::int as running,
          count(*) filter (where l.unsandboxed)::int as unsandboxed
        from tasks t
        left join lateral (select a.status, a.job_id, a.unsandboxed from task_audits a where a.task_row_id = t.id order by a.created_at desc limit 1) l on true
        left join jobs j on j.id = l.job_id and l.status = 'pending'
        where t.pool_id = ${poolId}
        group by 1`,
  );
  const byState: Record<TaskAuditState, number> = { none: 0, pending: 0, passed: 0, failed: 0, error: 0 };
  let total = 0;
  let running = 0;
  let unsandboxed = 0;
  for (const r of rows) {
    byState[r.state] = r.n;
    total += r.n;
    running += r.running;
    unsandboxed += r.unsandboxed;
  }
  return { total, byState, running, unsandboxed, crossFile: await poolCrossFile(db, poolId) };
}

// Apart from the counts by state: a source group counts once however many states its tasks are in.
async function poolCrossFile(db: Db, poolId: string): Promise<PoolCrossFile> {
  const [row] = await queryRows<PoolCrossFile>(
    db,
    sql`select count(*) filter (where c.uses <> '[]'::jsonb)::int as tasks,
          count(distinct t.source_group) filter (where c.uses <> '[]'::jsonb)::int as groups,
          count(*) filter (where c.uses is null)::int as unknown
        from tasks t
        left join lateral (select a.result->'crossFile' as uses from task_audits a where a.task_row_id = t.id and a.result->'crossFile' is not null order by a.created_at desc limit 1) c on true
        where t.pool_id = ${poolId}`,
  );
  return row ?? { tasks: 0, groups: 0, unknown: 0 };
}

/** How many of `taskRowIds` are tasks of the pool (to refuse ids from elsewhere before enqueueing). */
export async function countPoolTasks(db: Db, poolId: string, taskRowIds: string[]): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(tasks)
    .where(and(eq(tasks.poolId, poolId), inArray(tasks.id, taskRowIds)));
  return row?.n ?? 0;
}

/** The `sandbox` of audit rows copied from a task's build-time audit (no job ran here). */
export const BUILD_TIME_AUDIT = "build-time";

/**
 * Records the audit a task carries from build time (`metadata.audit`, written by
 * scripts/build-builtin-pool.ts: reference 3× pass, buggy file fails) as a passed audit row, for
 * tasks that have none yet: the pool view, the task page and the split admission gate then see
 * the built-in pool as audited. Mutation testing did not run at build time: no score.
 */
export async function recordBuildTimeAudits(db: Db, poolId: string): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`insert into task_audits (task_row_id, status, result, mutants_total, sandbox, unsandboxed, grader_version, round, finished_at)
        select t.id, 'passed',
          jsonb_build_object(
            'status', 'passed', 'reasons', '[]'::jsonb,
            'referenceVerdicts', (select coalesce(jsonb_agg('pass'::text), '[]'::jsonb) from generate_series(1, coalesce((t.metadata->'audit'->>'reference_passes')::int, 0))),
            'buggyVerdict', t.metadata->'audit'->>'buggy_verdict',
            'expectedTestIds', coalesce(t.metadata->'audit'->'expected_test_ids', '[]'::jsonb),
            'mutantsTotal', 0, 'mutantsKilled', 0, 'mutationScore', null, 'surviving', '[]'::jsonb,
            'unsandboxed', false, 'isolation', 'judge', 'isolationReason', ''),
          0, ${BUILD_TIME_AUDIT}, false, coalesce(t.metadata->'audit'->>'grader', 'build-time'), 0, t.created_at
        from tasks t
        where t.pool_id = ${poolId} and t.metadata ? 'audit'
          and not exists (select 1 from task_audits a where a.task_row_id = t.id)
        returning id`,
  );
  return rows.length;
}
