import { listEvaluations, noVerdictGenerations, saveSelection, type Db } from "@agentlab/db";
import {
  assertSameProtocol,
  bestEpochPerSeed,
  modelKey,
  protocolsByModel,
  selectByDev,
  type DevCandidate,
  type ExperimentConfig,
  type ModelRef,
} from "@agentlab/core";
import type { StageCtx, StageResult } from "./context";

// `select`: the dev decision (base or one adapter) from the stored dev evaluations.

/**
 * Dev pass counts of every candidate, from the stored evaluations, over the dev tasks that hold a
 * verdict for every candidate: a task whose grading failed for one model is excluded for all of
 * them (and counted), so no infra error reads as a model failure.
 */
async function devCandidates(db: Db, experimentId: string, config: ExperimentConfig): Promise<DevCandidate[]> {
  const all = await listEvaluations(db, { experimentId, split: "dev" });
  const excluded = new Set(
    (await noVerdictGenerations(db, experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId),
  );
  const rows = all.filter((r) => !excluded.has(r.taskId));
  const counts = new Map<string, { n: number; passed: number }>();
  for (const r of rows) {
    const c = counts.get(r.modelKey) ?? { n: 0, passed: 0 };
    c.n += 1;
    c.passed += r.verdict === "pass" ? 1 : 0;
    counts.set(r.modelKey, c);
  }
  const out: DevCandidate[] = [];
  const base = counts.get("base");
  if (base) out.push({ ref: { model: "base" }, ...base });
  config.seeds.forEach((seed, seedIndex) => {
    for (let epoch = 1; epoch <= config.training.epochs; epoch++) {
      const c = counts.get(modelKey({ model: "adapter", seed, seedIndex, epoch }));
      if (c) out.push({ ref: { model: "adapter", seed, seedIndex, epoch }, ...c });
    }
  });
  return out;
}

export async function selectStage(c: StageCtx): Promise<StageResult> {
  // One protocol for every dev evaluation: selection never compares runs made under different ones.
  assertSameProtocol(
    protocolsByModel(await listEvaluations(c.services.db, { experimentId: c.experimentId, split: "dev" })),
  );
  const decision = selectByDev(await devCandidates(c.services.db, c.experimentId, c.config));
  const stored = await saveSelection(c.services.db, c.experimentId, decision as unknown as Record<string, unknown>);
  const excluded = new Set(
    (await noVerdictGenerations(c.services.db, c.experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId),
  );
  return {
    state: "succeeded",
    output: { selected: stored.selected, outcome: stored.outcome, devTasksExcludedNoVerdict: excluded.size },
  };
}

export async function testModels(c: StageCtx): Promise<ModelRef[]> {
  const seeds = bestEpochPerSeed(await devCandidates(c.services.db, c.experimentId, c.config)).map((d) => d.ref);
  return [{ model: "base" }, ...seeds];
}
