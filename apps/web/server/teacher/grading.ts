import { GradeResult, type GradeJobPayload, type TaskSpec } from "@agentlab/core";
import {
  candidatesToGrade,
  closeGradedCollections,
  reopenInfraErrorCandidates,
  finishedGradeJobs,
  recordVerdict,
  setCandidateGradeJob,
  stageJobs,
  toTaskSpec,
  ungradedCandidateCount,
  type TaskRow,
} from "@agentlab/db";
import type { CandidateFile } from "@agentlab/core";
import type { Services } from "../services";
import {
  createGradeReader,
  enqueueGradeBatches,
  enqueueRetriesAlone,
  type GradingOwner,
  type RetryAlone,
} from "../grading/batches";

// Candidates are graded by agents through the batched-grading service (grading/batches.ts), each
// candidate an item keyed by its id. Verdicts are copied back onto the candidate when the job
// ends (polled: the queue has no completion hooks, and a poll is restart-safe). A candidate its
// batch gave no verdict is retried alone, once; what that single job ends with is recorded,
// the grader's infra_error included. An infra_error says nothing of the answer, so the next
// collection that holds the candidate (the cache hands it on) grades it again.

/** A candidate gets its batch and one retry alone. */
const POLICY = { maxJobs: 2, retryGraderInfraError: false };

/** Candidates are linked to their grade job by id; their jobs belong to no experiment. */
const OWNER: GradingOwner = {
  batchKey: (id) => `grade-batch:candidates:${id}`,
  async link(db, ids, jobId) {
    for (const id of ids) await setCandidateGradeJob(db, id, jobId);
  },
};

/** The task as the agent grades it, in the mode its admission audit chose (the isolated judge unless it needs in-process). */
export const gradePayload = (task: TaskRow, candidate: CandidateFile[]): GradeJobPayload => ({
  task: toTaskSpec(task),
  candidate,
  isolation: task.gradingIsolation,
});

/** The retry alone after batch job `after` (a candidate regraded later gets a new one). */
const singleKey = (candidateId: string, after: string) => `grade:candidate:${candidateId}:after:${after}`;

/** Enqueues the collection's ungraded, parsable candidates in batches; returns how many are pending. */
export async function enqueueCollectionGrading(services: Services, collectionId: string): Promise<number> {
  const { db } = services;
  // Regraded answers go in batches keyed by this collection: their earlier batch's key (the same
  // answers) still holds the job that failed them.
  const reopened = await reopenInfraErrorCandidates(db, collectionId);
  const owner: GradingOwner = reopened
    ? { ...OWNER, batchKey: (id) => `grade-batch:candidates:${collectionId}:${id}` }
    : OWNER;
  const specs = new Map<string, TaskSpec>();
  const specOf = (t: TaskRow) => {
    const known = specs.get(t.id);
    if (known) return known;
    const spec = toTaskSpec(t);
    specs.set(t.id, spec);
    return spec;
  };
  // A reused candidate is graded once, whoever asks: it has a grade job and is not listed again.
  const inputs = (await candidatesToGrade(db, collectionId)).flatMap(({ candidate, task }) =>
    candidate.files
      ? [{ key: candidate.id, task: specOf(task), candidate: candidate.files, isolation: task.gradingIsolation }]
      : [],
  );
  await enqueueGradeBatches(services, owner, inputs);
  return ungradedCandidateCount(db, collectionId);
}

/** Copies verdicts of finished grade jobs onto candidates and closes collections whose grading is complete. */
export async function syncGrades(services: Services): Promise<number> {
  const { db } = services;
  const finished = await finishedGradeJobs(db);
  const jobs = new Map((await stageJobs(db, [...new Set(finished.map((f) => f.jobId))])).map((j) => [j.id, j]));
  const reader = createGradeReader(POLICY);
  const retries: RetryAlone[] = [];
  for (const f of finished) {
    const job = jobs.get(f.jobId);
    if (!job) continue;
    const step = reader.step(job, f.candidateId, job.type === "grade-batch" ? 1 : POLICY.maxJobs);
    if (step.kind === "graded")
      await recordVerdict(db, f.candidateId, {
        verdict: step.grade.verdict,
        reasons: step.grade.reasons,
        result: GradeResult.parse(step.grade),
      });
    else if (step.kind === "retry" && step.alone)
      retries.push({ key: f.candidateId, payload: step.alone, dedupeKey: singleKey(f.candidateId, f.jobId) });
    // The candidate could not be graded; infra_error is never a pass, and regrading is explicit.
    else
      await recordVerdict(db, f.candidateId, {
        verdict: "infra_error",
        reasons: [
          step.kind === "retry"
            ? `${step.error}; its batch payload is unreadable, so it cannot be retried alone`
            : step.error,
        ],
        result: null,
      });
  }
  await enqueueRetriesAlone(services, OWNER, retries);
  await closeGradedCollections(db);
  return finished.length;
}
