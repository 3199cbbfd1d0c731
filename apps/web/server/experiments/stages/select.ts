import { listEvaluations, noVerdictGenerations, saveSelection, type Db } from "@agentlab/db";
import {
  assertSameProtocol,
  bestEpochPerSeed,
  devCandidates,
  protocolsByModel,
  selectByDev,
  type DevCandidate,
  type ExperimentConfig,
  type ModelRef,
} from "@agentlab/core";
import type { StageCtx, StageResult } from "./context";

// `select`: the dev decision (base, one SFT adapter or, with sft+dpo, one DPO adapter) from the
// stored dev evaluations (core selectByDev: a tie keeps base before SFT before DPO).

/** Dev pass counts of every candidate (core devCandidates) from the stored dev verdicts. */
export async function storedDevCandidates(
  db: Db,
  experimentId: string,
  config: ExperimentConfig,
): Promise<DevCandidate[]> {
  const rows = await listEvaluations(db, { experimentId, split: "dev" });
  const noVerdict = new Set(
    (await noVerdictGenerations(db, experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId),
  );
  return devCandidates(rows, noVerdict, config);
}

export async function selectStage(c: StageCtx): Promise<StageResult<"select">> {
  // One protocol for every dev evaluation: selection never compares runs made under different ones.
  assertSameProtocol(
    protocolsByModel(await listEvaluations(c.services.db, { experimentId: c.experimentId, split: "dev" })),
  );
  const decision = selectByDev(await storedDevCandidates(c.services.db, c.experimentId, c.config));
  const stored = await saveSelection(c.services.db, c.experimentId, decision);
  const excluded = new Set(
    (await noVerdictGenerations(c.services.db, c.experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId),
  );
  return {
    state: "succeeded",
    output: { selected: stored.selected, outcome: stored.outcome, devTasksExcludedNoVerdict: excluded.size },
  };
}

export async function testModels(c: StageCtx): Promise<ModelRef[]> {
  const candidates = await storedDevCandidates(c.services.db, c.experimentId, c.config);
  const seeds = bestEpochPerSeed(candidates).map((d) => d.ref);
  // sft+dpo: each seed's best DPO epoch too, so the report compares base, SFT and DPO on test.
  const dpo = bestEpochPerSeed(candidates, "dpo").map((d) => d.ref);
  // sft+grpo: each seed's best GRPO snapshot, so the report compares base, SFT and GRPO on test.
  const grpo = bestEpochPerSeed(candidates, "grpo").map((d) => d.ref);
  return [{ model: "base" }, ...seeds, ...dpo, ...grpo];
}
