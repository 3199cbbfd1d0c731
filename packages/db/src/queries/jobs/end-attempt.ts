import { sql, type SQL } from "drizzle-orm";
import { storableJson, storableText, type JobEndedEvent, type RetryVerdict, type TerminalReason } from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import type { Job } from "./enqueue";
import { endedEvent, notifyIfEnded } from "../job-events";

// The one write that ends an attempt, shared by the attempt's own result (finish.ts) and the reaper
// (reaper.ts): the attempt row gets its reason, the job takes the state core's retryVerdict chose,
// and a terminal state is announced by NOTIFY in the same statement. Guarded by the attempt id and
// the state the caller decided on, so a job that changed in between (a cancel request) is not
// written and the caller decides again.

export type AttemptEndWrite = {
  jobId: string;
  attemptId: string;
  /** The state the verdict was computed from; the write happens only if the job is still in it. */
  seenState: Job["state"];
  /** When set, the write happens only if this agent holds the job (an agent's own result). */
  agentId?: string | null;
  /**
   * The transaction commits without waiting for its WAL flush (set_config(…, true): this
   * transaction only, and only when this write happened). For an agent's result and the claim of
   * its next job. What a Postgres crash can lose is the last few hundred ms of such commits, and
   * each loss is harmless: a lost claim's attempt id no longer exists, so every write of the agent
   * that ran it is refused (fencing) and the job is still queued; a lost result leaves the job
   * running under its old attempt until the lease runs out and the reaper requeues it (run again:
   * at least once, never accepted twice). Nothing durable can depend on a lost commit: WAL is one
   * ordered log, so any later synchronous commit (the runner's next stage, say) flushes every
   * earlier one with it. Why: a NOTIFY makes Postgres serialise notifying commits under one lock,
   * flush included, so synchronous job ends queue up one behind another (Lock:object waits).
   */
  commitWithoutFlush?: boolean;
  verdict: RetryVerdict;
  attempt: { reason: TerminalReason; exitCode?: number | null; signal?: string | null; error?: string | null };
  /** The job's result and error; undefined keeps what the row has (the reaper knows neither). */
  job: { result?: unknown; error?: string | null };
};

/**
 * The write as common table expressions over `w`: `j` is the job row as written (id, type, state,
 * experiment_id; empty when the guard missed), `ended` the attempt row. For statements that do
 * more in the same breath (finish-and-claim.ts); the NOTIFY is the caller's select (notifyIfEnded).
 */
export function endCtes(w: AttemptEndWrite): SQL {
  const v = w.verdict;
  const queued = v.state === "queued";
  const terminalReason = v.state === "queued" ? null : v.terminalReason;
  const backoffS = v.state === "queued" ? v.backoffMs / 1000 : 0;
  // An agent's result and error are recorded as sent, except for text Postgres cannot store
  // (core storableText): a NUL in them would fail this write and leave the job running.
  const result =
    queued || w.job.result === undefined ? sql`result` : sql`${JSON.stringify(storableJson(w.job.result))}::jsonb`;
  const error =
    w.job.error === undefined ? sql`error` : sql`${w.job.error === null ? null : storableText(w.job.error)}`;
  const attemptError = w.attempt.error == null ? null : storableText(w.attempt.error);
  return sql`j as (
          update jobs set
            state = ${v.state}::job_state,
            terminal_reason = ${queued ? sql`null` : sql`${terminalReason}::terminal_reason`},
            current_attempt_id = ${queued ? sql`null` : sql`current_attempt_id`},
            agent_id = ${queued ? sql`null` : sql`agent_id`},
            lease_expires_at = null,
            not_before = ${queued ? sql`now() + make_interval(secs => ${backoffS})` : sql`null`},
            result = ${result},
            error = ${error},
            finished_at = ${queued ? sql`null` : sql`now()`}
          where id = ${w.jobId} and current_attempt_id = ${w.attemptId} and state = ${w.seenState}::job_state
            and (${w.agentId ?? null}::uuid is null or agent_id = ${w.agentId ?? null}::uuid)
          returning id, type, state, experiment_id
        ), ended as (
          update job_attempts set reason = ${w.attempt.reason}::terminal_reason, exit_code = ${w.attempt.exitCode ?? null},
            signal = ${w.attempt.signal ?? null}, error = ${attemptError}, finished_at = now()
          where id = ${w.attemptId} and exists (select 1 from j)
        )`;
}

/** Only when the write happened (one row of `j`): see AttemptEndWrite.commitWithoutFlush. */
export const relaxedCommit = sql`set_config('synchronous_commit', 'off', true)`;

export async function endAttempt(
  db: Db,
  w: AttemptEndWrite,
): Promise<{ state: Job["state"]; ended: JobEndedEvent | null } | null> {
  const [row] = await queryRows<{ id: string; type: string; state: Job["state"]; experiment_id: string | null }>(
    db,
    sql`with ${endCtes(w)}
        select j.id, j.type, j.state, j.experiment_id, ${notifyIfEnded("j")} as notified${
          w.commitWithoutFlush ? sql`, ${relaxedCommit} as relaxed` : sql``
        } from j`,
  );
  return row ? { state: row.state, ended: endedEvent(row) } : null;
}
