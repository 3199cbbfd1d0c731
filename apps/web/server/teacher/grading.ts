import { sql } from "drizzle-orm";
import { GradeResult, type GradeJobPayload } from "@agentlab/core";
import {
  candidatesToGrade,
  finishedGradeJobs,
  queryRows,
  recordVerdict,
  setCandidateGradeJob,
  toTaskSpec,
  type TaskRow,
} from "@agentlab/db";
import type { CandidateFile } from "@agentlab/core";
import type { Services } from "../services";

// Candidates are graded by agents through ordinary `grade` jobs; verdicts are copied back onto the
// candidate when the job ends (polled: the queue has no completion hooks, and a poll is restart-safe).

/** The task as the agent grades it, in the mode its admission audit chose (the isolated judge unless it needs in-process). */
export const gradePayload = (task: TaskRow, candidate: CandidateFile[]): GradeJobPayload => ({
  task: toTaskSpec(task),
  candidate,
  isolation: task.gradingIsolation,
});

/** Enqueues one grade job per ungraded, parsable candidate of the collection; returns how many are pending. */
export async function enqueueCollectionGrading(services: Services, collectionId: string): Promise<number> {
  const rows = await candidatesToGrade(services.db, collectionId);
  for (const { candidate, task } of rows) {
    if (!candidate.files) continue;
    // The dedupe key makes enqueueing idempotent: a reused candidate is graded once, whoever asks.
    const job = await services.queue.enqueue({
      type: "grade",
      payload: gradePayload(task, candidate.files),
      dedupeKey: `grade:candidate:${candidate.id}`,
      maxDurationS: 900,
    });
    await setCandidateGradeJob(services.db, candidate.id, job.id);
  }
  const [pending] = await queryRows<{ n: number }>(
    services.db,
    sql`select count(distinct c.id)::int as n from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id where i.collection_id = ${collectionId} and c.verdict is null`,
  );
  return pending?.n ?? 0;
}

/** Copies verdicts of finished grade jobs onto candidates and closes collections whose grading is complete. */
export async function syncGrades(services: Services): Promise<number> {
  const { db } = services;
  const finished = await finishedGradeJobs(db);
  for (const f of finished) {
    const parsed = f.state === "succeeded" ? GradeResult.safeParse(f.result) : null;
    if (parsed?.success) {
      await recordVerdict(db, f.candidateId, {
        verdict: parsed.data.verdict,
        reasons: parsed.data.reasons,
        result: parsed.data,
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
  await queryRows(
    db,
    sql`update teacher_collections col set state = 'done', finished_at = now()
        where col.state = 'grading' and not exists (
          select 1 from teacher_collection_items i join teacher_candidates c on c.id = i.candidate_id where i.collection_id = col.id and c.verdict is null)`,
  );
  return finished.length;
}
