import { JobType, refusal, type AttemptRef, type ClaimedJob } from "@agentlab/core";
import { finishAttempt, getJob, type Db } from "@agentlab/db";

// What the gateway needs to read an agent's writes by their job's contract (core jobs/receipt.ts,
// JOB_CONTRACTS[type].progress): the job type of the attempt a write names, and the end of an
// attempt whose progress event broke its contract.

/**
 * The job type of each attempt claimed through one socket, so its progress and result are read by
 * the type's contract without a query; an attempt claimed before a reconnect is looked up.
 */
export function attemptTypes(db: Db) {
  const attempts = new Map<string, { jobId: string; type: JobType }>();
  return {
    claimed(job: ClaimedJob | null | undefined): ClaimedJob | null {
      if (job) attempts.set(job.attemptId, { jobId: job.jobId, type: job.type });
      return job ?? null;
    },
    forget(attemptId: string) {
      attempts.delete(attemptId);
    },
    async typeOf(ref: AttemptRef): Promise<JobType | null> {
      const known = attempts.get(ref.attemptId);
      if (known?.jobId === ref.jobId) return known.type;
      const stored = JobType.safeParse((await getJob(db, ref.jobId))?.type);
      return stored.success ? stored.data : null;
    },
  };
}

/**
 * A progress event that breaks its job's contract fails the attempt as an infra_error (the agent's
 * fault, retried like one), the reason naming the type and the field; fenced like any write of the
 * agent (a stale or foreign attempt is left alone).
 */
export async function endRefusedAttempt(db: Db, agentId: string, ref: AttemptRef, contractError: string) {
  const refused = refusal(contractError);
  const end = { jobId: ref.jobId, attemptId: ref.attemptId, reason: "infra_error" as const, error: refused };
  const out = await finishAttempt(db, { ...end, exitCode: null, signal: null, result: {} }, agentId);
  return { out, refused };
}
