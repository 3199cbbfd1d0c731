import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../client";
import { experimentStages, jobArtifacts, jobProgress, jobs } from "../schema";

// What the experiment page's training panel reads: each train stage's newest job, that job's
// current attempt's progress rows (the trainer's events) and the adapters it uploaded per epoch.

export type TrainStageData = {
  key: string;
  stageState: string;
  startedAt: Date | null;
  finishedAt: Date | null;
  job: { id: string; state: string; result: Record<string, unknown> | null; attemptId: string | null } | null;
  progress: { seq: number; data: unknown }[];
  adapters: { name: string; meta: Record<string, unknown> }[];
};

/** `kind`: "train" (SFT) or "dpo" (each seed's DPO run of a round streams the same progress rows). */
export async function trainStageData(
  db: Db,
  experimentId: string,
  kind: "train" | "dpo" = "train",
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
  const attemptIds = jobRows.flatMap((j) => (j.attemptId ? [j.attemptId] : []));
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
    : [];
  return stages.map((s) => {
    const job = jobRows.find((j) => j.id === s.jobIds.at(-1)) ?? null;
    const att = job?.attemptId ?? null;
    return {
      key: s.key,
      stageState: s.state,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      job,
      progress: progress.filter((p) => p.attemptId === att).map(({ seq, data }) => ({ seq, data })),
      adapters: adapters.filter((a) => a.attemptId === att).map(({ name, meta }) => ({ name, meta })),
    };
  });
}
