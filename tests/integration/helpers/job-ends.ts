import { getJob, type Db } from "@agentlab/db";
import { isTerminal, type ClaimedJob, type JobState } from "@agentlab/core";
import { waitFor } from "./server";

/** The result an agent sends when a claimed job's process failed by its own fault (not retried). */
export const userErrorResult = (claimed: Pick<ClaimedJob, "jobId" | "attemptId">, error = "x") => ({
  jobId: claimed.jobId,
  attemptId: claimed.attemptId,
  reason: "user_error" as const,
  exitCode: 1,
  signal: null,
  result: {},
  error,
});

/** The job once it reached a terminal state (the queue's own isTerminal), polled every 250 ms. */
export const jobEnded = (db: Db, id: string, timeoutMs = 240_000) =>
  waitFor(
    async () => {
      const j = await getJob(db, id);
      return j && isTerminal(j.state as JobState) ? j : null;
    },
    timeoutMs,
    250,
  );
