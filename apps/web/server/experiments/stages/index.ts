import type { StageCtx, StageRegistry, StageResult } from "./context";
import { collectStage, verifyStage } from "./collect";
import { datasetStage } from "./data";
import { devStage, testStage } from "./evaluation";
import { reportStage } from "./report";
import { selectStage } from "./select";
import { trainStage } from "./train";
import { dpoStartStage } from "./dpo-start";
import { sampleStage } from "./sample";
import { pairsStage } from "./pairs";
import { dpoStage } from "./dpo";
import { grpoStage } from "./grpo";
import { grpoSampleStage } from "./grpo-sample";

export type { StageCtx, StageResult } from "./context";

// The experiment's stages (core stagePlan) → one handler per kind. collect and verify build the
// SFT data with the teacher module; with config.datasetId an existing snapshot is reused and they
// have nothing to do.
const reused = async (reusedDatasetId: string) => ({ state: "succeeded" as const, output: { reusedDatasetId } });

export const STAGE_HANDLERS: StageRegistry = {
  collect: (c) => (c.config.datasetId ? reused(c.config.datasetId) : collectStage(c)),
  verify: (c) => (c.config.datasetId ? reused(c.config.datasetId) : verifyStage(c)),
  dataset: datasetStage,
  train: trainStage,
  dev_eval: devStage,
  select: selectStage,
  test_eval: testStage,
  report: reportStage,
  dpo_start: dpoStartStage,
  sample: sampleStage,
  pairs: pairsStage,
  dpo: dpoStage,
  grpo_sample: grpoSampleStage,
  grpo: grpoStage,
};

export const runStage = (c: StageCtx): Promise<StageResult> => STAGE_HANDLERS[c.stage.kind](c);
