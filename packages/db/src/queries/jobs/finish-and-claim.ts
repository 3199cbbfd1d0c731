import { sql } from "drizzle-orm";
import { RETRYABLE_REASONS, retryVerdict, type ClaimedJob } from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import { endedEvent, notifyIfEnded } from "../job-events";
import { claimCtes, claimed, type AgentFit, type ClaimedRow } from "./claim";
import { endCtes, relaxedCommit } from "./end-attempt";
import type { FinishOutcome, FinishMsg } from "./finish";
import type { Job } from "./enqueue";

/**
 * An agent's result and the claim of its next job in ONE statement (one round trip, one implicit
 * transaction), for the common case only: a reason that is never retried, from the agent holding
 * the running job, on an agent without GPUs. It is the same guarded write as finishAttempt's first
 * try and the same claim as claimJob; the claim is gated on the write having happened. Null when
 * the case does not apply or the guarded write missed (canceling, a repeat, not current): then the
 * caller takes the general path (finishAttempt and claimJob in a transaction), which decides.
 * GPU agents are left to that path because a claim here cannot see the GPUs this very statement
 * frees (one snapshot), and their claims are serialized by a lock (claimJob).
 */
export async function finishAndClaim(
  db: Db,
  msg: FinishMsg,
  agentId: string,
  fit: AgentFit,
): Promise<{ out: FinishOutcome; next: ClaimedJob | null } | null> {
  if (RETRYABLE_REASONS.includes(msg.reason) || fit.gpuCount > 0) return null;
  const verdict = retryVerdict({ attempt: 1, maxAttempts: 1, reason: msg.reason, canceling: false });
  const end = endCtes({
    jobId: msg.jobId,
    attemptId: msg.attemptId,
    seenState: "running",
    agentId,
    verdict,
    attempt: { reason: msg.reason, exitCode: msg.exitCode, signal: msg.signal, error: msg.error },
    job: { result: msg.result, error: msg.error },
  });
  const [row] = await queryRows<{
    id: string;
    type: string;
    state: Job["state"];
    experiment_id: string | null;
    next: ClaimedRow | null;
  }>(
    db,
    // Commits without waiting for the flush: end-attempt.ts (commitWithoutFlush) says why that is safe.
    sql`with ${end}, ${claimCtes(fit, sql`exists (select 1 from j)`)}
        select j.id, j.type, j.state, j.experiment_id, ${notifyIfEnded("j")} as notified, ${relaxedCommit} as relaxed,
          (select row_to_json(c) from claimed c) as next
        from j`,
  );
  if (!row) return null;
  return {
    out: { accepted: true, state: row.state, requeued: false, ended: endedEvent(row) },
    next: row.next ? claimed(row.next) : null,
  };
}
