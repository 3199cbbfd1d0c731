import {
  enqueueJob,
  enqueueJobs,
  notifyExperimentWake,
  requestCancel,
  type CancelOutcome,
  type Db,
  type Job,
} from "@agentlab/db";
import { isTerminal, JobEndedEvent, type EnqueueJob, type JobState } from "@agentlab/core";
import { createEventBus, type EventBus } from "./events/bus";
import { createLogger, type Logger } from "./logger";

// Enqueue goes through here so that idle agents are nudged at once instead of at their next poll,
// and the queue's events (a job ended; an experiment can move) are announced in this process
// (events.publish) besides the NOTIFY their transaction issued.
export type Queue = {
  enqueue(input: EnqueueJob): Promise<Job>;
  enqueueMany(inputs: EnqueueJob[]): Promise<Job[]>;
  cancel(jobId: string): Promise<CancelOutcome | null>;
  /** Tells the experiment runner (on whichever instance runs it) that this experiment can move. */
  wakeExperiment(experimentId: string): Promise<void>;
  events: EventBus;
  /** Nudges idle agents (a requeue made work available); the gateway listens via onJobsAvailable. */
  jobsAvailable(): void;
  /** Set by the agent gateway once it is listening; `count`: how many jobs were enqueued (absent: unknown). */
  onJobsAvailable(fn: (count?: number) => void): void;
  onCancel(fn: (ref: { jobId: string; attemptId: string; agentId: string }) => void): void;
};

// A dedupe key can hand back a job that ended long ago: whoever enqueued it waits for its end, so
// it is announced again, here only (the NOTIFY went out when it ended).
function announceEnded(events: EventBus, jobs: Job[]) {
  for (const j of jobs)
    if (isTerminal(j.state as JobState))
      events.publish(
        JobEndedEvent.parse({ kind: "job", jobId: j.id, type: j.type, state: j.state, experimentId: j.experimentId }),
      );
}

export function createQueue(db: Db, log: Logger = createLogger("warn")): Queue {
  const available: Array<(count?: number) => void> = [];
  const cancels: Array<(ref: { jobId: string; attemptId: string; agentId: string }) => void> = [];
  const nudge = (count?: number) => available.forEach((fn) => fn(count));
  // Only jobs that are queued now need an agent (a dedupe key may return one running or ended).
  const nudgeFor = (jobs: Job[]) => {
    const queued = jobs.filter((j) => j.state === "queued").length;
    if (queued > 0) nudge(queued);
  };
  const events = createEventBus(log);
  return {
    events,
    async enqueue(input) {
      const job = await enqueueJob(db, input);
      nudgeFor([job]);
      announceEnded(events, [job]);
      return job;
    },
    async enqueueMany(inputs) {
      const out = await enqueueJobs(db, inputs);
      nudgeFor(out);
      announceEnded(events, out);
      return out;
    },
    async cancel(jobId) {
      const res = await requestCancel(db, jobId);
      if (res?.ended) events.publish(res.ended);
      if (res?.state === "canceling" && res.attemptId && res.agentId) {
        const ref = { jobId, attemptId: res.attemptId, agentId: res.agentId };
        cancels.forEach((fn) => fn(ref));
      }
      return res;
    },
    async wakeExperiment(experimentId) {
      await notifyExperimentWake(db, experimentId);
      events.publish({ kind: "experiment", experimentId });
    },
    jobsAvailable: () => nudge(),
    onJobsAvailable: (fn) => void available.push(fn),
    onCancel: (fn) => void cancels.push(fn),
  };
}
