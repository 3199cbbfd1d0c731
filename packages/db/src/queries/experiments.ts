import { and, asc, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import {
  DomainError,
  TERMINAL_STATES,
  type ExperimentConfig,
  type ModelRef,
  type SelectionDecision,
  type StageKind,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { evaluations, experimentStages, experiments, jobs, selectionDecisions, testRuns } from "../schema";

export type ExperimentRow = typeof experiments.$inferSelect;
export type StageRow = typeof experimentStages.$inferSelect;
export type EvaluationRow = typeof evaluations.$inferSelect;
export type NewEvaluation = Omit<typeof evaluations.$inferInsert, "id" | "createdAt">;

export async function insertExperiment(
  db: Db,
  input: {
    name: string;
    splitId: string;
    config: ExperimentConfig;
    createdBy?: string | null;
    stages: { key: string; kind: StageKind }[];
  },
): Promise<ExperimentRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(experiments)
      .values({ name: input.name, splitId: input.splitId, config: input.config, createdBy: input.createdBy ?? null })
      .returning();
    if (!row) throw new Error("experiment insert returned nothing");
    if (input.stages.length)
      await tx
        .insert(experimentStages)
        .values(input.stages.map((s) => ({ experimentId: row.id, key: s.key, kind: s.kind })));
    return row;
  });
}

export async function getExperiment(db: Db, id: string): Promise<ExperimentRow | undefined> {
  const [row] = await db.select().from(experiments).where(eq(experiments.id, id));
  return row;
}

export async function listExperiments(db: Db, opts: { state?: ExperimentRow["state"]; limit: number }) {
  return db
    .select()
    .from(experiments)
    .where(opts.state ? eq(experiments.state, opts.state) : undefined)
    .orderBy(desc(experiments.createdAt))
    .limit(opts.limit);
}

export const runningExperimentIds = async (db: Db): Promise<string[]> =>
  (
    await db
      .select({ id: experiments.id })
      .from(experiments)
      .where(eq(experiments.state, "running"))
      .orderBy(asc(experiments.createdAt))
  ).map((r) => r.id);

export async function setExperimentState(
  db: Db,
  id: string,
  state: ExperimentRow["state"],
  error: string | null = null,
): Promise<void> {
  const finished = state === "running" ? null : sql`now()`;
  // The runner's own end (failed, succeeded) only ends a running experiment: a user's cancel that
  // landed while a step was still going stays the experiment's state.
  const own = state === "failed" || state === "succeeded" ? eq(experiments.state, "running") : undefined;
  await db
    .update(experiments)
    .set({ state, error, updatedAt: sql`now()`, finishedAt: finished })
    .where(and(eq(experiments.id, id), own));
}

export const listStages = (db: Db, experimentId: string): Promise<StageRow[]> =>
  db.select().from(experimentStages).where(eq(experimentStages.experimentId, experimentId));

export async function updateStage(
  db: Db,
  experimentId: string,
  key: string,
  patch: Partial<Pick<StageRow, "state" | "jobIds" | "output" | "error">>,
): Promise<void> {
  const extra: { startedAt?: SQL; finishedAt?: SQL } = {};
  if (patch.state === "running") extra.startedAt = sql`coalesce(${experimentStages.startedAt}, now())`;
  if (patch.state === "succeeded" || patch.state === "failed") extra.finishedAt = sql`now()`;
  await db
    .update(experimentStages)
    .set({ ...patch, ...extra, updatedAt: sql`now()` })
    .where(and(eq(experimentStages.experimentId, experimentId), eq(experimentStages.key, key)));
}

/** Idempotent: a re-delivered grade result of a task already stored is ignored. */
export async function insertEvaluations(db: Db, rows: NewEvaluation[]): Promise<number> {
  if (rows.length === 0) return 0;
  const out = await db.insert(evaluations).values(rows).onConflictDoNothing().returning({ id: evaluations.id });
  return out.length;
}

export async function listEvaluations(
  db: Db,
  opts: { experimentId: string; split?: "dev" | "test"; modelKeys?: string[] },
) {
  const conds = [eq(evaluations.experimentId, opts.experimentId)];
  if (opts.split) conds.push(eq(evaluations.split, opts.split));
  if (opts.modelKeys) conds.push(inArray(evaluations.modelKey, opts.modelKeys));
  return db
    .select({
      id: evaluations.id,
      split: evaluations.split,
      modelKey: evaluations.modelKey,
      taskId: evaluations.taskId,
      sampleIndex: evaluations.sampleIndex,
      seed: evaluations.seed,
      sourceGroup: evaluations.sourceGroup,
      verdict: evaluations.verdict,
      protocol: evaluations.protocol,
    })
    .from(evaluations)
    .where(and(...conds))
    .orderBy(asc(evaluations.taskId), asc(evaluations.sampleIndex));
}

/**
 * The graded answers of one policy on train (the rejected side of preference pairs), with
 * their text and grader output, in task and sample order.
 */
export async function trainAnswers(db: Db, opts: { experimentId: string; modelKey: string }) {
  return db
    .select({
      taskId: evaluations.taskId,
      sampleIndex: evaluations.sampleIndex,
      verdict: evaluations.verdict,
      answer: evaluations.answer,
      grade: evaluations.grade,
    })
    .from(evaluations)
    .where(
      and(
        eq(evaluations.experimentId, opts.experimentId),
        eq(evaluations.split, "train"),
        eq(evaluations.modelKey, opts.modelKey),
      ),
    )
    .orderBy(asc(evaluations.taskId), asc(evaluations.sampleIndex));
}

/** Every model's answer and grader output for one task: the side-by-side view. */
export async function taskEvaluations(
  db: Db,
  opts: { experimentId: string; split: "dev" | "test"; taskId: string },
): Promise<EvaluationRow[]> {
  return db
    .select()
    .from(evaluations)
    .where(
      and(
        eq(evaluations.experimentId, opts.experimentId),
        eq(evaluations.split, opts.split),
        eq(evaluations.taskId, opts.taskId),
      ),
    )
    .orderBy(asc(evaluations.modelKey), asc(evaluations.sampleIndex));
}

/** Stores the dev selection once; a later call returns the stored decision unchanged. */
export async function saveSelection(
  db: Db,
  experimentId: string,
  decision: SelectionDecision,
): Promise<SelectionDecision> {
  await db.insert(selectionDecisions).values({ experimentId, decision }).onConflictDoNothing();
  const stored = await getSelection(db, experimentId);
  if (!stored) throw new Error("selection vanished after insert");
  return stored;
}

export async function getSelection(db: Db, experimentId: string): Promise<SelectionDecision | undefined> {
  const [row] = await db.select().from(selectionDecisions).where(eq(selectionDecisions.experimentId, experimentId));
  return row?.decision;
}

/**
 * Claims the experiment's single test evaluation. Requires a stored dev selection; the primary key
 * on experiment_test_runs refuses a second claim, so the test split is evaluated once even when two
 * runners race.
 */
export async function claimTestRun(db: Db, experimentId: string, models: ModelRef[]): Promise<void> {
  if (!(await getSelection(db, experimentId)))
    throw new DomainError("PRECONDITION_FAILED", "the test evaluation needs the dev selection first");
  const inserted = await db
    .insert(testRuns)
    .values({ experimentId, models })
    .onConflictDoNothing()
    .returning({ id: testRuns.experimentId });
  if (inserted.length === 0)
    throw new DomainError("CONFLICT", "the test evaluation of this experiment has already run; it runs once");
}

export async function getTestRun(db: Db, experimentId: string) {
  const [row] = await db.select().from(testRuns).where(eq(testRuns.experimentId, experimentId));
  return row;
}

/** The jobs a stage waits on, with what it needs to read their outcome. */
type JobState = (typeof jobs.$inferSelect)["state"];
export type StageJobCounts = {
  total: number;
  done: number;
  jobs: { id: string; state: JobState; error: string | null }[];
};

/**
 * Per stage key: how many jobs it lists and how many ended, counted by the database, plus the first
 * `sample` of them (id, state, error: no payloads) for the stage's job list.
 */
export async function stageJobCounts(db: Db, experimentId: string, sample = 50): Promise<Map<string, StageJobCounts>> {
  const rows = await queryRows<{
    key: string;
    total: number;
    done: number;
    sample: { id: string; state: JobState; error: string | null }[];
  }>(
    db,
    sql`select s.key, count(j.id)::int as total,
          count(j.id) filter (where j.state in ${[...TERMINAL_STATES]})::int as done,
          coalesce((select json_agg(json_build_object('id', x.id, 'state', x.state, 'error', x.error))
                    from (select jj.id, jj.state, jj.error from jobs jj where jj.id = any(s.job_ids[1:${sample}])) x), '[]'::json) as sample
        from experiment_stages s left join jobs j on j.id = any(s.job_ids)
        where s.experiment_id = ${experimentId}
        group by s.key, s.job_ids`,
  );
  return new Map(rows.map((r) => [r.key, { total: r.total, done: r.done, jobs: r.sample }]));
}

export async function stageJobs(db: Db, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({
      id: jobs.id,
      type: jobs.type,
      state: jobs.state,
      terminalReason: jobs.terminalReason,
      result: jobs.result,
      error: jobs.error,
      payload: jobs.payload,
    })
    .from(jobs)
    .where(inArray(jobs.id, ids));
}
