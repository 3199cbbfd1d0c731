import type { StageRow } from "@agentlab/db";
import type { ExperimentConfig, StageDef, StageKind } from "@agentlab/core";
import type { Services } from "../../services";

// What every stage handler gets and returns. Handlers are re-entrant: each reads what its stage
// already recorded and does the next step, so a crash at any point resumes without duplicate jobs.

export type StageCtx = {
  services: Services;
  experimentId: string;
  config: ExperimentConfig;
  stage: StageDef;
  row: StageRow;
  rows: Map<string, StageRow>;
};
export type StageResult = { state: "running" | "succeeded"; output: Record<string, unknown>; jobIds?: string[] };
export type StageHandler = (c: StageCtx) => Promise<StageResult>;
/** One handler per stage kind: a kind without a handler does not compile. */
export type StageRegistry = { readonly [K in StageKind]: StageHandler };
