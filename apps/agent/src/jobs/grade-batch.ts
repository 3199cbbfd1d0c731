import type { GradeBatchItemResult, GradeVerdict, JobPayload } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { ReferenceIds } from "../grading/reference-ids";
import { contracted } from "./contract";
import { makeGradeHandler } from "./grade";
import type { JobContext, JobHandler } from "./types";

// `grade-batch` jobs: many candidates, possibly of several tasks, graded by the agent's
// warm grader with one verdict per item. Items start in their order, as many at once as the
// grader has warm sandboxes (a batch alone on an agent still uses all of them), and the result
// lists them in their order. An item that gets no verdict (the grader's infra_error, a broken
// reference) is reported as such and the rest are still graded; the sender retries it alone.
// An abort stops starting items; the items graded before it are reported with the failure, so
// the sender keeps their verdicts and regrades only the rest.

type Payload = JobPayload<"grade-batch">;
type Item = Payload["items"][number];

async function gradeItem(
  grader: Grader,
  refs: ReferenceIds,
  tasks: Map<string, Payload["tasks"][number]>,
  item: Item,
  signal: AbortSignal,
): Promise<GradeBatchItemResult> {
  const entry = tasks.get(item.task);
  // The payload's contract ties every item to a task of the batch; this is the type's guard.
  if (!entry) return { key: item.key, status: "error", reason: "user_error", error: "names no task", grade: null };
  const { task } = entry;
  const ref = await refs.get(task, {
    isolation: item.isolation,
    limits: item.limits,
    given: entry.expectedTestIds,
    fingerprint: entry.fingerprint,
    signal,
  });
  if (!ref.ok)
    return {
      key: item.key,
      status: "error",
      reason: ref.kind === "infra_error" ? "infra_error" : "user_error",
      error: ref.error,
      grade: null,
    };
  const result = await grader.grade(task, item.candidate, {
    expectedIds: ref.ids,
    expectedSkips: ref.skipped,
    limits: ref.limits,
    isolation: item.isolation,
    signal,
  });
  if (result.verdict === "infra_error")
    return { key: item.key, status: "error", reason: "infra_error", error: result.reasons.join("; "), grade: result };
  return { key: item.key, status: "graded", grade: { ...result, expectedTestIds: [...ref.ids] } };
}

function interrupted(ctx: JobContext, done: number, total: number) {
  const why = ctx.abortReason() ?? "aborted";
  const error = `grade batch interrupted (${why}) after ${done} of ${total} items`;
  if (why === "canceled") return { reason: "canceled" as const, error };
  if (why === "timeout") return { reason: "timeout" as const, error };
  return { reason: "infra_error" as const, error };
}

export function makeGradeBatchHandler(grader: Grader, refs: ReferenceIds): JobHandler {
  return contracted("grade-batch", async (ctx, payload) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to grade" };
    const { items } = payload;
    const tasks = new Map(payload.tasks.map((t) => [t.fingerprint, t]));
    const results: (GradeBatchItemResult | undefined)[] = items.map(() => undefined);
    const verdicts: Partial<Record<GradeVerdict | "error", number>> = {};
    let next = 0;
    let done = 0;
    const lane = async () => {
      for (let i = next++; i < items.length && !ctx.signal.aborted; i = next++) {
        const item = items[i];
        if (!item) break;
        const r = await gradeItem(grader, refs, tasks, item, ctx.signal);
        results[i] = r;
        done += 1;
        const v = r.status === "graded" ? r.grade.verdict : "error";
        verdicts[v] = (verdicts[v] ?? 0) + 1;
        ctx.progress({ event: "items", done, total: items.length, verdicts: { ...verdicts } });
        if (r.status === "error") ctx.log.warn({ key: r.key, error: r.error }, "batch item without a verdict");
      }
    };
    await Promise.all(Array.from({ length: Math.min(grader.workers, items.length) }, lane));
    const listed = results.filter((r): r is GradeBatchItemResult => r !== undefined);
    ctx.log.info({ items: items.length, done, verdicts }, "graded batch");
    if (ctx.signal.aborted) return { ...interrupted(ctx, done, items.length), result: { items: listed } };
    return { reason: "succeeded", result: { items: listed } };
  });
}

/** Both grade job handlers of one agent, sharing its reference-id cache (what tests and benches run). */
export const gradeJobHandlers = (grader: Grader, refs = new ReferenceIds(grader)): Record<string, JobHandler> => ({
  grade: makeGradeHandler(grader, refs),
  "grade-batch": makeGradeBatchHandler(grader, refs),
});
