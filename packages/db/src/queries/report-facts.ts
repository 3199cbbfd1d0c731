import { and, asc, eq, isNotNull, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import {
  agents,
  evaluations,
  experimentStages,
  experiments,
  generations,
  jobAttempts,
  jobs,
  sftDatasets,
  splits,
} from "../schema";

// What the report header states about an experiment: the split, the SFT dataset, the
// jobs by type and the agents that ran them. Read once by the report stage and stored in the report.

export async function reportSplitFacts(db: Db, splitId: string) {
  const [row] = await db
    .select({
      id: splits.id,
      name: splits.name,
      seed: splits.seed,
      manifestHash: splits.manifestHash,
      poolSnapshotHash: splits.poolSnapshotHash,
      counts: splits.counts,
    })
    .from(splits)
    .where(eq(splits.id, splitId));
  return row;
}

export async function reportDatasetFacts(db: Db, datasetId: string) {
  const [row] = await db
    .select({
      id: sftDatasets.id,
      name: sftDatasets.name,
      hash: sftDatasets.hash,
      samples: sftDatasets.sampleCount,
      tasks: sftDatasets.taskCount,
      oracleSamples: sftDatasets.oracleSamples,
      quality: sftDatasets.quality,
      tokenCounts: sftDatasets.tokenCounts,
    })
    .from(sftDatasets)
    .where(eq(sftDatasets.id, datasetId));
  return row;
}

export async function reportExperimentTimes(db: Db, experimentId: string) {
  const [row] = await db
    .select({ createdAt: experiments.createdAt })
    .from(experiments)
    .where(eq(experiments.id, experimentId));
  return row;
}

/** The experiment's jobs: its own and those its stages adopted (a train job a study's arms share). */
const ofExperiment = (experimentId: string) =>
  or(
    eq(jobs.experimentId, experimentId),
    sql`${jobs.id} in (select unnest(${experimentStages.jobIds}) from ${experimentStages} where ${experimentStages.experimentId} = ${experimentId})`,
  );

/** The experiment's jobs by type, with the first and last start/finish. */
export const reportJobCounts = (db: Db, experimentId: string) =>
  db
    .select({
      type: jobs.type,
      n: sql<number>`count(*)::int`,
      started: sql<string | null>`min(${jobs.startedAt})::text`,
      finished: sql<string | null>`max(${jobs.finishedAt})::text`,
    })
    .from(jobs)
    .where(ofExperiment(experimentId))
    .groupBy(jobs.type)
    .orderBy(asc(jobs.type));

/** Every agent that ran an attempt of one of the experiment's jobs, with its hardware and the job types it ran. */
export const reportAgents = (db: Db, experimentId: string) =>
  db
    .select({
      id: agents.id,
      name: agents.name,
      capabilities: agents.capabilities,
      types: sql<string[]>`array_agg(distinct ${jobs.type} order by ${jobs.type})`,
      attempts: sql<number>`count(*)::int`,
    })
    .from(jobAttempts)
    .innerJoin(jobs, eq(jobs.id, jobAttempts.jobId))
    .innerJoin(agents, eq(agents.id, jobAttempts.agentId))
    .where(and(ofExperiment(experimentId), isNotNull(jobAttempts.agentId)))
    .groupBy(agents.id)
    .orderBy(asc(agents.name));

/** The grading isolation each stored verdict was graded under (GradeResult.isolation; absent = judge). */
export const evaluationIsolation = (db: Db, experimentId: string) =>
  db
    .select({
      split: evaluations.split,
      modelKey: evaluations.modelKey,
      taskId: evaluations.taskId,
      sampleIndex: evaluations.sampleIndex,
      isolation: sql<string | null>`${evaluations.grade}->>'isolation'`,
    })
    .from(evaluations)
    .where(eq(evaluations.experimentId, experimentId));

/** Every stored answer for one task of an experiment (graded or not): the per-task view's pairs without a verdict. */
export const taskGenerations = (db: Db, k: { experimentId: string; split: "dev" | "test"; taskId: string }) =>
  db
    .select({
      modelKey: generations.modelKey,
      sampleIndex: generations.sampleIndex,
      seed: generations.seed,
      text: generations.text,
      gradeState: generations.gradeState,
      gradeError: generations.gradeError,
    })
    .from(generations)
    .where(
      and(
        eq(generations.experimentId, k.experimentId),
        eq(generations.split, k.split),
        eq(generations.taskId, k.taskId),
      ),
    )
    .orderBy(asc(generations.modelKey), asc(generations.sampleIndex));
