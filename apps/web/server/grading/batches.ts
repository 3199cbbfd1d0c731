import {
  GRADE_BATCH_MAX_ITEMS,
  batchItemOutcomes,
  gradeBatchId,
  gradeBatchMaxDurationS,
  gradeBatchPayloads,
  gradePayloadOfItem,
  parseJobPayload,
  parseJobResult,
  type BatchItemOutcome,
  type GradeBatchInput,
  type GradeBatchJobPayload,
  type GradeJobPayload,
  type GradeJobResult,
} from "@agentlab/core";
import type { Db, stageJobs } from "@agentlab/db";
import type { Services } from "../services";

// Batched grading with retries alone, for every owner of answers to grade (an experiment's
// evaluation, a teacher collection). An answer's first grading goes in a `grade-batch` job of up
// to 64 answers, so the queue sees tens of jobs, not thousands. An answer its batch gave no verdict
// (its item failed, or the whole batch did) is retried ALONE, as a single `grade` job: one bad
// candidate cannot sink a batch twice. Batches run once (maxAttempts 1) for the same reason; the
// queue's own retries are for single jobs. The owner keeps, per answer, the jobs tried for it and
// decides what a final "no verdict" means for it; the batching, the naming and the reading are here.

/** A grade job as the owner reads it back (stageJobs' row). */
export type GradeJobRow = Awaited<ReturnType<typeof stageJobs>>[number];

/** Who owns the answers: how its jobs are named and how an answer is tied to the job grading it. */
export type GradingOwner = {
  /** The experiment whose jobs these are (its runner wakes when they end); absent for a collection. */
  experimentId?: string;
  /** A batch's dedupe key from its stable id (gradeBatchId): the same answers give the same job after a restart. */
  batchKey(batchId: string): string;
  /** Records that the answers named by `keys` are now graded by `jobId`. */
  link(db: Db, keys: readonly string[], jobId: string): Promise<void>;
  /**
   * A batch's key by its content, for work other owners may hold too (a study's arms grading the
   * same answers); absent: batchKey.
   */
  sharedKey?(batch: unknown): { dedupeKey: string; sharedWith: string[] };
};

/** How many jobs an answer may get (its batch included) and whether a grader's own infra_error earns a retry. */
export type RetryPolicy = { maxJobs: number; retryGraderInfraError: boolean };

/** A batch smaller than this waits for more answers while more may still join (moreMayJoin). */
const MIN_EARLY_BATCH = 32;
/** A retry alone grades one answer: the single grade job's own limit. */
const ALONE_MAX_DURATION_S = 900;

/**
 * Enqueues answers never graded yet in batches, in a fixed order (by key), so the same answers make
 * the same batches and dedupe keys after a restart; each batch's answers are linked in one
 * transaction, so a crash cannot leave half of them linked. A last batch smaller than
 * MIN_EARLY_BATCH waits while `moreMayJoin` says more answers may come. Returns the jobs enqueued.
 */
export async function enqueueGradeBatches(
  services: Pick<Services, "db" | "queue">,
  owner: GradingOwner,
  items: readonly GradeBatchInput[],
  opts: { moreMayJoin?: () => Promise<boolean> } = {},
): Promise<number> {
  if (items.length === 0) return 0;
  const sorted = [...items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const payloads = gradeBatchPayloads(sorted);
  const last = payloads[payloads.length - 1];
  if (
    opts.moreMayJoin &&
    last &&
    last.items.length < Math.min(MIN_EARLY_BATCH, GRADE_BATCH_MAX_ITEMS) &&
    (await opts.moreMayJoin())
  )
    payloads.pop();
  for (const payload of payloads) {
    const keys = payload.items.map((i) => i.key);
    const job = await services.queue.enqueue({
      type: "grade-batch",
      ...(owner.experimentId ? { experimentId: owner.experimentId } : {}),
      ...(owner.sharedKey?.(payload) ?? { dedupeKey: owner.batchKey(gradeBatchId(keys)) }),
      maxDurationS: gradeBatchMaxDurationS(payload),
      maxAttempts: 1,
      payload,
    });
    await services.db.transaction((tx) => owner.link(tx, keys, job.id));
  }
  return payloads.length;
}

/** What the last job tried for an answer means for it next. */
export type GradeStep =
  | { kind: "graded"; grade: GradeJobResult }
  /** No verdict yet and jobs left: grade it alone (`alone`: the single payload its last job holds, null when unreadable). */
  | { kind: "retry"; error: string; alone: GradeJobPayload | null }
  /** No verdict and no job left. */
  | { kind: "exhausted"; error: string };

/**
 * Reads answers' outcomes off their last grade jobs, each batch job's payload and result parsed
 * once however many of its answers are read (a batch result holds 64 grades).
 */
export function createGradeReader(policy: RetryPolicy) {
  const batches = new Map<string, { payload: GradeBatchJobPayload | null; outcomes: Map<string, BatchItemOutcome> }>();
  const batchOf = (job: GradeJobRow) => {
    const known = batches.get(job.id);
    if (known) return known;
    const parsed = parseJobPayload("grade-batch", job.payload);
    const payload = parsed.ok ? parsed.payload : null;
    const read = { payload, outcomes: batchItemOutcomes(job, payload ? payload.items.map((i) => i.key) : []) };
    batches.set(job.id, read);
    return read;
  };

  /** What the answer `key`'s last job `job` says about it, batch or single. */
  function outcome(job: GradeJobRow, key: string): BatchItemOutcome {
    if (job.type === "grade-batch") {
      const batch = batchOf(job);
      const known = batch.outcomes.get(key);
      if (known) return known;
      // An unreadable payload names no item: the batch's own reason (its state, its error) stands for each.
      return batch.payload
        ? { status: "error", error: "not an item of its batch" }
        : (batchItemOutcomes(job, [key]).get(key) ?? { status: "error", error: "not an item of its batch" });
    }
    const grade = job.state === "succeeded" ? parseJobResult("grade", job.result) : null;
    if (!grade)
      return {
        status: "error",
        error:
          job.state === "succeeded"
            ? "grade job result is not a GradeResult"
            : `grade job ${job.state} (${job.terminalReason ?? "?"}): ${job.error ?? ""}`,
      };
    if (policy.retryGraderInfraError && grade.verdict === "infra_error")
      return { status: "error", error: `grader infra_error: ${grade.reasons.join("; ")}` };
    return { status: "graded", grade };
  }

  /** The single grade payload of the answer as its last job holds it (a batch's item, or the single job's own). */
  function alonePayload(job: GradeJobRow, key: string): GradeJobPayload | null {
    if (job.type === "grade-batch") {
      const { payload } = batchOf(job);
      return payload ? gradePayloadOfItem(payload, key) : null;
    }
    const parsed = parseJobPayload("grade", job.payload);
    return parsed.ok ? parsed.payload : null;
  }

  return {
    outcome,
    /** `jobsTried`: the jobs this answer has had, `job` the last of them. */
    step(job: GradeJobRow, key: string, jobsTried: number): GradeStep {
      const o = outcome(job, key);
      if (o.status === "graded") return { kind: "graded", grade: o.grade };
      if (jobsTried < policy.maxJobs) return { kind: "retry", error: o.error, alone: alonePayload(job, key) };
      return { kind: "exhausted", error: o.error };
    },
  };
}

/** One answer to grade alone: its key, its single payload and the dedupe key naming this attempt. */
export type RetryAlone = { key: string; payload: GradeJobPayload; dedupeKey: string };

/** Enqueues the retries alone, one `grade` job per answer, each linked to its answer. */
export async function enqueueRetriesAlone(
  services: Pick<Services, "db" | "queue">,
  owner: GradingOwner,
  retries: readonly RetryAlone[],
): Promise<void> {
  if (retries.length === 0) return;
  const created = await services.queue.enqueueMany(
    retries.map((r) => ({
      type: "grade" as const,
      ...(owner.experimentId ? { experimentId: owner.experimentId } : {}),
      dedupeKey: r.dedupeKey,
      maxDurationS: ALONE_MAX_DURATION_S,
      payload: r.payload,
    })),
  );
  for (const [i, r] of retries.entries()) {
    const job = created[i];
    if (job) await owner.link(services.db, [r.key], job.id);
  }
}
