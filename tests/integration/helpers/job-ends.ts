import type { ClaimedJob } from "@agentlab/core";

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
