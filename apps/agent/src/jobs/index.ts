import type { JobType } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import { ReferenceIds } from "../grading/reference-ids";
import type { SandboxConfig } from "../sandbox/types";
import { makeAuditHandler } from "./audit";
import { makeGradeHandler } from "./grade";
import { makeGradeBatchHandler } from "./grade-batch";
import { refuseShellJob, shellJob } from "./shell";
import { trainJob, type TrainRanks } from "./train";
import { dpoJob } from "./dpo";
import { grpoJob } from "./grpo";
import { scoreJob } from "./score";
import { generateJob } from "./generate";
import { tokenizeJob } from "./tokenize";
import { inspectModelJob } from "./inspect-model";
import { tinyModelJob } from "./tiny-model";
import { makeEpisodeHandler } from "../episodes/job";
import type { JobHandler } from "./types";

// Job type → handler, each behind its type's contract (./contract.ts). A type missing here is refused by this agent as infra_error.
// `allowShellJobs`: the agent's explicit opt-in; without it a shell job that arrives is refused.
export function jobHandlers(opts: {
  graceMs: number;
  allowShellJobs?: boolean;
  grading?: { grader: Grader; sandbox: SandboxConfig };
  /** The box's GPUs and its AGENTLAB_TRAIN_CPU_RANKS opt-in (multi-rank train jobs); none when absent. */
  training?: TrainRanks;
}): Record<string, JobHandler> {
  const handlers: { [T in JobType]?: JobHandler } = {
    shell: opts.allowShellJobs === true ? shellJob(opts.graceMs) : refuseShellJob,
    train: trainJob(opts.graceMs, opts.training),
    dpo: dpoJob(opts.graceMs),
    score: scoreJob(opts.graceMs),
    generate: generateJob(opts.graceMs),
    tokenize: tokenizeJob(opts.graceMs),
    "inspect-model": inspectModelJob(opts.graceMs),
    "tiny-model": tinyModelJob(opts.graceMs),
    ...(opts.grading ? gradingHandlers(opts.grading, opts.graceMs) : {}),
  };
  return handlers;
}

// One reference-id cache for both kinds of grade job: a task's reference runs once per agent.
function gradingHandlers(
  grading: { grader: Grader; sandbox: SandboxConfig },
  graceMs: number,
): { [T in JobType]?: JobHandler } {
  const refs = new ReferenceIds(grading.grader);
  return {
    grade: makeGradeHandler(grading.grader, refs),
    "grade-batch": makeGradeBatchHandler(grading.grader, refs),
    audit: makeAuditHandler(grading.grader, grading.sandbox),
    episode: makeEpisodeHandler({ ...grading, refs }),
    // online RL needs the judge for its reward: only an agent that grades runs it
    grpo: grpoJob(graceMs, { grader: grading.grader, refs }),
  };
}
