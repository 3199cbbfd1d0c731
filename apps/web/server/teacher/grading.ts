import {
  GradeBatchJobPayload,
  GradeResult,
  batchItemOutcomes,
  gradeBatchId,
  gradeBatchMaxDurationS,
  gradeBatchPayloads,
  gradePayloadOfItem,
  parseJobResult,
  type GradeJobPayload,
  type TaskSpec,
} from "@agentlab/core";
import {
  candidatesToGrade,
  closeGradedCollections,
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

// Candidates are graded by agents through the queue: `grade-batch` jobs of up to 64 candidates,
// each candidate an item keyed by its id. Verdicts are copied back onto the candidate
// when the job ends (polled: the queue has no completion hooks, and a poll is restart-safe). A
// candidate its batch gave no verdict is retried alone, as the single `grade` job it used to get
// (the queue retries that one on infra_error); what that one ends with is recorded, infra_error
// included, and regrading is explicit.

/** The task as the agent grades it, in the mode its admission audit chose (the isolated judge unless it needs in-process). */
export const gradePayload = (task: TaskRow, candidate: CandidateFile[]): GradeJobPayload => ({
  task: toTaskSpec(task),
  candidate,
  isolation: task.gradingIsolation,
});

const singleKey = (candidateId: string) => `grade:candidate:${candidateId}`;

/** Enqueues the collection's ungraded, parsable candidates in batches; returns how many are pending. */
export async function enqueueCollectionGrading(services: Services, collectionId: string): Promise<number> {
  const { db, queue } = services;
  const rows = (await candidatesToGrade(db, collectionId))
    .flatMap(({ candidate, task }) => (candidate.files ? [{ id: candidate.id, files: candidate.files, task }] : []))
    // A fixed order makes the same candidates form the same batches (and dedupe keys) after a restart.
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const specs = new Map<string, TaskSpec>();
  const specOf = (t: TaskRow) => {
    const known = specs.get(t.id);
    if (known) return known;
    const spec = toTaskSpec(t);
    specs.set(t.id, spec);
    return spec;
  };
  const inputs = rows.map((r) => ({
    key: r.id,
    task: specOf(r.task),
    candidate: r.files,
    isolation: r.task.gradingIsolation,
  }));
  for (const payload of gradeBatchPayloads(inputs)) {
    const ids = payload.items.map((i) => i.key);
    // A reused candidate is graded once, whoever asks: it has a grade job and is not listed again.
    const job = await queue.enqueue({
      type: "grade-batch",
      payload,
      dedupeKey: `grade-batch:candidates:${gradeBatchId(ids)}`,
      maxDurationS: gradeBatchMaxDurationS(payload),
      maxAttempts: 1,
    });
    await db.transaction(async (tx) => {
      for (const id of ids) await setCandidateGradeJob(tx, id, job.id);
    });
  }
  return ungradedCandidateCount(db, collectionId);
}

type Job = Awaited<ReturnType<typeof stageJobs>>[number];

/** A candidate its batch did not grade: the same item as a single grade job of its own. */
async function retryAlone(services: Services, job: Job, candidateId: string, why: string): Promise<void> {
  const batch = GradeBatchJobPayload.safeParse(job.payload);
  const payload = batch.success ? gradePayloadOfItem(batch.data, candidateId) : null;
  if (!payload) {
    await recordVerdict(services.db, candidateId, {
      verdict: "infra_error",
      reasons: [`${why}; its batch payload is unreadable, so it cannot be retried alone`],
      result: null,
    });
    return;
  }
  const single = await services.queue.enqueue({
    type: "grade",
    payload,
    dedupeKey: singleKey(candidateId),
    maxDurationS: 900,
  });
  await setCandidateGradeJob(services.db, candidateId, single.id);
}

/** Copies verdicts of finished grade jobs onto candidates and closes collections whose grading is complete. */
export async function syncGrades(services: Services): Promise<number> {
  const { db } = services;
  const finished = await finishedGradeJobs(db);
  // Each job read once, however many of its candidates are listed (a batch result holds 64 grades).
  const jobs = new Map((await stageJobs(db, [...new Set(finished.map((f) => f.jobId))])).map((j) => [j.id, j]));
  const keysOf = new Map<string, string[]>();
  for (const f of finished)
    if (f.type === "grade-batch") keysOf.set(f.jobId, [...(keysOf.get(f.jobId) ?? []), f.candidateId]);
  const outcomes = new Map(
    [...keysOf].flatMap(([id, keys]) => {
      const job = jobs.get(id);
      return job ? [[id, batchItemOutcomes(job, keys)] as const] : [];
    }),
  );
  for (const f of finished) {
    const job = jobs.get(f.jobId);
    if (!job) continue;
    const batch = outcomes.get(f.jobId);
    if (batch) {
      const outcome = batch.get(f.candidateId);
      if (outcome?.status === "graded")
        await recordVerdict(db, f.candidateId, {
          verdict: outcome.grade.verdict,
          reasons: outcome.grade.reasons,
          result: GradeResult.parse(outcome.grade),
        });
      else await retryAlone(services, job, f.candidateId, outcome?.error ?? "no verdict in its batch");
      continue;
    }
    const parsed = f.state === "succeeded" ? parseJobResult("grade", job.result) : null;
    if (parsed) {
      await recordVerdict(db, f.candidateId, {
        verdict: parsed.verdict,
        reasons: parsed.reasons,
        result: GradeResult.parse(parsed),
      });
    } else {
      // The candidate could not be graded; infra_error is never a pass, and regrading is explicit.
      const why =
        f.state === "succeeded"
          ? "grade job result is not a GradeResult"
          : `grade job ${f.state} (${f.reason ?? "?"}): ${f.error ?? ""}`;
      await recordVerdict(db, f.candidateId, { verdict: "infra_error", reasons: [why], result: null });
    }
  }
  await closeGradedCollections(db);
  return finished.length;
}
