import type { StageRow } from "@agentlab/db";
import {
  parseStageOutput,
  type ExperimentConfig,
  type StageDef,
  type StageKind,
  type StageOutputs,
} from "@agentlab/core";
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
/** A handler of kind K records that kind's output (core STAGE_OUTPUTS). */
export type StageResult<K extends StageKind = StageKind> = {
  state: "running" | "succeeded";
  output: StageOutputs[K];
  jobIds?: string[];
};
export type StageHandler<K extends StageKind> = (c: StageCtx) => Promise<StageResult<K>>;
/** One handler per stage kind: a kind without a handler does not compile. */
export type StageRegistry = { readonly [K in StageKind]: StageHandler<K> };

/** What the stage `key` (of kind `kind`) recorded, parsed by its schema; undefined before its first step. */
export const recordedOutput = <K extends StageKind>(c: StageCtx, key: string, kind: K): StageOutputs[K] | undefined =>
  parseStageOutput(kind, key, c.rows.get(key)?.output);

/** What this handler's own stage recorded so far. */
export const ownOutput = <K extends StageKind>(c: StageCtx, kind: K): StageOutputs[K] | undefined =>
  parseStageOutput(kind, c.stage.key, c.row.output);
