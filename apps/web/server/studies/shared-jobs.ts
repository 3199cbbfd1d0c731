import { listStudyArms, studyOfExperiment, type Db } from "@agentlab/db";
import { canonicalJson, sha256Hex } from "@agentlab/core";

// The work a study's arms have in common is done once: a job whose content (payload and
// requirements) is the same for several arms — the SFT training of arms that differ only after it,
// the generation and grading of a shared adapter's answers — is keyed by that content within the
// study, and every other arm is named as sharing it, so the queue adopts the job one arm enqueued
// (`sharedWith`: never another experiment's job, never other work).

export type JobKey = { dedupeKey: string; sharedWith: string[] };

/** Keys a job by its content within the arm's study (`kind` names the job's role). */
export type StudySharing = { key(kind: string, work: unknown): JobKey };

/** How an arm's jobs are shared with the other arms of its study; null for a stand-alone experiment. */
export async function studySharing(db: Db, experimentId: string): Promise<StudySharing | null> {
  const of = await studyOfExperiment(db, experimentId);
  if (!of) return null;
  const sharedWith = (await listStudyArms(db, of.study.id))
    .map((a) => a.experimentId)
    .filter((id) => id !== experimentId);
  return {
    key: (kind, work) => ({ dedupeKey: `study:${of.study.id}:${kind}:${sha256Hex(canonicalJson(work))}`, sharedWith }),
  };
}
