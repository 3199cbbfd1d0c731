import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../client";
import { experimentStages, jobArtifacts, jobAttempts, jobProgress, jobs } from "../schema";

// What the experiment page's training panel reads: each train stage's newest job, the progress rows
// (the trainer's events) of every attempt of that job, numbered, and the adapters they uploaded per
// epoch: a retried run that resumed after an epoch continues the curve, and the restart is marked.

export type TrainStageData = {
  key: string;
  stageState: string;
  startedAt: Date | null;
  finishedAt: Date | null;
  job: { id: string; state: string; result: Record<string, unknown> | null; attemptId: string | null } | null;
  /** In attempt order, then seq. */
  progress: { attempt: number; seq: number; data: unknown }[];
  adapters: { name: string; meta: Record<string, unknown> }[];
};

/** `kind`: "train" (SFT) or "dpo" (each seed's DPO run of a round streams the same progress rows). */
export async function trainStageData(
  db: Db,
  experimentId: string,
  kind: "train" | "dpo" | "grpo" = "train",
): Promise<TrainStageData[]> {
  const stages = await db
    .select()
    .from(experimentStages)
    .where(and(eq(experimentStages.experimentId, experimentId), eq(experimentStages.kind, kind)))
    .orderBy(asc(experimentStages.key));
  const jobIds = stages.flatMap((s) => s.jobIds.slice(-1));
  const jobRows = jobIds.length
    ? await db
        .select({ id: jobs.id, state: jobs.state, result: jobs.result, attemptId: jobs.currentAttemptId })
        .from(jobs)
        .where(inArray(jobs.id, jobIds))
    : [];
  const attempts = jobIds.length
    ? await db
        .select({ id: jobAttempts.id, jobId: jobAttempts.jobId, number: jobAttempts.number })
        .from(jobAttempts)
        .where(inArray(jobAttempts.jobId, jobIds))
    : [];
  const attemptIds = attempts.map((a) => a.id);
  const number = new Map(attempts.map((a) => [a.id, a.number]));
  const progress = attemptIds.length
    ? await db
        .select({ attemptId: jobProgress.attemptId, seq: jobProgress.seq, data: jobProgress.data })
        .from(jobProgress)
        .where(inArray(jobProgress.attemptId, attemptIds))
        .orderBy(asc(jobProgress.seq))
    : [];
  const adapters = attemptIds.length
    ? await db
        .select({ attemptId: jobArtifacts.attemptId, name: jobArtifacts.name, meta: jobArtifacts.meta })
        .from(jobArtifacts)
        .where(and(inArray(jobArtifacts.attemptId, attemptIds), eq(jobArtifacts.kind, "adapter")))
        .orderBy(asc(jobArtifacts.createdAt))
    : [];
  const jobOf = new Map(attempts.map((a) => [a.id, a.jobId]));
  return stages.map((s) => {
    const job = jobRows.find((j) => j.id === s.jobIds.at(-1)) ?? null;
    const ofJob = (attemptId: string) => job !== null && jobOf.get(attemptId) === job.id;
    return {
      key: s.key,
      stageState: s.state,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      job,
      progress: progress
        .filter((p) => ofJob(p.attemptId))
        .map(({ attemptId, seq, data }) => ({ attempt: number.get(attemptId) ?? 0, seq, data }))
        .sort((a, b) => a.attempt - b.attempt || a.seq - b.seq),
      adapters: adapters.filter((a) => ofJob(a.attemptId)).map(({ name, meta }) => ({ name, meta })),
    };
  });
}
