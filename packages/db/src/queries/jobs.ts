import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, gt, inArray, lt, sql } from "drizzle-orm";
import {
  EnqueueJob,
  RETRYABLE_REASONS,
  SANDBOXED_JOB_TYPES,
  type ClaimedJob,
  type LogChunk,
  type ResultMsg,
  type JobType,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { artifacts, jobArtifacts, jobAttempts, jobLogs, jobProgress, jobs } from "../schema";

export type Job = typeof jobs.$inferSelect;

// The payload is parsed by its type's contract (JOB_CONTRACTS) and stored with its defaults filled,
// so the row says exactly what the agent will run.
function jobValues(input: EnqueueJob) {
  const j = EnqueueJob.parse(input);
  return {
    id: randomUUID(),
    type: j.type,
    payload: j.payload,
    requiredLabels: j.requirements.labels,
    minGpus: j.requirements.gpus,
    minGpuMemoryMb: j.requirements.gpuMemoryMb,
    sandbox: j.requirements.sandbox ?? null,
    priority: j.priority,
    maxAttempts: j.maxAttempts,
    maxDurationS: j.maxDurationS,
    experimentId: j.experimentId ?? null,
    dedupeKey: j.dedupeKey ?? null,
  };
}

export async function enqueueJob(db: Db, input: EnqueueJob): Promise<Job> {
  const [job] = await enqueueJobs(db, [input]);
  if (!job) throw new Error("enqueue returned no job");
  return job;
}

/**
 * Enqueues many jobs with one multi-row insert; returns them in input order. Idempotent per
 * dedupe key: a key that exists already yields the existing job (ids are made here so that the
 * rows can be matched back to their inputs).
 */
export async function enqueueJobs(db: Db, inputs: EnqueueJob[]): Promise<Job[]> {
  if (inputs.length === 0) return [];
  const values = inputs.map(jobValues);
  return db.transaction(async (tx) => {
    const byId = new Map<string, Job>();
    for (let i = 0; i < values.length; i += 1000) {
      const rows = await tx
        .insert(jobs)
        .values(values.slice(i, i + 1000))
        .onConflictDoNothing({ target: jobs.dedupeKey })
        .returning();
      rows.forEach((r) => byId.set(r.id, r));
    }
    const missingKeys = values.filter((v) => !byId.has(v.id) && v.dedupeKey).map((v) => v.dedupeKey as string);
    const existing = missingKeys.length ? await tx.select().from(jobs).where(inArray(jobs.dedupeKey, missingKeys)) : [];
    const byKey = new Map(existing.map((r) => [r.dedupeKey, r]));
    return values.map((v) => {
      const row = byId.get(v.id) ?? byKey.get(v.dedupeKey);
      if (!row) throw new Error("enqueue conflict without an existing job");
      return row;
    });
  });
}

/**
 * `sandbox`: the agent's backend when its self-test passed, else "none" (no untrusted code then).
 * `shellJobs`: the agent opted in to `shell` jobs (unsandboxed commands); absent means no.
 */
export type AgentFit = {
  agentId: string;
  labels: string[];
  gpuCount: number;
  gpuMemoryMb: number;
  sandbox: string;
  leaseTtlMs: number;
  shellJobs?: boolean;
};

/**
 * Claims the best queued job this agent can run, in one statement: FOR UPDATE SKIP LOCKED lets
 * concurrent claims pass each other without blocking, and the new attempt id is the fencing token.
 */
export async function claimJob(db: Db, fit: AgentFit): Promise<ClaimedJob | null> {
  // The agent's labels are bound as one JSON parameter (never spliced into an array literal).
  const labels = JSON.stringify(fit.labels);
  const rows = await queryRows<{
    id: string;
    type: JobType;
    payload: Record<string, unknown>;
    max_duration_s: number;
    attempt_id: string;
    number: number;
  }>(
    db,
    sql`with next as (
          select id, attempts + 1 as number from jobs
          where state = 'queued'
            and required_labels <@ array(select jsonb_array_elements_text(${labels}::jsonb))
            and min_gpus <= ${fit.gpuCount}
            and min_gpu_memory_mb <= ${fit.gpuMemoryMb}
            and (sandbox is null or sandbox = ${fit.sandbox})
            and (${fit.sandbox} <> 'none' or type <> all(${`{${SANDBOXED_JOB_TYPES.join(",")}}`}::text[]))
            and (${fit.shellJobs === true}::boolean or type <> 'shell')
          order by priority desc, created_at
          limit 1
          for update skip locked
        ), att as (
          insert into job_attempts (job_id, agent_id, number)
          select id, ${fit.agentId}, number from next
          returning id, job_id, number
        )
        update jobs j set state = 'running', attempts = att.number, current_attempt_id = att.id,
          agent_id = ${fit.agentId}, lease_expires_at = now() + make_interval(secs => ${fit.leaseTtlMs / 1000}),
          started_at = coalesce(j.started_at, now())
        from att where j.id = att.job_id
        returning j.id, j.type, j.payload, j.max_duration_s, att.id as attempt_id, att.number`,
  );
  const r = rows[0];
  if (!r) return null;
  return {
    jobId: r.id,
    attemptId: r.attempt_id,
    type: r.type,
    payload: r.payload,
    maxDurationS: r.max_duration_s,
    attempt: r.number,
  };
}

/** Renews the leases an agent holds; returns the attempts that are stale and those being canceled. */
export async function renewLeases(
  db: Db,
  agentId: string,
  attemptIds: string[],
  leaseTtlMs: number,
): Promise<{ stale: string[]; cancel: string[] }> {
  if (attemptIds.length === 0) return { stale: [], cancel: [] };
  const renewed = await db
    .update(jobs)
    .set({ leaseExpiresAt: sql`now() + make_interval(secs => ${leaseTtlMs / 1000})` })
    .where(
      and(
        inArray(jobs.currentAttemptId, attemptIds),
        eq(jobs.agentId, agentId),
        inArray(jobs.state, ["running", "canceling"]),
      ),
    )
    .returning({ attemptId: jobs.currentAttemptId, state: jobs.state });
  const live = new Set(renewed.map((r) => r.attemptId));
  return {
    stale: attemptIds.filter((id) => !live.has(id)),
    cancel: renewed.filter((r) => r.state === "canceling" && r.attemptId).map((r) => r.attemptId as string),
  };
}

// A write is honoured only for the job's current attempt, and only from the agent holding it.
const isCurrent = (jobId: string, attemptId: string, agentId: string) =>
  sql`exists (select 1 from jobs where id = ${jobId} and current_attempt_id = ${attemptId} and agent_id = ${agentId} and state in ('running', 'canceling'))`;

/** Upserts ordered log chunks of the current attempt; a stale attempt's writes are dropped. */
export async function appendLogs(
  db: Db,
  agentId: string,
  jobId: string,
  attemptId: string,
  chunks: LogChunk[],
): Promise<boolean> {
  const [ok] = await queryRows<{ ok: boolean }>(db, sql`select ${isCurrent(jobId, attemptId, agentId)} as ok`);
  if (!ok?.ok) return false;
  await db
    .insert(jobLogs)
    .values(chunks.map((c) => ({ attemptId, seq: c.seq, stream: c.stream, data: c.data })))
    .onConflictDoNothing();
  return true;
}

export async function recordProgress(
  db: Db,
  agentId: string,
  jobId: string,
  attemptId: string,
  seq: number,
  data: Record<string, unknown>,
): Promise<boolean> {
  const updated = await db
    .update(jobs)
    .set({ progress: data })
    .where(
      and(
        eq(jobs.id, jobId),
        eq(jobs.currentAttemptId, attemptId),
        eq(jobs.agentId, agentId),
        inArray(jobs.state, ["running", "canceling"]),
      ),
    )
    .returning({ id: jobs.id });
  if (updated.length === 0) return false;
  await db.insert(jobProgress).values({ attemptId, seq, data }).onConflictDoNothing();
  return true;
}

/** `repeat`: this result had already been recorded (a retried delivery whose first ack was lost). */
export type FinishOutcome = { accepted: boolean; state: Job["state"] | null; requeued: boolean; repeat?: boolean };

/**
 * Records an attempt's end in one statement (one round trip, one commit): the attempt row gets its
 * reason, and the job is requeued (retryable reason, attempts left, not canceling) or ends.
 * Idempotent: a retried result of the attempt that already ended the job is accepted again
 * without effect; any other non-current attempt is refused.
 */
export async function finishAttempt(
  db: Db,
  msg: Pick<ResultMsg, "jobId" | "attemptId" | "reason" | "exitCode" | "signal" | "result" | "error">,
  /** The agent reporting; null for the control plane's own bookkeeping. */
  agentId: string | null = null,
): Promise<FinishOutcome> {
  const retryable = `{${RETRYABLE_REASONS.join(",")}}`;
  const [row] = await queryRows<{ state: Job["state"] }>(
    db,
    sql`with cur as (
          select id, state, attempts, max_attempts from jobs
          where id = ${msg.jobId} and current_attempt_id = ${msg.attemptId} and state in ('running', 'canceling')
            and (${agentId}::uuid is null or agent_id = ${agentId}::uuid)
          for update
        ), next as (
          select id, case
              when state = 'canceling' then 'canceled'
              when ${msg.reason} = any(${retryable}::terminal_reason[]) and attempts < max_attempts then 'queued'
              when ${msg.reason} = 'succeeded' then 'succeeded'
              when ${msg.reason} = 'canceled' then 'canceled'
              else 'failed' end::job_state as state
          from cur
        ), att as (
          update job_attempts set reason = ${msg.reason}, exit_code = ${msg.exitCode}, signal = ${msg.signal}, error = ${msg.error}, finished_at = now()
          where id = ${msg.attemptId} and exists (select 1 from cur)
        )
        update jobs j set
          state = next.state,
          terminal_reason = case when next.state = 'queued' then null when next.state = 'canceled' then 'canceled' else ${msg.reason}::terminal_reason end,
          current_attempt_id = case when next.state = 'queued' then null else j.current_attempt_id end,
          agent_id = case when next.state = 'queued' then null else j.agent_id end,
          lease_expires_at = null,
          result = case when next.state = 'queued' then j.result else ${JSON.stringify(msg.result)}::jsonb end,
          error = ${msg.error},
          finished_at = case when next.state = 'queued' then null else now() end
        from next where j.id = next.id
        returning next.state`,
  );
  if (row) return { accepted: true, state: row.state, requeued: row.state === "queued" };
  // Not current: accept only a repeat of the result that already ended the job.
  const [job] = await db
    .select({ state: jobs.state, currentAttemptId: jobs.currentAttemptId })
    .from(jobs)
    .where(eq(jobs.id, msg.jobId));
  if (!job) return { accepted: false, state: null, requeued: false };
  const [att] = await db
    .select({ reason: jobAttempts.reason })
    .from(jobAttempts)
    .where(eq(jobAttempts.id, msg.attemptId));
  const sameResult = job.currentAttemptId === msg.attemptId && att?.reason === msg.reason;
  return { accepted: sameResult, state: job.state, requeued: false, repeat: sameResult };
}

/**
 * The job claimed in the same transaction as this attempt's result (gateway: finish + claim next),
 * if this agent still holds it. A retried result whose first ack was lost gets that job again
 * instead of a second claim, which would leave the first one running on nobody until its lease
 * expired. The link is exact: both rows carry the same transaction's now().
 */
export async function claimedWithResult(db: Db, agentId: string, attemptId: string): Promise<ClaimedJob | null> {
  const [r] = await queryRows<{
    id: string;
    type: JobType;
    payload: Record<string, unknown>;
    max_duration_s: number;
    attempt_id: string;
    number: number;
  }>(
    db,
    sql`select j.id, j.type, j.payload, j.max_duration_s, a.id as attempt_id, a.number
        from job_attempts prev
        join job_attempts a on a.agent_id = prev.agent_id and a.started_at = prev.finished_at and a.id <> prev.id
        join jobs j on j.current_attempt_id = a.id and j.state = 'running' and j.agent_id = ${agentId}
        where prev.id = ${attemptId} and prev.agent_id = ${agentId}
        limit 1`,
  );
  return r
    ? {
        jobId: r.id,
        attemptId: r.attempt_id,
        type: r.type,
        payload: r.payload,
        maxDurationS: r.max_duration_s,
        attempt: r.number,
      }
    : null;
}

export type ReapedJob = { jobId: string; attemptId: string; agentId: string | null; state: Job["state"] };

/**
 * Ends attempts whose lease expired (agent_lost) or that ran past max_duration (timeout): requeued
 * while attempts remain and the reason is retryable, otherwise failed with that reason.
 */
export async function reapJobs(db: Db, graceS = 30, opts: { onlyRevokedAgents?: boolean } = {}): Promise<ReapedJob[]> {
  // A revoked agent's leases are released on purpose (revokeAgent expires them): those are reaped
  // even while the gateway waits for other agents to come back after a server start.
  const onlyRevoked = opts.onlyRevokedAgents ?? false;
  return db.transaction(async (tx) => {
    const expired = await queryRows<{
      id: string;
      current_attempt_id: string;
      agent_id: string | null;
      state: string;
      attempts: number;
      max_attempts: number;
      timed_out: boolean;
    }>(
      tx,
      sql`select j.id, j.current_attempt_id, j.agent_id, j.state, j.attempts, j.max_attempts,
            (a.started_at + make_interval(secs => j.max_duration_s + ${graceS}) < now()) as timed_out
          from jobs j join job_attempts a on a.id = j.current_attempt_id
          where j.state in ('running', 'canceling')
            and (j.lease_expires_at < now() or a.started_at + make_interval(secs => j.max_duration_s + ${graceS}) < now())
            and (not ${onlyRevoked} or exists (select 1 from agents ag where ag.id = j.agent_id and ag.revoked_at is not null))
          for update of j skip locked`,
    );
    const out: ReapedJob[] = [];
    for (const j of expired) {
      const reason = j.timed_out ? "timeout" : "agent_lost";
      await tx
        .update(jobAttempts)
        .set({ reason, finishedAt: sql`now()` })
        .where(eq(jobAttempts.id, j.current_attempt_id));
      let state: Job["state"];
      if (j.state === "canceling") state = "canceled";
      else if (reason === "agent_lost" && j.attempts < j.max_attempts) state = "queued";
      else state = "failed";
      await tx
        .update(jobs)
        .set(
          state === "queued"
            ? { state, currentAttemptId: null, agentId: null, leaseExpiresAt: null }
            : {
                state,
                terminalReason: state === "canceled" ? "canceled" : reason,
                leaseExpiresAt: null,
                finishedAt: sql`now()`,
              },
        )
        .where(eq(jobs.id, j.id));
      out.push({ jobId: j.id, attemptId: j.current_attempt_id, agentId: j.agent_id, state });
    }
    return out;
  });
}

/** Queued jobs are canceled at once; running ones move to canceling and the agent is told. */
export async function requestCancel(
  db: Db,
  jobId: string,
): Promise<{ state: Job["state"]; attemptId: string | null; agentId: string | null } | null> {
  return db.transaction(async (tx) => {
    const [job] = await tx.select().from(jobs).where(eq(jobs.id, jobId)).for("update");
    if (!job) return null;
    if (job.state === "queued") {
      await tx
        .update(jobs)
        .set({ state: "canceled", terminalReason: "canceled", finishedAt: sql`now()` })
        .where(eq(jobs.id, jobId));
      return { state: "canceled" as const, attemptId: null, agentId: null };
    }
    if (job.state === "running") await tx.update(jobs).set({ state: "canceling" }).where(eq(jobs.id, jobId));
    const state = job.state === "running" ? ("canceling" as const) : job.state;
    return { state, attemptId: job.currentAttemptId, agentId: job.agentId };
  });
}

export async function getJob(db: Db, jobId: string): Promise<Job | undefined> {
  const [row] = await db.select().from(jobs).where(eq(jobs.id, jobId));
  return row;
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

export async function recordArtifactBlob(db: Db, sha256: string, sizeBytes: number) {
  await db.insert(artifacts).values({ sha256, sizeBytes }).onConflictDoNothing();
}

/** Links an uploaded blob to the attempt that produced it; refused for a stale attempt. */
export async function attachArtifact(
  db: Db,
  agentId: string,
  a: { jobId: string; attemptId: string; name: string; kind: string; sha256: string; meta: Record<string, unknown> },
): Promise<boolean> {
  const [ok] = await queryRows<{ ok: boolean }>(db, sql`select ${isCurrent(a.jobId, a.attemptId, agentId)} as ok`);
  if (!ok?.ok) return false;
  await db.insert(jobArtifacts).values(a).onConflictDoNothing();
  return true;
}

export async function listJobArtifacts(db: Db, jobId: string) {
  return db.select().from(jobArtifacts).where(eq(jobArtifacts.jobId, jobId)).orderBy(asc(jobArtifacts.createdAt));
}
