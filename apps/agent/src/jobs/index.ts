import type { Grader } from "../grading/grader";
import type { SandboxConfig } from "../sandbox/types";
import { makeAuditHandler } from "./audit";
import { makeGradeHandler } from "./grade";
import { shellJob } from "./shell";
import type { JobHandler } from "./types";

// Job type → handler. A type missing here is refused by this agent as infra_error.
export function jobHandlers(opts: { graceMs: number; grading?: { grader: Grader; sandbox: SandboxConfig } }): Record<string, JobHandler> {
  return {
    shell: shellJob(opts.graceMs),
    ...(opts.grading ? { grade: makeGradeHandler(opts.grading.grader), audit: makeAuditHandler(opts.grading.grader, opts.grading.sandbox) } : {}),
  };
}
