import type { GradeResult } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { ReferenceIds } from "../grading/reference-ids";
import { contracted } from "./contract";
import type { JobHandler } from "./types";

// `grade` jobs: one candidate against one task. The grader (and its warm sandboxes) belongs to
// the agent and is shared by every job; the agent refuses to grade when its self-test failed.
// An interrupted grade (shutdown, cancel) is infra_error: the queue retries it, never judges it.

export function makeGradeHandler(grader: Grader, refs = new ReferenceIds(grader)): JobHandler {
  return contracted("grade", async (ctx, payload) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to grade" };
    const { task, candidate, limits, isolation } = payload;
    const signal = ctx.signal;
    const ref = await refs.get(task, { isolation, limits, given: payload.expectedTestIds, signal });
    if (!ref.ok)
      return ref.kind === "infra_error"
        ? { reason: "infra_error", error: ref.error }
        : { reason: "user_error", error: ref.error, result: { reference: ref.reference } };
    const expected = ref.ids;
    const result: GradeResult = await grader.grade(task, candidate, {
      expectedIds: expected,
      expectedSkips: ref.skipped,
      limits: ref.limits,
      isolation,
      signal,
    });
    ctx.log.info(
      {
        taskId: task.id,
        verdict: result.verdict,
        unsandboxed: result.unsandboxed,
        wallMs: Math.round(result.wallTimeMs),
      },
      "graded",
    );
    if (result.verdict === "infra_error") return { reason: "infra_error", error: result.reasons.join("; "), result };
    // The result is the GradeResult itself (what the teacher and experiment runners parse).
    return { reason: "succeeded", result: { ...result, expectedTestIds: [...expected] } };
  });
}
