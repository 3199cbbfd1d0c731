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

// `select`: the dev decision (base or one adapter) from the stored dev evaluations.

/** Dev pass counts of every candidate (core devCandidates) from the stored dev verdicts. */
async function storedDevCandidates(db: Db, experimentId: string, config: ExperimentConfig): Promise<DevCandidate[]> {
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
  const seeds = bestEpochPerSeed(await storedDevCandidates(c.services.db, c.experimentId, c.config)).map((d) => d.ref);
  return [{ model: "base" }, ...seeds];
}
