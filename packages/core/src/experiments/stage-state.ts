import type { ExperimentState, StageState } from "./stages";

// A stage's state as pages and the CLI show it, derived from the experiment's state and the stage
// row in one place: a canceled or failed experiment leaves its unfinished stage rows as they were
// (running, pending), and those must never read "running" once nothing advances them.

export type ShownStageState = StageState | "canceled" | "stopped" | "not run";

export function shownStageState(experiment: ExperimentState, stage: StageState): ShownStageState {
  if (experiment === "running" || experiment === "succeeded") return stage;
  if (stage === "pending") return "not run";
  if (stage === "running") return experiment === "canceled" ? "canceled" : "stopped";
  return stage;
}
