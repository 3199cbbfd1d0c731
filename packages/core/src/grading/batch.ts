import { sha256Hex } from "../hash";
import { GradeBatchJobResult, type GradeJobResult } from "../jobs/contracts";
import { taskFingerprint } from "../tasks/fingerprint";
import type { TaskSpec } from "../tasks/spec";
import {
  DEFAULT_GRADE_LIMITS,
  GRADE_BATCH_MAX_ITEMS,
  type CandidateFile,
  type GradeBatchJobPayload,
  type GradeBatchTask,
  type GradeJobPayload,
  type GradeLimits,
  type GradingIsolation,
} from "./schemas";

// Building `grade-batch` payloads and reading their results, shared by the experiment
// evaluation, teacher collections and the eval bench, so all three batch and key the same way.

export type GradeBatchInput = {
  key: string;
  task: TaskSpec;
  candidate: CandidateFile[];
  isolation: GradingIsolation;
  limits?: Partial<GradeLimits>;
};

/** Items in their order, cut into payloads of at most `max`; each payload carries each of its tasks once. */
export function gradeBatchPayloads(
  items: readonly GradeBatchInput[],
  max = GRADE_BATCH_MAX_ITEMS,
): GradeBatchJobPayload[] {
  const size = Math.max(1, Math.min(max, GRADE_BATCH_MAX_ITEMS));
  const fingerprints = new Map<TaskSpec, string>();
  const fingerprintOf = (t: TaskSpec) => {
    const known = fingerprints.get(t);
    if (known) return known;
    const fp = taskFingerprint(t);
    fingerprints.set(t, fp);
    return fp;
  };
  const out: GradeBatchJobPayload[] = [];
  for (let i = 0; i < items.length; i += size) {
    const tasks = new Map<string, GradeBatchTask>();
    const chunk = items.slice(i, i + size).map((it) => {
      const fp = fingerprintOf(it.task);
      if (!tasks.has(fp)) tasks.set(fp, { fingerprint: fp, task: it.task });
      return { key: it.key, task: fp, candidate: it.candidate, isolation: it.isolation, limits: it.limits ?? {} };
    });
    out.push({ tasks: [...tasks.values()], items: chunk });
  }
  return out;
}

/** A stable name for a batch (its dedupe key's tail): the same items give the same job after a restart. */
export const gradeBatchId = (keys: readonly string[]): string => sha256Hex([...keys].sort().join("\n")).slice(0, 32);

/** The single `grade` payload of one item of a batch: how an item without a verdict is retried alone. */
export function gradePayloadOfItem(batch: GradeBatchJobPayload, key: string): GradeJobPayload | null {
  const item = batch.items.find((i) => i.key === key);
  const task = item && batch.tasks.find((t) => t.fingerprint === item.task);
  if (!item || !task) return null;
  return {
    task: task.task,
    candidate: item.candidate,
    limits: item.limits,
    isolation: item.isolation,
    ...(task.expectedTestIds ? { expectedTestIds: task.expectedTestIds } : {}),
  };
}

export type BatchItemOutcome = { status: "graded"; grade: GradeJobResult } | { status: "error"; error: string };

/**
 * What a finished batch job says about each item, by key. A failed job still counts for the items
 * its partial result graded (an interrupted batch reports them); every other item is an error
 * with the job's own reason, so the caller retries it alone.
 */
export function batchItemOutcomes(
  job: { state: string; result: unknown; error: string | null },
  keys: readonly string[],
): Map<string, BatchItemOutcome> {
  const parsed = GradeBatchJobResult.safeParse(job.result);
  const items = new Map(parsed.success ? parsed.data.items.map((i) => [i.key, i]) : []);
  const why =
    job.state === "succeeded"
      ? parsed.success
        ? "the batch's result has no entry for this item"
        : "the batch's result does not match its contract"
      : `grade batch ${job.state}: ${job.error ?? "no error given"}`;
  const out = new Map<string, BatchItemOutcome>();
  for (const key of keys) {
    const item = items.get(key);
    if (item?.status === "graded") out.set(key, { status: "graded", grade: item.grade });
    else out.set(key, { status: "error", error: item ? `${item.reason}: ${item.error}` : why });
  }
  return out;
}

/**
 * The batch's max_duration: every item and every task's reference run at its wall limit, twice
 * over (start-up, a candidate restart), as if one after another; plus a margin for the job.
 */
export function gradeBatchMaxDurationS(batch: GradeBatchJobPayload): number {
  const wall = (l: Partial<GradeLimits> | undefined) => 2 * (l?.wallTimeoutS ?? DEFAULT_GRADE_LIMITS.wallTimeoutS);
  const items = batch.items.reduce((s, i) => s + wall(i.limits), 0);
  return Math.ceil(300 + items + batch.tasks.length * wall(undefined));
}
