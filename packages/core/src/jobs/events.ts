import { z } from "zod";
import { JobType } from "./schemas";

// What the queue announces when a job ends, in-process and over Postgres NOTIFY (so that every
// web instance hears it). The NOTIFY payload is built by SQL in the same statement as the terminal
// write and parsed with this schema by the listener: it crosses a process boundary.

/** The one NOTIFY channel; `experiment` wakes are sent on it too (an experiment created or resumed). */
export const EVENTS_CHANNEL = "agentlab_events";

export const JobEndedEvent = z.strictObject({
  kind: z.literal("job"),
  jobId: z.string().uuid(),
  type: JobType,
  state: z.enum(["succeeded", "failed", "canceled"]),
  experimentId: z.string().uuid().nullable(),
});
export type JobEndedEvent = z.infer<typeof JobEndedEvent>;

/** Something other than a job changed what an experiment can do next (created, resumed). */
export const ExperimentWakeEvent = z.strictObject({
  kind: z.literal("experiment"),
  experimentId: z.string().uuid(),
});
export type ExperimentWakeEvent = z.infer<typeof ExperimentWakeEvent>;

/** A teacher collection was created or canceled: the leader's collection loop starts or stops its run. */
export const CollectionWakeEvent = z.strictObject({
  kind: z.literal("collection"),
  collectionId: z.string().uuid(),
});
export type CollectionWakeEvent = z.infer<typeof CollectionWakeEvent>;

export const QueueEvent = z.discriminatedUnion("kind", [JobEndedEvent, ExperimentWakeEvent, CollectionWakeEvent]);
export type QueueEvent = z.infer<typeof QueueEvent>;
