import type { GradeLimits, GradeResult, GradingIsolation } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import type { ReferenceIds } from "../grading/reference-ids";
import type { SandboxConfig } from "../sandbox/types";
import type { ContentStore } from "./store";

/** What an environment runs on: the agent's sandbox and judge, a scratch folder, the job's store. */
export type EnvironmentDeps = {
  sandbox: SandboxConfig;
  grader: Grader;
  refs: ReferenceIds;
  /** Parent of the workspaces and the sandbox's copies; removed by the caller. */
  scratch: string;
  store: ContentStore;
  isolation: GradingIsolation;
  limits: Partial<GradeLimits>;
  expectedTestIds?: readonly string[];
  signal?: AbortSignal;
  /**
   * Verdicts by workspace tree hash, shared by the continuations of one job: the same files get
   * the same judge's verdict, so K continuations that end on one tree are graded once.
   */
  grades?: Map<string, GradeResult>;
  now?: () => number;
};

/** No verdict could be had: the sandbox or judge failed (`infra_error`, retried) or the task's reference fails (`user_error`). */
export class EpisodeInfraError extends Error {
  constructor(
    message: string,
    readonly reason: "infra_error" | "user_error",
  ) {
    super(message);
  }
}
