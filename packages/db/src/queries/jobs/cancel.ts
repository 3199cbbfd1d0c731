import { eq, sql } from "drizzle-orm";
import { JobEndedEvent } from "@agentlab/core";
import { jobs } from "../../schema";
import type { Job } from "./enqueue";
import { notifyIfEnded } from "../job-events";
import { queryRows, type Db } from "../../client";

export type CancelOutcome = {
  state: Job["state"];
  attemptId: string | null;
  agentId: string | null;
  /** Set when the cancel itself ended the job (it was queued): what was NOTIFYed. */
  ended: JobEndedEvent | null;
};

/** Queued jobs are canceled at once; running ones move to canceling and the agent is told. */
export async function requestCancel(db: Db, jobId: string): Promise<CancelOutcome | null> {
  return db.transaction(async (tx) => {
    const [job] = await tx.select().from(jobs).where(eq(jobs.id, jobId)).for("update");
    if (!job) return null;
    if (job.state === "queued") {
      await queryRows(
        tx,
        sql`with j as (
              update jobs set state = 'canceled', terminal_reason = 'canceled', not_before = null, finished_at = now()
              where id = ${jobId} returning id, type, state, experiment_id)
            select ${notifyIfEnded("j")} from j`,
      );
      const ended = JobEndedEvent.parse({
        kind: "job",
        jobId,
        type: job.type,
        state: "canceled",
        experimentId: job.experimentId,
      });
      return { state: "canceled" as const, attemptId: null, agentId: null, ended };
    }
    if (job.state === "running") await tx.update(jobs).set({ state: "canceling" }).where(eq(jobs.id, jobId));
    const state = job.state === "running" ? ("canceling" as const) : job.state;
    return { state, attemptId: job.currentAttemptId, agentId: job.agentId, ended: null };
  });
}
