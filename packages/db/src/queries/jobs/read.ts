import { and, asc, desc, eq, gt, lt, sql } from "drizzle-orm";
import { queryRows, type Db } from "../../client";
import { jobArtifacts, jobAttempts, jobLogs, jobProgress, jobs, users } from "../../schema";
import type { Job } from "./enqueue";

export async function getJob(db: Db, jobId: string): Promise<Job | undefined> {
  const [row] = await db.select().from(jobs).where(eq(jobs.id, jobId));
  return row;
}

/** Who asked for the job (the job page shows it); null: the server's own work or a removed user. */
export async function jobCreator(db: Db, job: Pick<Job, "createdBy">) {
  if (!job.createdBy) return null;
  const [row] = await db.select({ id: users.id, name: users.name }).from(users).where(eq(users.id, job.createdBy));
  return row ?? null;
}

export async function listJobs(
  db: Db,
  opts: { state?: Job["state"]; type?: string; experimentId?: string; limit: number; before?: Date },
) {
  const conds = [
    opts.state ? eq(jobs.state, opts.state) : undefined,
    opts.type ? eq(jobs.type, opts.type) : undefined,
    opts.experimentId ? eq(jobs.experimentId, opts.experimentId) : undefined,
    opts.before ? lt(jobs.createdAt, opts.before) : undefined,
  ].filter((c) => c !== undefined);
  return db
    .select()
    .from(jobs)
    .where(and(...conds))
    .orderBy(desc(jobs.createdAt))
    .limit(opts.limit);
}

export async function listAttempts(db: Db, jobId: string) {
  return db.select().from(jobAttempts).where(eq(jobAttempts.jobId, jobId)).orderBy(asc(jobAttempts.number));
}

/** The type of the job an attempt belongs to (log reads of shell jobs are admin-only). */
export async function attemptJobType(db: Db, attemptId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ type: jobs.type })
    .from(jobAttempts)
    .innerJoin(jobs, eq(jobs.id, jobAttempts.jobId))
    .where(eq(jobAttempts.id, attemptId));
  return row?.type;
}

export async function readLogs(db: Db, attemptId: string, afterSeq = -1, limit = 500) {
  return db
    .select()
    .from(jobLogs)
    .where(and(eq(jobLogs.attemptId, attemptId), gt(jobLogs.seq, afterSeq)))
    .orderBy(asc(jobLogs.seq))
    .limit(limit);
}

export async function readProgress(db: Db, attemptId: string) {
  return db.select().from(jobProgress).where(eq(jobProgress.attemptId, attemptId)).orderBy(asc(jobProgress.seq));
}

export async function countJobsByState(db: Db) {
  return queryRows<{ state: string; n: number }>(db, sql`select state, count(*)::int as n from jobs group by state`);
}

export async function listJobArtifacts(db: Db, jobId: string) {
  return db.select().from(jobArtifacts).where(eq(jobArtifacts.jobId, jobId)).orderBy(asc(jobArtifacts.createdAt));
}
