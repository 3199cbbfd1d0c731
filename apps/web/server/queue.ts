import { enqueueJob, enqueueJobs, requestCancel, type Db, type Job } from "@agentlab/db";
import type { EnqueueJob } from "@agentlab/core";

// Enqueue goes through here so that idle agents are nudged at once instead of at their next poll.
export type Queue = {
  enqueue(input: EnqueueJob): Promise<Job>;
  enqueueMany(inputs: EnqueueJob[]): Promise<Job[]>;
  cancel(jobId: string): Promise<Awaited<ReturnType<typeof requestCancel>>>;
  /** Set by the agent gateway once it is listening. */
  onJobsAvailable(fn: () => void): void;
  onCancel(fn: (ref: { jobId: string; attemptId: string; agentId: string }) => void): void;
};

export function createQueue(db: Db): Queue {
  const available: Array<() => void> = [];
  const cancels: Array<(ref: { jobId: string; attemptId: string; agentId: string }) => void> = [];
  const nudge = () => available.forEach((fn) => fn());
  return {
    async enqueue(input) {
      const job = await enqueueJob(db, input);
      nudge();
      return job;
    },
    async enqueueMany(inputs) {
      const out = await enqueueJobs(db, inputs);
      nudge();
      return out;
    },
    async cancel(jobId) {
      const res = await requestCancel(db, jobId);
      if (res?.state === "canceling" && res.attemptId && res.agentId) {
        const ref = { jobId, attemptId: res.attemptId, agentId: res.agentId };
        cancels.forEach((fn) => fn(ref));
      }
      return res;
    },
    onJobsAvailable: (fn) => void available.push(fn),
    onCancel: (fn) => void cancels.push(fn),
  };
}
