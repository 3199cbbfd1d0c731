import type { GradeBatchItemResult, GradeResult, GradeVerdict, JobPayload } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { ReferenceIds } from "../grading/reference-ids";
import { contracted } from "./contract";
import { makeGradeHandler } from "./grade";
import type { JobContext, JobHandler } from "./types";

// `grade-batch` jobs: many candidates, possibly of several tasks, graded by the agent's
// warm grader with one verdict per item. Several items of one task are graded in one judge
// session (sessionChunks: the tests collected once); chunks start in their order, as many at
// once as the grader has warm sandboxes (a batch alone on an agent still uses all of them), and
// the result lists the items in their order. An item that gets no verdict (the grader's infra_error, a broken
// reference) is reported as such and the rest are still graded; the sender retries it alone.
// An abort stops starting items; the items graded before it are reported with the failure, so
// the sender keeps their verdicts and regrades only the rest.

type Payload = JobPayload<"grade-batch">;
type Item = Payload["items"][number];

/** Items graded together: one item, or several of one task (same isolation and limits) in a judge session. */
type Chunk = { indices: number[] };

/** The most candidates one judge session grades. */
const SESSION_MAX = 16;

/**
 * Items of one task in the judge (same limits) form judge sessions (the tests collected once
 * for all of them); a task with fewer items than that, or in-process items, go one by one. When
 * there are fewer tasks than sandboxes a task's items are split so that every sandbox works.
 */
export function sessionChunks(items: readonly Item[], workers: number): Chunk[] {
  const groups = new Map<string, number[]>();
  const chunks: { first: number; chunk: Chunk }[] = [];
  items.forEach((item, i) => {
    if (item.isolation !== "judge") {
      chunks.push({ first: i, chunk: { indices: [i] } });
      return;
    }
    const key = `${item.task}\u0000${JSON.stringify(item.limits ?? {})}`;
    const g = groups.get(key);
    if (g) g.push(i);
    else groups.set(key, [i]);
  });
  const spread = Math.max(1, Math.ceil(workers / Math.max(1, groups.size)));
  for (const g of groups.values()) {
    const size = Math.min(SESSION_MAX, Math.max(1, Math.ceil(g.length / spread)));
    for (let k = 0; k < g.length; k += size) {
      const indices = g.slice(k, k + size);
      chunks.push({ first: indices[0] ?? 0, chunk: { indices } });
    }
  }
  return chunks.sort((x, y) => x.first - y.first).map((c) => c.chunk);
}

async function gradeChunk(
  grader: Grader,
  refs: ReferenceIds,
  tasks: Map<string, Payload["tasks"][number]>,
  items: Item[],
  signal: AbortSignal,
  done: (result: GradeBatchItemResult, index: number) => void,
): Promise<void> {
  const first = items[0];
  if (!first) return;
  const entry = tasks.get(first.task);
  const failAll = (r: Omit<GradeBatchItemResult & { status: "error" }, "key">) =>
    items.forEach((it, k) => done({ ...r, key: it.key }, k));
  // The payload's contract ties every item to a task of the batch; this is the type's guard.
  if (!entry) return failAll({ status: "error", reason: "user_error", error: "names no task", grade: null });
  const { task } = entry;
  const ref = await refs.get(task, {
    isolation: first.isolation,
    limits: first.limits,
    given: entry.expectedTestIds,
    fingerprint: entry.fingerprint,
    signal,
  });
  if (!ref.ok)
    return failAll({
      status: "error",
      reason: ref.kind === "infra_error" ? "infra_error" : "user_error",
      error: ref.error,
      grade: null,
    });
  const itemResult = (item: Item, result: GradeResult): GradeBatchItemResult =>
    result.verdict === "infra_error"
      ? { key: item.key, status: "error", reason: "infra_error", error: result.reasons.join("; "), grade: result }
      : { key: item.key, status: "graded", grade: { ...result, expectedTestIds: [...ref.ids] } };
  const opts = {
    expectedIds: ref.ids,
    expectedSkips: ref.skipped,
    limits: ref.limits,
    isolation: first.isolation,
    signal,
  };
  if (items.length === 1) {
    done(itemResult(first, await grader.grade(task, first.candidate, opts)), 0);
    return;
  }
  await grader.gradeSession(
    task,
    items.map((it) => it.candidate),
    {
      ...opts,
      onResult: (k, result) => {
        const item = items[k];
        if (item) done(itemResult(item, result), k);
      },
    },
  );
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
    const chunks = sessionChunks(items, grader.workers);
    let next = 0;
    let done = 0;
    const lane = async () => {
      for (let c = next++; c < chunks.length && !ctx.signal.aborted; c = next++) {
        const chunk = chunks[c];
        if (!chunk) break;
        const own = chunk.indices.map((i) => items[i]).filter((it): it is Item => it !== undefined);
        await gradeChunk(grader, refs, tasks, own, ctx.signal, (r, k) => {
          const i = chunk.indices[k];
          if (i === undefined || results[i]) return;
          results[i] = r;
          done += 1;
          const v = r.status === "graded" ? r.grade.verdict : "error";
          verdicts[v] = (verdicts[v] ?? 0) + 1;
          ctx.progress({ event: "items", done, total: items.length, verdicts: { ...verdicts } });
          if (r.status === "error") ctx.log.warn({ key: r.key, error: r.error }, "batch item without a verdict");
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(grader.workers, chunks.length) }, lane));
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
