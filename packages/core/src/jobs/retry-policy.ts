import { RETRYABLE_REASONS, type JobState, type TerminalReason } from "./schemas";

// The one rule for what happens to a job when an attempt ends, used by the attempt's own result
// (finishAttempt) and by the reaper (lease expiry, overlong runs): both hand the same facts to this
// function instead of each writing the rule (once in SQL, once in TypeScript, as before).

export type AttemptEnd = {
  /** The attempt that just ended, 1-based (jobs.attempts after the claim). */
  attempt: number;
  maxAttempts: number;
  reason: TerminalReason;
  /** A cancel was requested while it ran: whatever the attempt says, the job ends canceled. */
  canceling: boolean;
};

export type JobRetryBackoff = {
  /** The wait before the second retry; the first retry is immediate (see below). */
  baseMs: number;
  capMs: number;
  /** Full jitter: the wait is uniform in [0, min(capMs, baseMs·2^(n-2))] for retry n ≥ 2. */
  random?: () => number;
};

export const DEFAULT_JOB_BACKOFF: JobRetryBackoff = { baseMs: 2_000, capMs: 60_000 };

export type RetryVerdict =
  | { state: "queued"; backoffMs: number }
  | { state: Extract<JobState, "succeeded" | "failed" | "canceled">; terminalReason: TerminalReason };

/**
 * Requeue while the reason is retryable and attempts remain, else end. The first retry is not
 * delayed: a lost agent or one infrastructure hiccup says nothing about the job, and the queue's
 * tests and users expect it back at once. Retries after that back off with full jitter, so a job
 * that keeps killing its agents does not cycle through the fleet as fast as it can be claimed.
 */
export function retryVerdict(end: AttemptEnd, backoff: JobRetryBackoff = DEFAULT_JOB_BACKOFF): RetryVerdict {
  if (end.canceling) return { state: "canceled", terminalReason: "canceled" };
  if (RETRYABLE_REASONS.includes(end.reason) && end.attempt < end.maxAttempts)
    return { state: "queued", backoffMs: retryBackoffMs(end.attempt, backoff) };
  if (end.reason === "succeeded") return { state: "succeeded", terminalReason: "succeeded" };
  if (end.reason === "canceled") return { state: "canceled", terminalReason: "canceled" };
  return { state: "failed", terminalReason: end.reason };
}

/** The wait before the retry that follows attempt `attempt` (0 after the first attempt). */
export function retryBackoffMs(attempt: number, backoff: JobRetryBackoff = DEFAULT_JOB_BACKOFF): number {
  if (attempt <= 1) return 0;
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(attempt - 2, 30));
  return Math.floor((backoff.random ?? Math.random)() * ceiling);
}
