import { eq, sql } from "drizzle-orm";
import {
  RETRYABLE_REASONS,
  retryVerdict,
  type JobEndedEvent,
  type JobRetryBackoff,
  type ResultMsg,
} from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import { jobAttempts, jobs } from "../../schema";
import type { Job } from "./enqueue";
import { endAttempt } from "./end-attempt";

/**
 * `repeat`: this result had already been recorded (a retried delivery whose first ack was lost).
 * `ended`: the job reached a terminal state with this call (what was NOTIFYed; announce it in-process
 * once the caller's transaction committed).
 */
export type FinishOutcome = {
  accepted: boolean;
  state: Job["state"] | null;
  requeued: boolean;
  repeat?: boolean;
  ended?: JobEndedEvent | null;
};

export type FinishMsg = Pick<ResultMsg, "jobId" | "attemptId" | "reason" | "exitCode" | "signal" | "result" | "error">;

/**
 * Records an attempt's end: the attempt row gets its reason, and the job is requeued or ends as core's
 * retryVerdict says. Idempotent: a retried result of the attempt that already ended the job is
 * accepted again without effect; any other non-current attempt is refused. Read, decide, write
 * guarded by the state read: a cancel request landing in between makes the write miss, and the
 * decision is taken again over the new state (a handful of rounds at most: a job leaves
 * running/canceling only through this write or the reaper's).
 */
export async function finishAttempt(
  db: Db,
  msg: FinishMsg,
  /** The agent reporting; null for the control plane's own bookkeeping. */
  agentId: string | null = null,
  backoff?: JobRetryBackoff,
  /** See AttemptEndWrite.commitWithoutFlush (end-attempt.ts): for results that claim the next job. */
  opts: { commitWithoutFlush?: boolean } = {},
): Promise<FinishOutcome> {
  const write = (seenState: Job["state"], verdict: ReturnType<typeof retryVerdict>) =>
    endAttempt(db, {
      jobId: msg.jobId,
      attemptId: msg.attemptId,
      seenState,
      agentId,
      commitWithoutFlush: opts.commitWithoutFlush,
      verdict,
      attempt: { reason: msg.reason, exitCode: msg.exitCode, signal: msg.signal, error: msg.error },
      job: { result: msg.result, error: msg.error },
    });
  const outcome = (row: NonNullable<Awaited<ReturnType<typeof write>>>): FinishOutcome => ({
    accepted: true,
    state: row.state,
    requeued: row.state === "queued",
    ended: row.ended,
  });
  // The common case in one statement: a reason that is never retried (succeeded, a user error…)
  // ends a running job the same way whatever its attempt count, so the guarded write can go first.
  // It misses when the job is being canceled or the attempt is not current; then read and decide.
  if (!RETRYABLE_REASONS.includes(msg.reason)) {
    const verdict = retryVerdict({ attempt: 1, maxAttempts: 1, reason: msg.reason, canceling: false }, backoff);
    const row = await write("running", verdict);
    if (row) return outcome(row);
  }
  for (let round = 0; round < 5; round++) {
    const [cur] = await queryRows<{ state: Job["state"]; attempts: number; max_attempts: number }>(
      db,
      sql`select state, attempts, max_attempts from jobs
          where id = ${msg.jobId} and current_attempt_id = ${msg.attemptId} and state in ('running', 'canceling')
            and (${agentId}::uuid is null or agent_id = ${agentId}::uuid)`,
    );
    if (!cur) return notCurrent(db, msg);
    const verdict = retryVerdict(
      {
        attempt: cur.attempts,
        maxAttempts: cur.max_attempts,
        reason: msg.reason,
        canceling: cur.state === "canceling",
      },
      backoff,
    );
    const row = await write(cur.state, verdict);
    if (row) return outcome(row);
  }
  throw new Error(`finishing job ${msg.jobId}: its state kept changing under the write`);
}

/** Not current: accept only a repeat of the result that already ended the job. */
async function notCurrent(db: Db, msg: FinishMsg): Promise<FinishOutcome> {
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
