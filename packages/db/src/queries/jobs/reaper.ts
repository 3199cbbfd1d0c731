import { sql } from "drizzle-orm";
import { retryVerdict, type JobEndedEvent, type JobRetryBackoff } from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import type { Job } from "./enqueue";
import { endAttempt } from "./end-attempt";

export type ReapedJob = {
  jobId: string;
  attemptId: string;
  agentId: string | null;
  state: Job["state"];
  /** Set when the job ended (not requeued): what was NOTIFYed. */
  ended: JobEndedEvent | null;
};

/**
 * Ends attempts whose lease expired (agent_lost) or that ran past max_duration (timeout), with the
 * same retry rule and the same write as an agent's own result (core retryVerdict, endAttempt).
 */
export async function reapJobs(
  db: Db,
  graceS = 30,
  opts: { onlyRevokedAgents?: boolean; backoff?: JobRetryBackoff } = {},
): Promise<ReapedJob[]> {
  // A revoked agent's leases are released on purpose (revokeAgent expires them): those are reaped
  // even while the gateway waits for other agents to come back after a server start.
  const onlyRevoked = opts.onlyRevokedAgents ?? false;
  return db.transaction(async (tx) => {
    const expired = await queryRows<{
      id: string;
      current_attempt_id: string;
      agent_id: string | null;
      state: Job["state"];
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
      const verdict = retryVerdict(
        { attempt: j.attempts, maxAttempts: j.max_attempts, reason, canceling: j.state === "canceling" },
        opts.backoff,
      );
      // The rows are locked by this transaction, so the guarded write cannot miss.
      const row = await endAttempt(tx, {
        jobId: j.id,
        attemptId: j.current_attempt_id,
        seenState: j.state,
        verdict,
        attempt: { reason },
        job: {},
      });
      if (row)
        out.push({
          jobId: j.id,
          attemptId: j.current_attempt_id,
          agentId: j.agent_id,
          state: row.state,
          ended: row.ended,
        });
    }
    return out;
  });
}
