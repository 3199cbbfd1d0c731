import { taskFingerprint, type GradeResult } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { contracted } from "./contract";
import type { JobHandler } from "./types";

// `grade` jobs: one candidate against one task. The grader (and its warm sandboxes) belongs to
// the agent and is shared by every job; the agent refuses to grade when its self-test failed.
// An interrupted grade (shutdown, cancel) is infra_error: the queue retries it, never judges it.

export function makeGradeHandler(grader: Grader): JobHandler {
  // The reference's test ids per task fingerprint: computed once per agent, not once per candidate.
  const referenceIds = new Map<string, readonly string[]>();
  return contracted("grade", async (ctx, payload) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to grade" };
    const { task, candidate, limits, isolation } = payload;
    const key = `${taskFingerprint(task)}:${isolation}`;
    const signal = ctx.signal;
    let expected = payload.expectedTestIds ?? referenceIds.get(key) ?? null;
    if (!expected) {
      const ref = await grader.referenceIds(task, limits, { isolation, signal });
      if (ref.result.verdict === "infra_error") return { reason: "infra_error", error: ref.result.reasons.join("; ") };
      if (ref.result.verdict !== "pass") {
        return {
          reason: "user_error",
          error: `the task's reference does not pass (${ref.result.verdict}); cannot grade against it`,
          result: { reference: ref.result },
        };
      }
      expected = ref.ids;
      referenceIds.set(key, ref.ids);
    }
    const result: GradeResult = await grader.grade(task, candidate, {
      expectedIds: expected,
      limits,
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
