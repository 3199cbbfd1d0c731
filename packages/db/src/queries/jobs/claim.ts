import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import {
  EarlierArtifact,
  RESUMABLE_ARTIFACT_KINDS,
  RESUME_ARTIFACTS_MAX,
  SANDBOXED_JOB_TYPES,
  type Capabilities,
  type ClaimedJob,
  type JobType,
} from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import { jobs } from "../../schema";
import type { Agent } from "../agents";

/**
 * `sandbox`: the agent's backend when its self-test passed, else "none" (no untrusted code then).
 * `shellJobs`: the agent opted in to `shell` jobs (unsandboxed commands); absent means no. The
 * claim also requires the agent's row to be registered for them (`agents.shell_jobs`, an admin's
 * decision), so a fit cannot grant them by itself.
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
 * What an agent may claim: its registration as the server holds it (labels, GPUs capped by its
 * latest report, the admin's shell opt-in; agentConnected), never the socket's own claims. The
 * agent's local shell opt-in is still required on top (it refuses shell jobs without it anyway).
 * The sandbox is the self-test's result: no registration can vouch for bubblewrap on a box.
 */
export function fitOf(
  agent: Pick<Agent, "id" | "labels" | "gpuCount" | "gpuMemoryMb" | "shellJobs">,
  caps: Pick<Capabilities, "sandbox" | "shellJobs">,
  leaseTtlMs: number,
): AgentFit {
  return {
    agentId: agent.id,
    labels: agent.labels,
    gpuCount: agent.gpuCount,
    gpuMemoryMb: agent.gpuMemoryMb,
    sandbox: caps.sandbox.selfTestPassed ? caps.sandbox.backend : "none",
    leaseTtlMs,
    shellJobs: agent.shellJobs && caps.shellJobs,
  };
}

export type ClaimedRow = {
  id: string;
  type: JobType;
  payload: Record<string, unknown>;
  max_duration_s: number;
  attempt_id: string;
  number: number;
  earlier_artifacts: unknown;
};

export const claimed = (r: ClaimedRow): ClaimedJob => ({
  jobId: r.id,
  attemptId: r.attempt_id,
  type: r.type,
  payload: r.payload,
  maxDurationS: r.max_duration_s,
  attempt: r.number,
  earlierArtifacts: EarlierArtifact.array().parse(r.earlier_artifacts ?? []),
});

/**
 * The resumable artifacts earlier attempts of job `job` uploaded (the newest RESUME_ARTIFACTS_MAX,
 * oldest first), as one JSON array: a first attempt's is empty.
 */
const earlierArtifacts = (job: SQL) => sql`(select coalesce(jsonb_agg(e order by e.created_at), '[]'::jsonb) from (
    select ja.name, ja.kind, ja.sha256, ja.meta, ja.created_at from job_artifacts ja
    where ja.job_id = ${job} and ja.kind = any(${`{${RESUMABLE_ARTIFACT_KINDS.join(",")}}`}::text[])
    order by ja.created_at desc limit ${RESUME_ARTIFACTS_MAX}) e) as earlier_artifacts`;

/**
 * Claims the best queued job this agent can run, in one statement: FOR UPDATE SKIP LOCKED lets
 * concurrent claims pass each other without blocking, and the new attempt id is the fencing token.
 * A requeued job waits out its retry backoff (`not_before`, core retryVerdict).
 */
export async function claimJob(db: Db, fit: AgentFit): Promise<ClaimedJob | null> {
  // GPU claims of one agent run one after another: each statement then sees the GPU jobs the
  // previous claim started (a lock taken inside the statement would not, its snapshot is older).
  if (fit.gpuCount > 0)
    return db.transaction(async (tx) => {
      await queryRows(tx, sql`select pg_advisory_xact_lock(hashtext(${`gpu-claim:${fit.agentId}`}))`);
      return claimStatement(tx, fit);
    });
  return claimStatement(db, fit);
}

/**
 * The GPUs of the agent that running GPU jobs hold: an exclusive candidate counts every
 * GPU job running there, a sharing candidate only the exclusive ones.
 */
const busyGpus = (agentId: string) => sql`(select coalesce(sum(r.min_gpus), 0) from jobs r
  where r.agent_id = ${agentId} and r.state in ('running', 'canceling') and r.min_gpus > 0
    and (not r.gpu_share or not jobs.gpu_share))`;

async function claimStatement(db: Db, fit: AgentFit): Promise<ClaimedJob | null> {
  const rows = await queryRows<ClaimedRow>(db, sql`with ${claimCtes(fit)} select * from claimed`);
  const r = rows[0];
  return r ? claimed(r) : null;
}

/**
 * The claim as common table expressions, for statements that claim among other things
 * (finish-and-claim.ts): `next` picks the job, `att` inserts its attempt, `claimed` is the job
 * row as claimed (ClaimedRow). `gate` is one more condition on `next`.
 */
export function claimCtes(fit: AgentFit, gate: SQL = sql`true`): SQL {
  // The agent's labels are bound as one JSON parameter (never spliced into an array literal).
  const labels = JSON.stringify(fit.labels);
  return sql`next as (
          select id, attempts + 1 as number from jobs
          where ${gate} and state = 'queued'
            and (not_before is null or not_before <= now())
            and required_labels <@ array(select jsonb_array_elements_text(${labels}::jsonb))
            and min_gpus <= ${fit.gpuCount}
            and min_gpu_memory_mb <= ${fit.gpuMemoryMb}
            and (min_gpus = 0 or min_gpus <= ${fit.gpuCount} - ${busyGpus(fit.agentId)})
            and (sandbox is null or sandbox = ${fit.sandbox})
            and (${fit.sandbox} <> 'none' or type <> all(${`{${SANDBOXED_JOB_TYPES.join(",")}}`}::text[]))
            and (type <> 'shell' or (${fit.shellJobs === true}::boolean
              and exists (select 1 from agents a where a.id = ${fit.agentId} and a.shell_jobs and a.revoked_at is null)))
          order by priority desc, created_at
          limit 1
          for update skip locked
        ), att as (
          insert into job_attempts (job_id, agent_id, number)
          select id, ${fit.agentId}, number from next
          returning id, job_id, number
        ), claimed as (
          update jobs cj set state = 'running', attempts = att.number, current_attempt_id = att.id,
            agent_id = ${fit.agentId}, lease_expires_at = now() + make_interval(secs => ${fit.leaseTtlMs / 1000}),
            not_before = null, started_at = coalesce(cj.started_at, now())
          from att where cj.id = att.job_id
          returning cj.id, cj.type, cj.payload, cj.max_duration_s, att.id as attempt_id, att.number,
            ${earlierArtifacts(sql`cj.id`)}
        )`;
}

/**
 * The job claimed in the same transaction as this attempt's result (gateway: finish + claim next),
 * if this agent still holds it. A retried result whose first ack was lost gets that job again
 * instead of a second claim, which would leave the first one running on nobody until its lease
 * expired. The link is exact: both rows carry the same transaction's now().
 */
export async function claimedWithResult(db: Db, agentId: string, attemptId: string): Promise<ClaimedJob | null> {
  const [r] = await queryRows<ClaimedRow>(
    db,
    sql`select j.id, j.type, j.payload, j.max_duration_s, a.id as attempt_id, a.number,
          ${earlierArtifacts(sql`j.id`)}
        from job_attempts prev
        join job_attempts a on a.agent_id = prev.agent_id and a.started_at = prev.finished_at and a.id <> prev.id
        join jobs j on j.current_attempt_id = a.id and j.state = 'running' and j.agent_id = ${agentId}
        where prev.id = ${attemptId} and prev.agent_id = ${agentId}
        limit 1`,
  );
  return r ? claimed(r) : null;
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

/** Whether any job is waiting to be claimed now (a woken agent found none it could take: why?). */
export async function anyJobClaimable(db: Db): Promise<boolean> {
  const [r] = await queryRows<{ any: boolean }>(
    db,
    sql`select exists (select 1 from jobs where state = 'queued' and (not_before is null or not_before <= now())) as any`,
  );
  return r?.any ?? false;
}
