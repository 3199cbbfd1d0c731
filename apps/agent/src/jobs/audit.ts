import { auditTask } from "../grading/audit";
import type { Grader } from "../grading/grader";
import { crossFileSandboxed } from "../grading/cross-file";
import { mutantsSandboxed } from "../grading/mutants";
import type { SandboxConfig } from "../sandbox/types";
import { contracted } from "./contract";
import type { JobHandler } from "./types";

// `audit` jobs: task admission (reference 3× pass, buggy fails hidden, mutation score, cross-file
// uses). Mutants and cross-file uses are computed inside the sandbox because task files come from users.

export function makeAuditHandler(grader: Grader, cfg: SandboxConfig): JobHandler {
  return contracted("audit", async (ctx, p) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to audit" };
    const result = await auditTask(grader, p.task, {
      referenceRuns: p.referenceRuns,
      maxMutants: p.maxMutants,
      limits: p.limits,
      mutate: (source, max) => mutantsSandboxed(cfg, source, max),
      crossFile: (task) => crossFileSandboxed(cfg, task),
      signal: ctx.signal,
      ...(p.inProcessReason ? { inProcessReason: p.inProcessReason } : {}),
    });
    // An audit the agent interrupted is incomplete, not a finding about the task: requeue it.
    if (ctx.signal.aborted)
      return { reason: "infra_error", error: `audit interrupted: ${String(ctx.abortReason() ?? "aborted")}` };
    ctx.log.info(
      { taskId: p.task.id, status: result.status, score: result.mutationScore, isolation: result.isolation },
      "audited",
    );
    return { reason: "succeeded", result: { audit: result } };
  });
}
